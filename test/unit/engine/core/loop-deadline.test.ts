// --max-duration in the loop's state machine (core/loop.ts, core/retries.ts), on a virtual clock: time moves only
// when the test moves it, and every sleep ends at its time or when its signal aborts.
import { describe, expect, it } from 'vitest';
import { harness } from '../../../support/loop-harness.js';
import type { AgentResult, Clock } from '../../../../src/engine/types.js';

function virtualClock() {
  let t = 0;
  const timers: Array<{ at: number; done: () => void }> = [];
  const slept: number[] = [];
  const clock: Clock & { advance(ms: number): void; slept: number[] } = {
    slept,
    now: () => new Date(t),
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        slept.push(ms);
        if (ms <= 0 || signal?.aborted) return resolve();
        timers.push({ at: t + ms, done: resolve });
        signal?.addEventListener('abort', () => resolve(), { once: true });
      }),
    advance(ms) {
      t += ms;
      for (const timer of timers.filter((x) => x.at <= t)) timer.done();
    },
  };
  return clock;
}

const KILLED: AgentResult = {
  exitCode: null,
  signal: 'SIGTERM',
  timedOut: false,
  stdout: '',
  stderr: '',
  finalMessage: '',
  durationMs: 1,
};
const HOUR = 3_600_000;

describe('--max-duration', () => {
  it('starts no iteration once the time is up', async () => {
    const clock = virtualClock();
    const h = harness([{}], { config: { deadline: 0, maxDurationMs: HOUR }, extra: { clock } });
    const exit = await h.run();
    expect([exit.code, exit.status, exit.message]).toEqual([
      1,
      'max-duration',
      'time limit reached (--max-duration 1h00m) with stories still open',
    ]);
    expect(h.ran).toEqual([]);
  });

  it('stops the agent at the deadline through its signal, settles the iteration, then ends', async () => {
    const clock = virtualClock();
    const seen: number[] = [];
    const h = harness([{ commit: true }], {
      // A pause between iterations is not waited out once the time is up.
      config: { deadline: HOUR, pauseMs: 5000 },
      extra: {
        clock,
        // An agent that would run forever: only its signal ends it.
        runAgent: (iteration, signal) =>
          new Promise((resolve) => {
            seen.push(iteration);
            signal.addEventListener('abort', () => resolve(KILLED), { once: true });
            clock.advance(HOUR);
          }),
      },
    });
    const exit = await h.run();
    expect([exit.code, exit.status]).toEqual([1, 'max-duration']);
    expect(seen).toEqual([1]);
    expect(h.events.map((e) => e.type)).toEqual(expect.arrayContaining(['warn', 'verify', 'iteration-end']));
    expect(h.state).toMatchObject({ iteration: 1, iterationDone: true });
    expect(clock.slept).toEqual([HOUR]);
  });

  it('ends a rate-limit wait at the deadline, leaving the iteration to repeat on resume', async () => {
    const clock = virtualClock();
    const h = harness([{ rateLimit: true }], {
      config: { deadline: HOUR, rateLimitBackoffMs: 10 * HOUR },
      extra: {
        clock,
        detectRateLimit: () => (setTimeout(() => clock.advance(HOUR), 0), { resetAt: null, message: 'limit hit' }),
      },
    });
    const exit = await h.run();
    expect([exit.code, exit.status]).toEqual([1, 'max-duration']);
    expect(h.ran).toEqual([1]);
    expect(h.state).toMatchObject({ iteration: 1, iterationDone: false });
  });

  it('changes nothing without a deadline: the loop runs to its iteration limit', async () => {
    const h = harness([{ commit: true }], { config: { maxIterations: 2 }, extra: { clock: virtualClock() } });
    expect((await h.run()).status).toBe('max-iterations');
    expect(h.ran).toEqual([1, 2]);
  });
});
