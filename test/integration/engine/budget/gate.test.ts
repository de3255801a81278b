// The budget gate against a real HTTP round trip to a fake usage endpoint on 127.0.0.1, with a fake clock
// so hours of waiting take no time and every requested sleep can be asserted.
import { describe, expect, it } from 'vitest';
import { createBudgetGate, type BudgetGateOptions } from '../../../../src/engine/budget/gate.js';
import { readUsage } from '../../../../src/engine/budget/usage.js';
import type { Clock } from '../../../../src/engine/types.js';
import { startUsageServer, unreachableUsageUrl, usageBody, type UsageStep } from '../../../support/usage-server.js';
import { LoopExit } from '../../../../src/engine/errors.js';

const TOKEN = 'sk-ant-oat01-SECRET-gate-test-7f3a9c';
const T0 = new Date('2026-11-29T18:00:00Z');
const MIN = 60_000;

function fakeClock(start = T0): Clock & { sleeps: number[] } {
  let t = start.getTime();
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => new Date(t),
    async sleep(ms) {
      sleeps.push(ms);
      t += ms;
    },
  };
}

interface Harness {
  gate: ReturnType<typeof createBudgetGate>;
  clock: ReturnType<typeof fakeClock>;
  logs: string[];
  requests: { path: string; headers: Record<string, unknown> }[];
}

async function harness(
  script: UsageStep[] | string,
  options: Partial<BudgetGateOptions> = {},
  timeoutMs?: number,
): Promise<Harness> {
  const server = typeof script === 'string' ? null : await startUsageServer(script);
  const url = typeof script === 'string' ? script : server!.url;
  const clock = fakeClock();
  const logs: string[] = [];
  const gate = createBudgetGate({
    maxUsagePct: 80,
    wait: false,
    waitNextSession: false,
    allowUnknownUsage: false,
    clock,
    readUsage: () =>
      readUsage({ env: { RALPH_USAGE_URL: url, RALPH_USAGE_TOKEN: TOKEN }, timeoutMs, signal: options.signal }),
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
  });
  return { gate, clock, logs, requests: server?.requests ?? [] };
}

async function loopExit(p: Promise<unknown>): Promise<LoopExit> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LoopExit);
  const exit = err as LoopExit;
  expect(`${exit.message} ${exit.hint}`).not.toContain(TOKEN);
  return exit;
}

const at = (ms: number) => new Date(T0.getTime() + ms);

describe('budget gate: the ceiling', () => {
  it('under the ceiling: starts and continues, sending the token and the beta header', async () => {
    const h = await harness([{ body: usageBody(40, 10) }]);
    await h.gate.beforeStart();
    // Iteration 1 follows the start check at once: no second request for it.
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.requests).toHaveLength(1);
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.requests).toHaveLength(2);
    expect(h.requests[0].path).toBe('/api/oauth/usage');
    expect(h.requests[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(h.requests[0].headers['anthropic-beta']).toBe('oauth-2025-04-20');
    expect(h.clock.sleeps).toEqual([]);
    expect(h.logs.join('\n')).not.toContain(TOKEN);
  });

  it.each([
    ['the 5-hour window', usageBody(95, 10), /5-hour 95%/],
    ['the 7-day window', usageBody(10, 80), /7-day 80%/],
  ])('over the ceiling in %s at start: refuses with exit 2', async (_name, body, shown) => {
    const h = await harness([{ body }]);
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(2);
    expect(exit.message).toMatch(/over the 80% ceiling/);
    expect(exit.message).toMatch(shown);
    expect(exit.hint).toMatch(/--wait/);
    expect(h.requests).toHaveLength(1);
  });

  it('crossing the ceiling mid-run: the next beforeIteration says stop', async () => {
    const h = await harness([{ body: usageBody(50, 10) }, { body: usageBody(70, 10) }, { body: usageBody(85, 10) }]);
    await h.gate.beforeStart();
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(await h.gate.beforeIteration()).toBe('stop');
    expect(h.requests).toHaveLength(3);
    expect(h.logs.at(-1)).toMatch(/^warn: Claude usage at or over the 80% ceiling: 5-hour 85%.*stopping \(add --wait/);
  });

  it('without --max-usage or --wait-next-session, usage is never read', async () => {
    const h = await harness([{ body: usageBody(99, 99) }], { maxUsagePct: undefined });
    await h.gate.beforeStart();
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.requests).toHaveLength(0);
  });
});

describe('budget gate: fails closed', () => {
  it('unreachable endpoint: refuses to start with exit 2 and names --allow-unknown-usage', async () => {
    const h = await harness(await unreachableUsageUrl());
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(2);
    expect(exit.message).toMatch(/cannot read Claude usage: .*unreachable: ECONNREFUSED/);
    expect(exit.hint).toMatch(/--allow-unknown-usage/);
  });

  it('unreachable endpoint with --allow-unknown-usage: starts and continues with a warning', async () => {
    const h = await harness(await unreachableUsageUrl(), { allowUnknownUsage: true });
    await h.gate.beforeStart();
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(await h.gate.beforeIteration()).toBe('continue');
    // Nothing depends on the answer, so no retries (no sleeps) either.
    expect(h.clock.sleeps).toEqual([]);
    expect(h.logs).toHaveLength(3);
    expect(h.logs[0]).toMatch(
      /^warn: cannot read Claude usage: .*going on without the usage ceiling \(--allow-unknown-usage\)/,
    );
  });

  it.each([
    ['HTTP 500', [{ status: 500, body: 'upstream exploded' }], /HTTP 500: upstream exploded/],
    [
      'a 401 (expired login)',
      [{ status: 401, body: { type: 'error' } }],
      /refused the token \(HTTP 401\); run `claude` once/,
    ],
    ['a body that is not JSON', [{ body: '<html>captive portal</html>' }], /did not return JSON: <html>captive portal/],
    ['JSON of another shape', [{ body: { error: 'nope' } }], /neither five_hour nor seven_day/],
    [
      'a server that echoes the request',
      [{ status: 502, body: `bad gateway for Bearer ${TOKEN}` }],
      /HTTP 502: bad gateway for Bearer <token>/,
    ],
  ])('%s: exit 2 with the reason, never the token', async (_name, script, reason) => {
    const h = await harness(script as UsageStep[]);
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(2);
    expect(exit.message).toMatch(reason);
  });

  it('a slow endpoint times out: exit 2', async () => {
    const h = await harness([{ body: usageBody(1, 1), delayMs: 2000 }], {}, 200);
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(2);
    expect(exit.message).toMatch(/no answer within 200ms/);
  });

  it('mid-run, a blip is retried a minute later; a lasting failure stops the loop with exit 5', async () => {
    const ok = { body: usageBody(10, 10) };
    const h = await harness([ok, { status: 503 }, ok, { status: 503 }]);
    await h.gate.beforeStart();
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.clock.sleeps).toEqual([]);
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.clock.sleeps).toEqual([MIN]);
    const exit = await loopExit(h.gate.beforeIteration());
    expect(exit.code).toBe(5);
    expect(exit.hint).toMatch(/--allow-unknown-usage/);
    expect(h.clock.sleeps).toEqual([MIN, MIN, MIN]);
    expect(h.requests).toHaveLength(6);
  });
});

describe('budget gate: --wait and --wait-next-session (fake clock)', () => {
  it('over at start with --wait: re-checks every 5 minutes with a countdown, then starts', async () => {
    const reset = at(12 * MIN);
    const h = await harness(
      [
        { body: usageBody(95, 10, { fiveHour: reset }) },
        { body: usageBody(95, 10, { fiveHour: reset }) },
        { body: usageBody(3, 11) },
      ],
      { wait: true },
    );
    await h.gate.beforeStart();
    expect(h.clock.sleeps).toEqual([5 * MIN, 5 * MIN]);
    expect(h.requests).toHaveLength(3);
    expect(h.logs).toEqual([
      expect.stringMatching(
        /^info: .*5-hour 95%.*waiting \(--wait\): resets in 12m15s \(2026-11-29T18:12:00.000Z\), next check in 5m00s$/,
      ),
      expect.stringMatching(/waiting \(--wait\): resets in 7m15s .*next check in 5m00s$/),
    ]);
  });

  it('a reset closer than 5 minutes: sleeps just past it', async () => {
    const reset = at(2 * MIN);
    const h = await harness([{ body: usageBody(90, 10, { fiveHour: reset }) }, { body: usageBody(0, 10) }], {
      wait: true,
    });
    await h.gate.beforeStart();
    expect(h.clock.sleeps).toEqual([2 * MIN + 15_000]);
  });

  it('crossing mid-run with --wait: waits for the reset instead of stopping', async () => {
    const reset = at(7 * MIN);
    const h = await harness(
      [
        { body: usageBody(10, 10) },
        { body: usageBody(81, 10, { fiveHour: reset }) },
        { body: usageBody(81, 10, { fiveHour: reset }) },
        { body: usageBody(1, 10) },
      ],
      { wait: true },
    );
    await h.gate.beforeStart();
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(await h.gate.beforeIteration()).toBe('continue');
    expect(h.clock.sleeps).toEqual([5 * MIN, 2 * MIN + 15_000]);
    expect(h.requests).toHaveLength(4);
  });

  it('the 7-day window over: waits (in 5-minute steps) for its reset, not the 5-hour one', async () => {
    const h = await harness(
      [
        { body: usageBody(10, 99, { fiveHour: at(MIN), sevenDay: at(9 * MIN) }) },
        { body: usageBody(10, 99, { sevenDay: at(9 * MIN) }) },
        { body: usageBody(10, 40) },
      ],
      { wait: true },
    );
    await h.gate.beforeStart();
    expect(h.clock.sleeps).toEqual([5 * MIN, 4 * MIN + 15_000]);
  });

  it('--wait-next-session: sleeps until the current 5-hour block resets, then checks the ceiling', async () => {
    const reset = at(60 * MIN);
    const h = await harness([{ body: usageBody(97, 10, { fiveHour: reset }) }, { body: usageBody(0, 10) }], {
      waitNextSession: true,
    });
    await h.gate.beforeStart();
    expect(h.clock.sleeps).toEqual([...Array(12).fill(5 * MIN), 15_000]);
    expect(h.logs[0]).toMatch(/^info: waiting for the next 5-hour block \(--wait-next-session\): starts in 1h00m/);
    expect(h.logs).toHaveLength(13);
    expect(h.requests).toHaveLength(2);
  });

  it('--wait-next-session without --max-usage reads once; with no block in progress it starts at once', async () => {
    const h = await harness([{ body: usageBody(0, 10, { fiveHour: null }) }], {
      waitNextSession: true,
      maxUsagePct: undefined,
    });
    await h.gate.beforeStart();
    expect(h.clock.sleeps).toEqual([]);
    expect(h.requests).toHaveLength(1);
    expect(h.logs).toEqual(['info: no 5-hour block in progress; starting now (--wait-next-session)']);
  });

  it('Ctrl-C while the usage request is in flight: exit 130, not a refusal', async () => {
    const controller = new AbortController();
    const h = await harness([{ body: usageBody(1, 1), delayMs: 5000 }], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(130);
  });

  it('Ctrl-C during a wait ends it with exit 130', async () => {
    const controller = new AbortController();
    const clock = fakeClock();
    const h = await harness([{ body: usageBody(95, 10) }], {
      wait: true,
      signal: controller.signal,
      clock: { now: clock.now, sleep: async () => controller.abort() },
    });
    const exit = await loopExit(h.gate.beforeStart());
    expect(exit.code).toBe(130);
  });
});
