// One verification pass's checks (src/engine/verify/session.ts, CheckSession) on real git: a fresh checkout of the
// claimed commit with the tests pinned at the plan commit, the plan's checks run once for every story claimed, a
// story's `mayChange` seeing its own edit of a pinned file, and the plan and log put back when a check rewrote them.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CheckSession } from '../../../../src/engine/verify/session.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git } from '../../../support/repo.js';
import { commitAll, plan, readLedgerLines, story, verifyRepo } from '../../../support/verify-repo.js';

const FILES = { 'test/check.sh': 'grep -q done src/code.txt\n', 'src/code.txt': 'todo\n' };

/** The repository at its plan commit, with the pins the runner takes there, and a session on HEAD once the agent worked. */
async function planRepo(prd: Prd) {
  const r = verifyRepo(prd, FILES);
  const pins = await readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), prd);
  const open = (): CheckSession =>
    new CheckSession({ ...r.input({ pins }) }, r.dir, git(r.dir, 'rev-parse', 'HEAD'), () => new Date(0));
  return { r, open };
}

/** Runs every story of `prd` in one session, closed after. */
async function runAll(open: () => CheckSession, prd: Prd) {
  const session = open();
  try {
    const out: Record<string, string> = {};
    for (const s of prd.userStories) {
      const run = await session.runStory(prd, s);
      out[s.id] = run.outcome === 'failed' ? `failed: ${run.why}` : run.outcome;
    }
    return out;
  } finally {
    await session.close();
  }
}

describe('CheckSession', () => {
  it("runs the plan's check once for every story claimed (the second line marked shared), and each story's own check for it", async () => {
    const prd = plan([story('US-1', { checks: ['test -f a.txt'] }), story('US-2', { checks: ['test -f b.txt'] })], {
      checks: ['echo plan-check'],
    });
    const { r, open } = await planRepo(prd);
    commitAll(r.dir, { 'a.txt': 'a\n', 'b.txt': 'b\n' });

    expect(await runAll(open, prd)).toEqual({ 'US-1': 'passed', 'US-2': 'passed' });

    const lines = readLedgerLines(r).filter((l) => l.kind === 'check');
    expect(lines.map((l) => [l.story, l.command, l.shared ?? false])).toEqual([
      ['US-1', 'echo plan-check', false],
      ['US-1', 'test -f a.txt', false],
      ['US-2', 'echo plan-check', true],
      ['US-2', 'test -f b.txt', false],
    ]);
    expect(r.logs.filter((l) => l.includes('fresh checkout'))).toHaveLength(1);
  });

  it('a pinned test the agent weakened in its commit is undone in the checkout: the check fails; the honest commit passes it', async () => {
    const prd = plan([story('US-1', { checks: ['sh test/check.sh'] })]);
    const weak = await planRepo(prd);
    commitAll(weak.r.dir, { 'test/check.sh': 'exit 0\n' });
    expect(await runAll(weak.open, prd)).toEqual({ 'US-1': 'failed: check `sh test/check.sh` exited 1' });
    // Nothing of the checkout is left in the repository: the agent's commit is what it was.
    expect(readFileSync(`${weak.r.dir}/test/check.sh`, 'utf8')).toBe('exit 0\n');

    const honest = await planRepo(prd);
    commitAll(honest.r.dir, { 'src/code.txt': 'done\n' });
    expect(await runAll(honest.open, prd)).toEqual({ 'US-1': 'passed' });
  });

  it('a story whose mayChange names the pinned test sees its own version (a checkout of its own), another story the pinned one', async () => {
    const prd = plan([
      story('US-1', { checks: ['sh test/check.sh'], mayChange: ['test/check.sh'] }),
      story('US-2', { checks: ['sh test/check.sh'] }),
    ]);
    const { r, open } = await planRepo(prd);
    commitAll(r.dir, { 'test/check.sh': 'grep -q todo src/code.txt\n' });

    expect(await runAll(open, prd)).toEqual({ 'US-1': 'passed', 'US-2': 'failed: check `sh test/check.sh` exited 1' });
    expect(r.logs.filter((l) => l.includes('fresh checkout'))).toHaveLength(2);
  });

  it('a check that rewrites the plan in the repository: the plan is put back when the session closes, and said', async () => {
    const { r, open } = await planRepo(plan([story('US-1')]));
    // The check names the repository's plan by its absolute path, known once the repository exists.
    const prd = plan([story('US-1', { checks: [`echo '{"forged":true}' > '${r.prdPath}'`] })]);
    writeFileSync(r.prdPath, `${JSON.stringify(prd, null, 2)}\n`);
    const before = readFileSync(r.prdPath, 'utf8');

    expect(await runAll(open, prd)).toEqual({ 'US-1': 'passed' });

    expect(readFileSync(r.prdPath, 'utf8')).toBe(before);
    expect(r.logs).toContainEqual(
      expect.stringMatching(/^warn: the checks changed ralph\/prd\.json .*put back as it was before the checks/),
    );
  });
});
