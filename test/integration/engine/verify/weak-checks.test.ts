// The start-of-run probe (verify/weak-checks.ts) on real git: a plan-level check that already fails on the plan
// commit is named with what to do, since every claim must pass it (a plan written with the project's whole test
// suite as its plan check, and each story's failing test first, could never finish a story before the last).
import { describe, expect, it } from 'vitest';
import { probeWeakChecks } from '../../../../src/engine/verify/weak-checks.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { git } from '../../../support/repo.js';
import { plan, story, verifyRepo } from '../../../support/verify-repo.js';
import type { Prd } from '../../../../src/prd/types.js';

async function probe(prd: Prd, files: Record<string, string>) {
  const repo = verifyRepo(prd, files);
  const commit = git(repo.dir, 'rev-parse', 'HEAD');
  const pins = await readPins(repo.dir, commit, prd);
  const weak = await probeWeakChecks({
    topLevel: repo.dir,
    repoRoot: repo.dir,
    ledgerPath: repo.ledgerPath,
    loopId: 'L1',
    checkTimeoutMs: 20_000,
    log: (level, message) => repo.logs.push(`${level}: ${message}`),
    pins,
    prd,
  });
  return { weak, logs: repo.logs };
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

describe('a setup that fails on the plan commit', () => {
  it('is said: no check was probed, so a check that proves nothing is not named this time', async () => {
    const prd = plan([story('US-1', { checks: ['true'] })], { setup: 'exit 3' });
    const { weak, logs } = await probe(prd, FILES);
    expect(weak).toEqual([]);
    expect(logs).toHaveLength(2);
    // Said before the probe starts, so the wait at a loop's start is not silent.
    expect(logs[0]).toMatch(
      /^info: probing 1 check on the plan commit [0-9a-f]{7} before any work \(after setup `exit 3`\): a check that passes already proves nothing$/,
    );
    expect(logs[1]).toMatch(
      /^warn: the plan's setup `exit 3` failed on the plan commit [0-9a-f]{7}, so no check was probed for passing before any work: stories whose checks prove nothing are not named this time$/,
    );
  });
});
