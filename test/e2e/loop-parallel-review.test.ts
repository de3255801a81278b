// --parallel under a hostile or careless agent, and a user's resume: what the review of issue #14 found.
// Real git, the installed ralph/ralph.sh, the real CLI, fake agents (test/fixtures/agents/story-worker.mjs).
import { describe, expect, it, onTestFinished } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agent, ralph, startRalph } from '../support/loop-repo.js';
import { git, runCli, testdir } from '../support/repo.js';
import { isGone, pidFrom, until } from '../support/process.js';
import { BRANCH, fakeEnv, mergeOrder, parallelRepo, planOn, readLog, story } from '../support/parallel-repo.js';
import { installedRepo } from '../support/installed-repo.js';

const RUN = (n: number, max = 10) => [
  '--parallel',
  String(n),
  '--agent-cmd',
  agent('story-worker'),
  '--pause',
  '0',
  String(max),
];

/** Starts a --parallel run named `name` and waits until the agents of `ids` run; their pids. */
async function runUntilStarted(
  repo: string,
  n: number,
  name: string,
  ids: string[],
  extra: Record<string, string> = {},
) {
  const started = testdir('ralphkit-started-');
  const { env } = fakeEnv({ FAKE_PAR_STARTED: started, FAKE_PAR_DELAY_MS: '60000', ...extra });
  const run = startRalph(repo, ['--name', name, ...RUN(n)], env);
  // The agents running: their pids written (a file can exist before its pid is in it).
  const pids = await Promise.all(ids.map((id) => pidFrom(path.join(started, id), 60_000)));
  // Whatever the runner leaves alive, the test stops.
  onTestFinished(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
  return { run, pids };
}

function stateFile(repo: string, name: string): string {
  return path.join(repo, 'ralph/.runs', name, 'state.json');
}

describe('--parallel review: processes and resume', () => {
  it("kill -9 of the runner, then --resume-last: a plan branch moved meanwhile is refused until put back; the dead runner's agents are stopped", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { run, pids } = await runUntilStarted(repo, 2, 'k9agents', ['US-001', 'US-002']);
    // What an agent can do, sandboxed too: the plan branch on a commit of its own, which no runner sees move: the one
    // it ran under is killed. Its resume holds the branch to the tip that runner sealed.
    const tip = git(repo, 'rev-parse', BRANCH);
    const forged = git(repo, 'commit-tree', `${tip}^{tree}`, '-p', tip, '-m', 'ralph: merge US-009 (forged)');
    git(repo, 'update-ref', `refs/heads/${BRANCH}`, forged);
    run.child.kill('SIGKILL');
    await run.done;
    const refused = await ralph(repo, ['--resume-last'], fakeEnv().env, 120_000);
    expect(refused.code, refused.stderr).toBe(6);
    expect(refused.stderr).toContain(
      `the plan branch ${BRANCH} is at ${forged.slice(0, 7)}, but the runner of loop k9agents left it at ${tip.slice(0, 7)} and did not end`,
    );
    // Put back as the hint says, the loop goes on and finishes.
    expect(refused.stderr).toMatch(new RegExp(`git update-ref '?refs/heads/${BRANCH}'? ${tip}`));
    git(repo, 'update-ref', `refs/heads/${BRANCH}`, tip);
    const again = await ralph(repo, ['--resume-last'], fakeEnv().env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(git(repo, 'log', '--format=%H', BRANCH).split('\n')).not.toContain(forged);
    // The dead runner's agents would otherwise go on writing in the worker trees the resumed run re-uses.
    for (const pid of pids) expect(isGone(pid), `agent ${pid} of the killed runner still runs`).toBe(true);
  }, 180_000);

  it("kill -9 of the runner, then cancel: the workers' agents are stopped", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { run, pids } = await runUntilStarted(repo, 2, 'k9cancel', ['US-001', 'US-002']);
    run.child.kill('SIGKILL');
    await run.done;
    const cancel = await runCli(['cancel', 'k9cancel', '--cwd', repo]);
    expect(cancel.code, cancel.stderr).toBe(0);
    await until('the agents gone after cancel', () => pids.every(isGone), 5_000).catch(() => undefined);
    for (const pid of pids) expect(isGone(pid), `agent ${pid} still runs after cancel`).toBe(true);
  }, 180_000);

  it("resumed with fewer workers after kill -9: the extra worker's tree neither blocks its story nor stays behind", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const { run, pids } = await runUntilStarted(repo, 3, 'shrink', ['US-001', 'US-002', 'US-003']);
    run.child.kill('SIGKILL');
    await run.done;
    // (The agents are stopped here, so this test is about the trees alone.)
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await until('the agents gone', () => pids.every(isGone), 5_000);
    const again = await ralph(repo, ['--resume-last', '--parallel', '2'], fakeEnv().env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002', 'US-003']);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  }, 180_000);

  it('a story given up as STUCK is tried again by --resume-last, as the hint says ("fix the cause, then --resume-last")', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const first = await ralph(repo, RUN(2), fakeEnv({ FAKE_PAR_STUCK: 'US-001' }).env, 120_000);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain('then --resume-last');
    // The cause is fixed (the fake agent no longer says STUCK).
    const { log, env } = fakeEnv();
    const again = await ralph(repo, ['--resume-last'], env, 120_000);
    expect(readLog(log).map((l) => l.story)).toContain('US-001');
    expect(again.code, again.stderr).toBe(0);
    expect(planOn(repo).userStories.map((s) => s.passes)).toEqual([true, true]);
  }, 180_000);

  it('--resume-last of a --parallel run refuses the options --parallel refuses, as a new run does', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const first = await ralph(repo, RUN(2, 1), fakeEnv().env, 120_000);
    expect(first.code, first.stderr).toBe(1);
    const again = await ralph(repo, ['--resume-last', '--verify-in-place', '5'], fakeEnv().env, 120_000);
    // A usage error (exit 1, as for a new run), with the command that resumes it without the option.
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toContain('--parallel cannot be combined with --verify-in-place');
    expect(again.stderr).toMatch(/resume it without it: \.\/ralph\/ralph\.sh --resume \S+/);
  }, 180_000);
});

describe("--parallel review: the merge queue's blame", () => {
  it('a merged story whose check fails on the plan branch itself does not send back every story merged after it', async () => {
    // US-001's check passes twice (on its branch, after its merge), then fails wherever it runs: the plan branch is
    // broken by nothing US-002 did. The queue must find that US-001 fails without US-002 too, and set US-001 back.
    const counter = path.join(testdir('ralphkit-flaky-'), 'runs');
    const flaky = `n=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}; test "$n" -lt 2`;
    const repo = parallelRepo([{ id: 'US-001', checks: ['test -f work/US-001.txt', flaky] }, { id: 'US-002' }]);
    const r = await ralph(repo, ['--no-weak-check', ...RUN(2, 8)], fakeEnv({ FAKE_PAR_SLOW: 'US-002' }).env, 180_000);
    expect(mergeOrder(repo), r.stderr).toContain('US-002');
    expect(r.stderr).not.toMatch(/given up on US-002/);
  }, 240_000);
});

describe('--parallel review: two runs on two plans', () => {
  it("both finish, and neither says its agents committed the other run's work", async () => {
    const plan = (name: string, ids: string[]) => ({
      project: name,
      branchName: `ralph/${name}`,
      checks: ['test -f README.md'],
      userStories: ids.map((id) => ({ id })).map(story),
    });
    const repo = installedRepo({
      plan: plan('a', ['US-001', 'US-002']),
      files: { 'ralph/plans/b.json': `${JSON.stringify(plan('b', ['US-101', 'US-102']), null, 2)}\n` },
    });
    onTestFinished(() => rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true }));
    const { env } = fakeEnv({ FAKE_PAR_DELAY_MS: '500' });
    const [a, b] = await Promise.all([
      ralph(repo, RUN(2), env, 150_000),
      ralph(repo, ['--prd', 'ralph/plans/b.json', ...RUN(2)], env, 150_000),
    ]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    // Each agent committed on its own story branch only; the other run's commits are that run's.
    expect(a.stderr + b.stderr).not.toContain('the agent committed on other branches');
  }, 200_000);
});

describe('--parallel review: the prompt', () => {
  it('an agent that follows the installed prompt\'s "work on the plan\'s branch" step is told its story branch is that branch', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const r = await ralph(repo, RUN(2, 6), fakeEnv({ FAKE_PAR_FOLLOW_BRANCH: '1' }).env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002']);
  }, 120_000);
});

describe('--parallel review: what the runner reads that an agent wrote', () => {
  it('a plan branch moved while the agents run, then Ctrl-C: exit 6 with the way back, not a resumable 130', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { run } = await runUntilStarted(repo, 2, 'moved', ['US-001', 'US-002']);
    // What an agent can do, a sandboxed one too (refs/heads is its to write): the plan branch on a commit of its own,
    // before any merge would have noticed. A resume would have taken it for the runner's tip.
    const tip = git(repo, 'rev-parse', BRANCH);
    const forged = git(repo, 'commit-tree', `${tip}^{tree}`, '-p', tip, '-m', 'ralph: merge US-009 (forged)');
    git(repo, 'update-ref', `refs/heads/${BRANCH}`, forged);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`the plan branch ${BRANCH} moved from ${tip.slice(0, 7)} to ${forged.slice(0, 7)}`);
    expect(r.stderr).toMatch(new RegExp(`git update-ref '?refs/heads/${BRANCH}'? ${tip}`));
  }, 120_000);

  it('state.json written before a resume: no story merged before the story it depends on, none set aside, your tree left alone', async () => {
    const repo = parallelRepo([
      { id: 'US-001' },
      { id: 'US-002', dependsOn: ['US-001'] },
      { id: 'US-003', skip: true },
    ]);
    const { run } = await runUntilStarted(repo, 2, 'forged', ['US-001']);
    run.child.kill('SIGINT');
    expect((await run.done).code).toBe(130);
    // What an agent can do with the user's rights: a commit with US-002's work on the plan branch's tip, and a
    // queue entry for it in the run's state.json.
    const tip = git(repo, 'rev-parse', BRANCH);
    const work = path.join(testdir('ralphkit-forge-'), 'w');
    git(repo, 'worktree', 'add', '-q', '--detach', work, tip);
    mkdirSync(path.join(work, 'work'), { recursive: true });
    writeFileSync(path.join(work, 'work', 'US-002.txt'), 'forged\n');
    git(work, 'add', 'work/US-002.txt');
    git(work, 'commit', '-q', '-m', 'forged US-002');
    const forged = git(work, 'rev-parse', 'HEAD');
    // And one for a story set aside, whose checks never run: its head would reach the branch judged by nobody.
    writeFileSync(path.join(work, 'planted.txt'), 'never verified\n');
    git(work, 'add', 'planted.txt');
    git(work, 'commit', '-q', '-m', 'planted');
    const planted = git(work, 'rev-parse', 'HEAD');
    git(repo, 'worktree', 'remove', '--force', work);
    const file = stateFile(repo, 'forged');
    const state = JSON.parse(readFileSync(file, 'utf8')) as { parallel: { queue: unknown[] } };
    state.parallel.queue = [
      { story: 'US-003', head: planted, worker: 1 },
      { story: 'US-002', head: forged, worker: 2 },
    ];
    // And the run's tree named as your working tree, where the resume's tidying (reset --hard, clean) would drop
    // what you have not committed.
    (state as unknown as { worktree: { path: string } }).worktree.path = repo;
    writeFileSync(path.join(repo, 'mine.txt'), 'not committed\n');
    writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
    const again = await ralph(repo, ['--resume-last'], fakeEnv().env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    // dependsOn: US-002 starts (and so merges) only once US-001 is merged; US-003 is not merged at all.
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002']);
    expect(git(repo, 'ls-tree', '-r', '--name-only', BRANCH)).not.toContain('planted.txt');
    expect(planOn(repo).userStories.find((s) => s.id === 'US-003')?.passes).toBe(false);
    expect(readFileSync(path.join(repo, 'mine.txt'), 'utf8')).toBe('not committed\n');
  }, 180_000);

  it("an agent still running that writes into another worker's verification checkout cannot make the run exit 0", async () => {
    // US-002's agent claims its story without the work; US-001's agent, still running, writes work/US-002.txt into
    // every verification checkout it finds meanwhile (the story branch's, then the merge queue's).
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { env } = fakeEnv({ FAKE_PAR_LAZY: 'US-002', FAKE_PAR_TAMPER: 'US-001:US-002:8000' });
    const r = await ralph(repo, RUN(2, 6), env, 180_000);
    // Without --sandbox an agent of the same user can write into another worker's verification checkout while it
    // runs (docs/guide.md, "One plan, several agents at once"), so a merge verified meanwhile may lack its work. What the run
    // promises is exit 0 only on a final gate that ran with no agent alive: the lazy story ends not passing there.
    expect(r.code, r.stderr).not.toBe(0);
    expect(planOn(repo).userStories.find((s) => s.id === 'US-002')?.passes, r.stderr).toBe(false);
    expect(r.stderr).toMatch(/US-002 rejected by the final gate|no story left can make progress \(.*US-002/);
  }, 240_000);
});
