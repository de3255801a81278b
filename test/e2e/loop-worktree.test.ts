// --worktree: loops in git worktrees of their own, beside the repository, with their records in the user's tree.
// Real git, the installed ralph/ralph.sh and the real CLI, fake agents.
import { describe, expect, it, onTestFinished } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agent, loopStates, ralph, renderPlan, startRalph } from '../support/loop-repo.js';
import { git, runCli, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { until } from '../support/process.js';

const worktrees = (repo: string) => `${repo}.ralph-worktrees`;

/** A repository with two plans on two branches, committed on main; the worktrees folder goes with the test. */
function twoPlanRepo(): string {
  const repo = installedRepo({
    plan: renderPlan({ branchName: 'ralph/a' }),
    files: { 'ralph/other.json': renderPlan({ branchName: 'ralph/b' }) },
  });
  onTestFinished(() => rmSync(worktrees(repo), { recursive: true, force: true }));
  return repo;
}

function status(repo: string) {
  return runCli(['status', '--json', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 });
}

function onBranch(repo: string, branch: string, file: string): string {
  return git(repo, 'show', `${branch}:${file}`);
}

describe('--worktree', () => {
  it("runs two loops on two plans at once, each on its branch, leaving the user's tree as it was", async () => {
    const repo = twoPlanRepo();
    const meet = testdir('ralphkit-meet-');
    const head = git(repo, 'rev-parse', 'HEAD');
    const args = ['--worktree', '--agent-cmd', agent('rendezvous'), '--pause', '0', '5'];
    // Held after they meet until the test has looked at both loops running (FAKE_MEET_HOLD).
    const a = startRalph(repo, args, {
      FAKE_MEET_DIR: meet,
      FAKE_MEET_SELF: 'a',
      FAKE_MEET_OTHER: 'b',
      FAKE_MEET_HOLD: '1',
    });
    const b = startRalph(repo, [...args, '--prd', 'ralph/other.json'], {
      FAKE_MEET_DIR: meet,
      FAKE_MEET_SELF: 'b',
      FAKE_MEET_OTHER: 'a',
      FAKE_MEET_HOLD: '1',
    });
    await until(
      'both agents started',
      () => existsSync(path.join(meet, 'a')) && existsSync(path.join(meet, 'b')),
      30_000,
    );
    // Both agents are waiting on each other: both loops are running now, and status sees them from the user's tree.
    const live = JSON.parse((await status(repo)).stdout) as {
      loops: Array<{ status: string; prd: string; worktree: { branch: string } }>;
    };
    expect(
      live.loops
        .filter((l) => l.status === 'running')
        .map((l) => `${l.prd} ${l.worktree.branch}`)
        .sort(),
    ).toEqual(['ralph/other.json ralph/b', 'ralph/prd.json ralph/a']);
    const table = (await runCli(['status', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 })).stdout;
    expect(table).toContain(`in the worktree ${worktrees(repo)}/`);
    writeFileSync(path.join(meet, 'release'), '');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    // Each agent worked in its worktree beside the repository, never in the user's tree.
    for (const who of ['a', 'b'])
      expect(path.dirname(readFileSync(path.join(meet, who), 'utf8').trim())).toBe(worktrees(repo));
    // The user's tree: same branch, same commit, nothing changed or added.
    expect(git(repo, 'branch', '--show-current')).toBe('main');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(path.join(repo, 'work'))).toBe(false);
    // Each plan's stories are done, and verified, on its own branch.
    for (const [branch, plan] of [
      ['ralph/a', 'ralph/prd.json'],
      ['ralph/b', 'ralph/other.json'],
    ]) {
      expect(onBranch(repo, branch, 'work/US-002.txt')).toContain('done');
      expect(
        (JSON.parse(onBranch(repo, branch, plan)) as { userStories: Array<{ passes: boolean }> }).userStories.every(
          (s) => s.passes,
        ),
      ).toBe(true);
    }
    // Each plan keeps its own log: the second plan's entries are in its own file, progress.txt is the first plan's.
    expect(onBranch(repo, 'ralph/b', 'ralph/other.progress.txt')).toContain('US-002');
    expect(onBranch(repo, 'ralph/b', 'ralph/progress.txt')).toBe(git(repo, 'show', 'main:ralph/progress.txt'));
    expect(onBranch(repo, 'ralph/a', 'ralph/progress.txt')).toContain('US-002');
    const ended = JSON.parse((await status(repo)).stdout) as {
      loops: Array<{ status: string; verified: number; storiesPassed: number }>;
      leftoverWorktrees: unknown[];
    };
    // The stories passed are read from each loop's branch (its worktree is gone), not from the user's copy of the plan.
    expect(ended.loops.map((l) => [l.status, l.verified, l.storiesPassed])).toEqual([
      ['complete', 2, 2],
      ['complete', 2, 2],
    ]);
    // A clean exit leaves no worktree behind.
    expect(ended.leftoverWorktrees).toEqual([]);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(existsSync(worktrees(repo))).toBe(false);
  }, 120_000);

  it('after a kill -9 status lists the worktree, and --resume finishes the loop there and removes it', async () => {
    const repo = twoPlanRepo();
    const marker = path.join(testdir('ralphkit-hold-'), 'held');
    const held = startRalph(repo, ['--worktree', '--name', 'w1', '--agent-cmd', agent('worker'), '--pause', '0', '5'], {
      FAKE_HOLD_AT: '1',
      FAKE_HOLD_MARKER: marker,
    });
    await until('the agent holding', () => existsSync(marker), 30_000);
    held.child.kill('SIGKILL');
    await held.done;
    const tree = path.join(worktrees(repo), 'w1');
    const listed = await runCli(['status', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 });
    expect(listed.stdout).toContain(tree);
    expect(listed.stdout).toContain('cleanup');
    const resumed = await ralph(repo, ['--resume', 'w1'], { FAKE_HOLD_MARKER: marker });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(tree)).toBe(false);
    expect(onBranch(repo, 'ralph/a', 'work/US-002.txt')).toContain('done');
    expect(loopStates(repo).map((s) => s.status)).toEqual(['complete']);
    expect(git(repo, 'branch', '--show-current')).toBe('main');
  }, 120_000);

  it('cleanup removes the worktree of a dead loop, and a second loop on the same branch is refused', async () => {
    const repo = twoPlanRepo();
    const marker = path.join(testdir('ralphkit-hold-'), 'held');
    const held = startRalph(repo, ['--worktree', '--name', 'w2', '--agent-cmd', agent('worker'), '--pause', '0', '5'], {
      FAKE_HOLD_AT: '1',
      FAKE_HOLD_MARKER: marker,
    });
    await until('the agent holding', () => existsSync(marker), 30_000);
    // Same plan, same branch, while the first runs: git keeps a branch in one worktree, and the runner says whose.
    const second = await ralph(repo, ['--worktree', '--agent-cmd', agent('worker'), '--pause', '0', '5']);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('branch ralph/a is already being worked on by loop w2');
    // The same plan in the user's tree: refused before anything is checked out.
    const home = await ralph(repo, ['--agent-cmd', agent('worker'), '--pause', '0', '5']);
    expect(home.code).toBe(2);
    expect(home.stderr).toContain('branch ralph/a is already being worked on by loop w2');
    expect(git(repo, 'branch', '--show-current')).toBe('main');
    held.child.kill('SIGKILL');
    await held.done;
    const tree = path.join(worktrees(repo), 'w2');
    expect(existsSync(tree)).toBe(true);
    const afterCrash = await ralph(repo, ['--worktree', '--agent-cmd', agent('worker'), '--pause', '0', '5']);
    expect(afterCrash.code).toBe(2);
    expect(afterCrash.stderr).toContain('checked out in the worktree of loop w2');
    expect(afterCrash.stderr).toContain('--resume w2');
    const cleaned = await runCli(['cleanup', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 });
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(`${cleaned.stdout}${cleaned.stderr}`).toContain(`removed ${tree}`);
    expect(existsSync(tree)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect((await runCli(['status', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 })).stdout).not.toContain(tree);
  }, 120_000);

  it("cancel from the user's tree stops a worktree loop, which removes its clean worktree and stays resumable", async () => {
    const repo = twoPlanRepo();
    const marker = path.join(testdir('ralphkit-hold-'), 'held');
    const held = startRalph(repo, ['--worktree', '--name', 'w3', '--agent-cmd', agent('worker'), '--pause', '0', '5'], {
      FAKE_HOLD_AT: '1',
      FAKE_HOLD_MARKER: marker,
    });
    await until('the agent holding', () => existsSync(marker), 30_000);
    const cancelled = await runCli(['cancel', 'w3', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect((await held.done).code).toBe(130);
    expect(loopStates(repo).map((s) => s.status)).toEqual(['cancelled']);
    expect(existsSync(path.join(worktrees(repo), 'w3'))).toBe(false);
    const resumed = await ralph(repo, ['--resume', 'w3'], { FAKE_HOLD_MARKER: marker });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(onBranch(repo, 'ralph/a', 'work/US-002.txt')).toContain('done');
    expect(existsSync(worktrees(repo))).toBe(false);
  }, 120_000);

  it('a worktree left with uncommitted changes is kept, named with what to type, and cleanup keeps it too', async () => {
    const repo = twoPlanRepo();
    const r = await ralph(repo, [
      '--worktree',
      '--name',
      'w4',
      '--agent-cmd',
      'echo draft > stray.txt',
      '--pause',
      '0',
      '1',
    ]);
    expect(r.code).toBe(1);
    const tree = path.join(worktrees(repo), 'w4');
    expect(readFileSync(path.join(tree, 'stray.txt'), 'utf8')).toBe('draft\n');
    expect(r.stderr).toContain(`kept the loop's worktree ${tree}`);
    expect(r.stderr).toContain(`git -C ${tree} status`);
    expect((await runCli(['status', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 })).stdout).toContain(tree);
    const cleaned = await runCli(['cleanup', '--cwd', repo], { cwd: repo, timeoutMs: 30_000 });
    expect(`${cleaned.stdout}${cleaned.stderr}`).toContain(`kept the loop's worktree ${tree}`);
    expect(readFileSync(path.join(tree, 'stray.txt'), 'utf8')).toBe('draft\n');
  }, 180_000);

  it('a loop on another plan does not count as a branch change for the next loop on ralph/prd.json', async () => {
    const repo = twoPlanRepo();
    const worker = ['--worktree', '--agent-cmd', agent('worker'), '--pause', '0', '5'];
    const first = await ralph(repo, worker);
    expect(first.code, first.stderr).toBe(0);
    const other = await ralph(repo, [...worker, '--prd', 'ralph/other.json']);
    expect(other.code, other.stderr).toBe(0);
    const again = await ralph(repo, worker);
    expect(again.code, again.stderr).toBe(0);
    for (const r of [other, again]) expect(r.stderr).not.toContain('branch changed from');
    expect(git(repo, 'ls-tree', '-r', '--name-only', 'ralph/a', 'ralph/archive')).toBe('');
  }, 180_000);

  it("holds the engine of the user's tree, the one that runs: an agent in the worktree that edits it is undone and its claims rejected", async () => {
    const repo = twoPlanRepo();
    const engine = path.join(repo, 'ralph/ralph.mjs');
    const before = readFileSync(engine);
    const tamper = `[ "$RALPH_ITERATION" = 1 ] && printf '// agent was here\\n' >> '${engine}'; exec node '${agent('worker')}'`;
    const r = await ralph(repo, ['--worktree', '--agent-cmd', tamper, '--pause', '0', '6']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(engine).equals(before)).toBe(true);
    expect(r.stderr).toContain(engine);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  }, 180_000);

  it("refuses a plan whose branch is checked out in the user's tree, saying what to type", async () => {
    const repo = twoPlanRepo();
    git(repo, 'switch', '-q', '-c', 'ralph/a');
    const r = await ralph(repo, ['--worktree', '--agent-cmd', agent('worker'), '--pause', '0', '5']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('branch ralph/a is checked out in your working tree');
    expect(r.stderr).toContain('git switch');
    expect(existsSync(worktrees(repo))).toBe(false);
  }, 180_000);
});
