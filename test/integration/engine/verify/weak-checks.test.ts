// The start-of-run probe (verify/weak-checks.ts) on real git: a plan-level check that already fails on the plan
// commit is named with what to do, since every claim must pass it (a plan written with the project's whole test
// suite as its plan check, and each story's failing test first, could never finish a story before the last).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probeWeakChecks, startWeakProbe, type WeakProbeInput } from '../../../../src/engine/verify/weak-checks.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { git } from '../../../support/repo.js';
import { plan, story, verifyRepo } from '../../../support/verify-repo.js';
import type { Prd } from '../../../../src/prd/types.js';

async function probeInput(prd: Prd, files: Record<string, string>): Promise<WeakProbeInput & { logs: string[] }> {
  const repo = verifyRepo(prd, files);
  const commit = git(repo.dir, 'rev-parse', 'HEAD');
  const pins = await readPins(repo.dir, commit, prd);
  return {
    topLevel: repo.dir,
    repoRoot: repo.dir,
    ledgerPath: repo.ledgerPath,
    loopId: 'L1',
    checkTimeoutMs: 20_000,
    log: (level, message) => repo.logs.push(`${level}: ${message}`),
    pins,
    prd,
    logs: repo.logs,
  };
}

async function probe(prd: Prd, files: Record<string, string>) {
  const input = await probeInput(prd, files);
  return { weak: await probeWeakChecks(input), logs: input.logs };
}

// Story 2's test is written first, as the ralph skill asks: the whole suite fails until story 2 is done.
const FILES = {
  'test/us-1.sh': 'test -f us-1.txt\n',
  'test/us-2.sh': 'test -f us-2.txt\n',
  'run-tests.sh': 'for t in test/*.sh; do sh "$t" || exit 1; done\n',
};

describe('a plan-level check that fails before any work', () => {
  it('is named at start with what to do: move it to the last story, give each story its own test', async () => {
    const prd = plan([story('US-1', { checks: ['sh test/us-1.sh'] }), story('US-2', { checks: ['sh test/us-2.sh'] })], {
      checks: ['sh run-tests.sh'],
    });
    const { weak, logs } = await probe(prd, FILES);
    expect(weak).toEqual([]);
    const warning = logs.filter((l) => l.includes('plan-level check'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatch(
      /^warn: the plan-level check `sh run-tests\.sh` already fails on the plan commit [0-9a-f]{7}, before any work \(exit 1\)/,
    );
    expect(warning[0]).toContain(
      "Move it to the last story's checks, and give each story a check that runs only its own test",
    );
  });

  it("a plan written story by story (the full suite as the last story's check) gets no such warning", async () => {
    const prd = plan(
      [
        story('US-1', { checks: ['sh test/us-1.sh'] }),
        story('US-2', { checks: ['sh test/us-2.sh', 'sh run-tests.sh'] }),
      ],
      { checks: ['true'] },
    );
    const { logs } = await probe(prd, FILES);
    expect(logs.filter((l) => l.includes('plan-level check'))).toEqual([]);
  });
});

describe('a probe started alongside the first agent (startWeakProbe)', () => {
  // US-1's check passes before any work (weak); the plan-level check fails there (a warning).
  const prd = plan([story('US-1', { checks: ['true'] }), story('US-2', { checks: ['sh test/us-2.sh'] })], {
    checks: ['sh run-tests.sh'],
  });

  it("alongside: says nothing and adds no story until it has ended and report() or join() is called, once; leaves the guard to the agent's", async () => {
    const input = await probeInput(prd, FILES);
    const guarded: string[] = [];
    const weak = new Set<string>();
    const probe = startWeakProbe({ ...input, guardTrusted: (who) => void guarded.push(who) }, weak, true);
    expect(probe.alongside).toBe(true);
    // Not ended yet: report() neither waits nor says anything.
    probe.report();
    expect(input.logs).toEqual([]);
    // Its ledger lines are written as it goes; what it says and the weak stories wait for report() or join().
    await probe.settled;
    expect(readFileSync(input.ledgerPath, 'utf8')).toContain('"story":"US-2"');
    expect(input.logs).toEqual([]);
    expect(weak.size).toBe(0);
    // report() says it between iterations once it has ended; join() after it adds nothing.
    probe.report();
    expect([...weak]).toEqual(['US-1']);
    expect(input.logs.map((l) => l.slice(0, 40))).toEqual([
      'warn: the plan-level check `sh run-tests',
      'warn: US-1: its check already passes on ',
    ]);
    // The probe's guard would put back what the agent changed meanwhile and call it the checks'.
    expect(guarded).toEqual([]);
    await probe.join();
    probe.report();
    expect(input.logs).toHaveLength(2);
  });

  it("not alongside: the probe guards the runner's files itself and speaks as it goes", async () => {
    const input = await probeInput(prd, FILES);
    const guarded: string[] = [];
    const weak = new Set<string>();
    const probe = startWeakProbe({ ...input, guardTrusted: (who) => void guarded.push(who) }, weak, false);
    expect(probe.alongside).toBe(false);
    await probe.settled;
    expect(input.logs).toHaveLength(2);
    expect(guarded).toEqual(['the checks']);
    await probe.join();
    expect([...weak]).toEqual(['US-1']);
    expect(input.logs).toHaveLength(2);
  });

  it('a probe that cannot run is a warning at join(), not an error: it only names stories', async () => {
    const input = await probeInput(prd, FILES);
    // A plan commit that is not in the repository: its checkout cannot be made.
    const weak = new Set<string>();
    const probe = startWeakProbe({ ...input, pins: { ...input.pins, commit: '0'.repeat(40) } }, weak, true);
    await expect(probe.join()).resolves.toBeUndefined();
    expect(input.logs).toHaveLength(1);
    expect(input.logs[0]).toMatch(
      /^warn: the weak-check probe could not run \(.+\), so no story is named weak this loop$/,
    );
    expect(weak.size).toBe(0);
  });
});
