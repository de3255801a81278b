// --parallel <n>: one plan, n workers in worktrees of their own, a merge queue that verifies again after each merge.
// Real git, the installed ralph/ralph.sh, the real CLI, fake agents (test/fixtures/agents/story-worker.mjs).
import { describe, expect, it, onTestFinished } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agent, ralph, startRalph } from '../support/loop-repo.js';
import { git, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { isGone, waitUntil } from '../support/process.js';

interface StorySpec {
  id: string;
  dependsOn?: string[];
  checks?: string[];
}

const BRANCH = 'ralph/par';

function story(s: StorySpec, i: number) {
  return { id: s.id, title: `Story ${s.id}`, acceptanceCriteria: ['it is done'], priority: i + 1, passes: false, checks: s.checks ?? [`test -f work/${s.id}.txt`], ...(s.dependsOn ? { dependsOn: s.dependsOn } : {}) };
}

/** An installed repository with a plan of `stories` on BRANCH; its worktrees folder goes with the test. */
function parallelRepo(stories: StorySpec[], planChecks: string[] = ['test -f README.md']): string {
  const repo = installedRepo({ plan: { project: 'Par', branchName: BRANCH, checks: planChecks, userStories: stories.map(story) } });
  onTestFinished(() => rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true }));
  return repo;
}

function planOn(repo: string, branch = BRANCH): { userStories: Array<{ id: string; passes: unknown; notes?: string }> } {
  return JSON.parse(git(repo, 'show', `${branch}:ralph/prd.json`));
}

/** The stories merged by the queue, in merge order (the first-parent history of the plan branch). */
function mergeOrder(repo: string): string[] {
  return git(repo, 'log', '--first-parent', '--reverse', '--format=%s', BRANCH).split('\n').flatMap((s) => /^ralph: merge (\S+)/.exec(s)?.[1] ?? []);
}

interface LogLine {
  story: string;
  iteration: number;
  cwd: string;
  seen: string[];
}

function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => {
    const [s, it, cwd, seen] = l.split(' ');
    return { story: s, iteration: Number(it), cwd, seen: seen ? seen.split(',') : [] };
  });
}

function fakeEnv(extra: Record<string, string> = {}) {
  const dir = testdir('ralphkit-par-');
  return { log: path.join(dir, 'log'), env: { FAKE_PAR_LOG: path.join(dir, 'log'), FAKE_PAR_MARKS: dir, ...extra } };
}

describe('--parallel', () => {
  it('runs independent and dependent stories over 3 workers; every story verified on the plan branch, in dependency order', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003', dependsOn: ['US-001', 'US-002'] }, { id: 'US-004', dependsOn: ['US-003'] }, { id: 'US-005' }]);
    const head = git(repo, 'rev-parse', 'HEAD');
    const { log, env } = fakeEnv({ FAKE_PAR_DELAY_MS: '300' });
    const r = await ralph(repo, ['--parallel', '3', '--agent-cmd', agent('story-worker'), '--pause', '0', '20'], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    // Every story passes on the plan branch and its work is there.
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual(['US-001', 'US-002', 'US-003', 'US-004', 'US-005'].map((id) => [id, true]));
    for (const id of ['US-001', 'US-002', 'US-003', 'US-004', 'US-005']) expect(git(repo, 'show', `${BRANCH}:work/${id}.txt`)).toContain('done');
    // Each story arrived by a merge of its own story branch, and dependencies were merged first.
    const order = mergeOrder(repo);
    expect([...order].sort()).toEqual(['US-001', 'US-002', 'US-003', 'US-004', 'US-005']);
    expect(order.indexOf('US-003')).toBeGreaterThan(Math.max(order.indexOf('US-001'), order.indexOf('US-002')));
    expect(order.indexOf('US-004')).toBeGreaterThan(order.indexOf('US-003'));
    // A dependent story's agent started from a branch that already had its dependencies' work.
    const runs = readLog(log);
    expect(runs.find((l) => l.story === 'US-003')!.seen).toEqual(expect.arrayContaining(['US-001.txt', 'US-002.txt']));
    expect(runs.find((l) => l.story === 'US-004')!.seen).toContain('US-003.txt');
    // Agents ran in worker worktrees beside the repository, more than one of them.
    const trees = new Set(runs.map((l) => l.cwd));
    expect(trees.size).toBeGreaterThan(1);
    for (const t of trees) expect(path.dirname(t)).toBe(`${repo}.ralph-worktrees`);
    // The progress entries of every worker reached the plan branch's log.
    const progress = git(repo, 'show', `${BRANCH}:ralph/progress.txt`);
    for (const id of ['US-001', 'US-002', 'US-003', 'US-004', 'US-005']) expect(progress).toContain(`## ${id} (iteration`);
    // The user's tree is as it was, and a clean exit leaves no worktree and no merged story branch behind.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(repo, 'branch', '--list', `${BRANCH}--*`)).toBe('');
    expect(r.stderr).toMatch(/\[w[123]\]|worker [123]/);
  }, 180_000);

  it('re-queues a story whose branch conflicts with one merged before it, and finishes', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { env } = fakeEnv({ FAKE_PAR_SHARED: 'US-001,US-002', FAKE_PAR_DELAY_MS: '200' });
    const r = await ralph(repo, ['--parallel', '2', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/sent back by the merge queue: its branch does not merge onto ralph\/par .*conflict in shared\.txt/);
    // Both stories' lines are in the shared file: the second attempt started from the plan branch with the first.
    expect(git(repo, 'show', `${BRANCH}:shared.txt`).split('\n').filter(Boolean).sort()).toEqual(['US-001', 'US-002']);
    const progress = git(repo, 'show', `${BRANCH}:ralph/progress.txt`);
    expect(progress).toMatch(/ralph: US-00[12] sent back by the merge queue/);
  }, 180_000);

  it('sends a story back when checks fail after its merge, although it passed on its own branch', async () => {
    // US-001's check refuses work/poison.txt; US-002's first attempt writes it (its own check passes on its branch).
    const repo = parallelRepo([{ id: 'US-001', checks: ['test -f work/US-001.txt', 'test ! -f work/poison.txt'] }, { id: 'US-002', checks: ['test -f work/US-002.txt'] }]);
    const { env } = fakeEnv({ FAKE_PAR_POISON: 'US-002', FAKE_PAR_SLOW: 'US-002' });
    const r = await ralph(repo, ['--parallel', '2', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    // US-001 is merged first (US-002 is slow); US-002's merge then fails US-001's check, so it is sent back, and its
    // second attempt (no poison) is merged: the poison never reached the plan branch.
    expect(git(repo, 'ls-tree', '-r', '--name-only', BRANCH)).not.toContain('work/poison.txt');
    expect(r.stderr).toMatch(/sent back by the merge queue: after the merge onto [0-9a-f]{7}, checks failed \(US-001/);
  }, 180_000);
});

describe('--parallel: limits, STUCK and attacks', () => {
  it('exit 3 when every story left is stuck or waits on a stuck one; the others are merged', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002', dependsOn: ['US-001'] }, { id: 'US-003' }]);
    const { env } = fakeEnv({ FAKE_PAR_STUCK: 'US-001' });
    const r = await ralph(repo, ['--parallel', '2', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env, 120_000);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('every story left is stuck or waits on a stuck one (US-001: the agent said it is STUCK; US-002: waits on US-001)');
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual([['US-001', false], ['US-002', false], ['US-003', true]]);
    expect(mergeOrder(repo)).toEqual(['US-003']);
  }, 120_000);

  it('max_iterations counts agent runs over all workers', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }, { id: 'US-004' }]);
    const { log, env } = fakeEnv();
    const r = await ralph(repo, ['--parallel', '3', '--agent-cmd', agent('story-worker'), '--pause', '0', '2'], env, 120_000);
    expect(r.code, r.stderr).toBe(1);
    expect(readLog(log)).toHaveLength(2);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002']);
    expect(r.stderr).toMatch(/max iterations/i);
  }, 120_000);

  it('a claim of another worker\'s story is rejected; that story is still done by its own worker', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { log, env } = fakeEnv({ FAKE_PAR_CLAIM_ALSO: 'US-001:US-002', FAKE_PAR_SLOW: 'US-002' });
    const r = await ralph(repo, ['--parallel', '2', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('US-002 rejected: story US-002 is not this agent\'s: it works on US-001 only');
    // US-002 was merged from its own branch (its own worker's work), not from US-001's claim.
    expect(readLog(log).filter((l) => l.story === 'US-002')).toHaveLength(1);
    expect(git(repo, 'log', '--first-parent', '--format=%s', BRANCH)).toContain('ralph: merge US-002 (Story US-002) from ralph/par--US-002');
  }, 120_000);

  it('an agent that moves the plan branch to its unverified work stops the run (exit 6); nothing more is merged', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { env } = fakeEnv({ FAKE_PAR_MOVE_PLAN: `US-001:${BRANCH}`, FAKE_PAR_SLOW: 'US-002' });
    const r = await ralph(repo, ['--parallel', '2', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env, 120_000);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/the plan branch ralph\/par moved from [0-9a-f]{7} to [0-9a-f]{7} behind the runner's back/);
    expect(r.stderr).toContain(`git update-ref refs/heads/${BRANCH}`);
    // No merge commit of the queue is on the branch: the runner never built on the moved tip.
    expect(mergeOrder(repo)).toEqual([]);
  }, 120_000);

  it('Ctrl-C stops every worker; --resume-last continues the whole set and finishes', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const started = testdir('ralphkit-started-');
    const { env } = fakeEnv({ FAKE_PAR_STARTED: started, FAKE_PAR_DELAY_MS: '60000' });
    const run = startRalph(repo, ['--parallel', '2', '--name', 'par', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env);
    await waitUntil(() => existsSync(path.join(started, 'US-001')) && existsSync(path.join(started, 'US-002')), 60_000, 'both workers\' agents running');
    const pids = ['US-001', 'US-002'].map((id) => Number(readFileSync(path.join(started, id), 'utf8')));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    // Both agents are gone (their process groups were stopped), not only the one a single loop would have.
    for (const pid of pids) expect(isGone(pid)).toBe(true);
    const state = JSON.parse(readFileSync(path.join(repo, 'ralph/.runs/par/state.json'), 'utf8')) as { status: string; parallel: { states: Array<{ phase: string }> } };
    expect(state.status).toBe('interrupted');
    expect(state.parallel.states.map((w) => w.phase)).toEqual(['idle', 'idle']);
    const again = await ralph(repo, ['--resume-last'], { ...env, FAKE_PAR_DELAY_MS: '0' }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002', 'US-003']);
  }, 180_000);

  it('kill -9 of the runner during a merge\'s checks, then --resume-last: no verified commit lost, every story merged', async () => {
    const hold = path.join(testdir('ralphkit-hold-'), 'held');
    const holder = path.join(testdir('ralphkit-holder-'), 'hold.mjs');
    // US-002's check holds (once) when it runs where US-001's work is too: only a merge commit has both.
    writeFileSync(holder, `import { existsSync, writeFileSync } from 'node:fs';\nif (existsSync('work/US-001.txt') && existsSync('work/US-002.txt') && !existsSync(${JSON.stringify(hold)})) { writeFileSync(${JSON.stringify(hold)}, String(process.pid)); setInterval(() => {}, 1000); }\n`);
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002', checks: ['test -f work/US-002.txt', `node ${holder}`] }]);
    const { env } = fakeEnv({ FAKE_PAR_SLOW: 'US-002' });
    const run = startRalph(repo, ['--parallel', '2', '--name', 'k9', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env);
    await waitUntil(() => existsSync(hold), 90_000, 'the merge of US-002 being verified');
    const verifiedHead = git(repo, 'rev-parse', `${BRANCH}--US-002`);
    const tipBefore = git(repo, 'rev-parse', BRANCH);
    run.child.kill('SIGKILL');
    await run.done;
    // The held check outlives the runner it belonged to; the test stops it.
    const checkPid = Number(readFileSync(hold, 'utf8'));
    onTestFinished(() => {
      try {
        process.kill(checkPid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    });
    // The branch did not move to the merge under verification.
    expect(git(repo, 'rev-parse', BRANCH)).toBe(tipBefore);
    const again = await ralph(repo, ['--resume-last'], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002']);
    // The commit verified on the story branch before the kill is in the plan branch's history.
    expect(() => git(repo, 'merge-base', '--is-ancestor', verifiedHead, BRANCH)).not.toThrow();
  }, 180_000);
});
