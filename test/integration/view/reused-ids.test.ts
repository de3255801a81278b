// The dashboard's verdicts (issue 26, class 8): a card is verified only from the sealed record of the loop its plan
// belongs to (the plan's file and branch), and only for a story that record verified (the same story at the record's
// commit). A new plan that reuses story ids, or another loop's newer record, never shows an unverified story as
// verified; `status` reads the same way (store/loop-plan.ts).
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, gitdir } from '../../support/repo.js';
import { keyEnv, sealNote, useKeyEnv } from '../../support/verdict-note.js';
import { commitPlan, plan, story, writeLoop, writePlan } from '../../support/view-fixtures.js';
import { getJson } from '../../support/view-http.js';
import { startViewServer } from '../../../src/view/server.js';
import { readLoopSummaries } from '../../../src/engine/store/summaries.js';
import type { Prd } from '../../../src/prd/types.js';

function writeAndCommit(repo: string, prd: Prd): string {
  writePlan(repo, prd);
  return commitPlan(repo, git(repo, 'branch', '--show-current'));
}

/** Loop L1 finished plan "A" on ralph/fixture: both stories passed, and its sealed record says verified. */
function finishedLoop() {
  const repo = gitdir();
  const env = keyEnv();
  useKeyEnv(env);
  git(repo, 'checkout', '-q', '-b', 'ralph/fixture');
  const done = plan(2, { project: 'A' });
  done.userStories.forEach((s) => (s.passes = true));
  const commit = writeAndCommit(repo, done);
  writeLoop(repo, {
    id: 'L1',
    status: 'complete',
    exitCode: 0,
    branch: 'ralph/fixture',
    startedAt: '2026-11-29T10:00:00.000Z',
  });
  sealNote(
    repo,
    { loop: 'L1', commit, time: '2026-11-29T10:10:00.000Z', stories: { 'US-001': 'verified', 'US-002': 'verified' } },
    env,
  );
  return { repo, env };
}

async function cards(repo: string): Promise<Array<[string, string, string | null]>> {
  const server = await startViewServer({ cwd: repo, port: 0 });
  onTestFinished(() => server.close());
  const body = await getJson(server.url, '/api/prd');
  return body.cards.map((c: { id: string; state: string; verification: string | null }) => [
    c.id,
    c.state,
    c.verification,
  ]);
}

describe('/api/prd: a verdict only from the record of the loop and plan the card belongs to', () => {
  it("the finished loop's own plan: both cards verified (and status says the same)", async () => {
    const { repo } = finishedLoop();
    expect(await cards(repo)).toEqual([
      ['US-001', 'verified', 'verified'],
      ['US-002', 'verified', 'verified'],
    ]);
    expect(readLoopSummaries(repo)[0]).toMatchObject({ id: 'L1', storiesPassed: 2, verified: 2 });
  });

  it('a new plan on its own branch reusing the ids, marked passing by hand: nothing verified', async () => {
    const { repo } = finishedLoop();
    git(repo, 'checkout', '-q', '-b', 'ralph/next', 'main');
    const next = plan(2, { project: 'B', branchName: 'ralph/next' });
    next.userStories = [
      story('US-001', { title: 'Something else', passes: true }),
      story('US-002', { title: 'And another', priority: 2 }),
    ];
    writeAndCommit(repo, next);
    expect(await cards(repo)).toEqual([
      ['US-001', 'passed', null],
      ['US-002', 'open', null],
    ]);
  });

  it('a new plan on the same branch that keeps US-001 and gives US-002 to a new story: only US-001 stays verified, in status too', async () => {
    const { repo } = finishedLoop();
    const next = plan(2, { project: 'A' });
    next.userStories.forEach((s) => (s.passes = true));
    next.userStories[1] = {
      ...next.userStories[1],
      title: 'A new second story',
      acceptanceCriteria: ['something new'],
    };
    writePlan(repo, next);
    expect(await cards(repo)).toEqual([
      ['US-001', 'verified', 'verified'],
      ['US-002', 'passed', null],
    ]);
    expect(readLoopSummaries(repo)[0]).toMatchObject({ id: 'L1', storiesPassed: 2, verified: 1 });
  });

  it("a commit on the loop's branch after its record (a resumed run broke US-001, the same plan): the record verified the commit before, so nothing is verified now, in status too", async () => {
    const { repo } = finishedLoop();
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'fix: one() returns 0');
    expect(await cards(repo)).toEqual([
      ['US-001', 'passed', null],
      ['US-002', 'passed', null],
    ]);
    expect(readLoopSummaries(repo)[0]).toMatchObject({ id: 'L1', storiesPassed: 2, verified: 0 });
  });

  it("another loop's newer record with the same ids (another branch) does not verify this plan's cards", async () => {
    const { repo, env } = finishedLoop();
    git(repo, 'checkout', '-q', '-b', 'ralph/next', 'main');
    const next = plan(2, { project: 'B', branchName: 'ralph/next' });
    next.userStories.forEach((s) => (s.passes = true));
    writeAndCommit(repo, next);
    writeLoop(repo, { id: 'L2', status: 'running', branch: 'ralph/next', startedAt: '2026-11-30T10:00:00.000Z' });
    // L1's record again, newer, on this branch's commit: still L1's, a loop of another branch.
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: git(repo, 'rev-parse', 'HEAD'),
        time: '2026-11-30T10:10:00.000Z',
        stories: { 'US-001': 'verified', 'US-002': 'verified' },
      },
      env,
    );
    expect(await cards(repo)).toEqual([
      ['US-001', 'passed', null],
      ['US-002', 'passed', null],
    ]);
  });
});
