// Agents that misuse git: the runner must not accept work committed off the loop's branch, must stop when the
// history it verified is rewritten (exit 6), must not count prompt-only commits as progress, and must leave a note when an
// iteration times out. Needs `npm run build` first (npm test does it).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, runCli } from '../support/repo.js';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';

const FAST = ['--pause', '0'];
const misbehave = (mode: string, at = 1) => ({ FAKE_MISBEHAVE: mode, FAKE_AT: String(at) });
const progress = (dir: string) => readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
const plan = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as {
    userStories: Array<{ id: string; passes: boolean; notes?: string }>;
  };

describe('an agent that switches branch', () => {
  it("is brought back to the loop branch, its claims rejected, main put back where it was and the agent's commit kept under the loop's refs", async () => {
    const dir = loopRepo({ stories: 1 });
    const mainBefore = git(dir, 'rev-parse', 'main');
    const r = await ralph(
      dir,
      ['--agent-cmd', agent('misbehaver'), ...FAST, '--no-progress-limit', '5', '1'],
      misbehave('branch'),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "the agent left the loop's branch: it switched from ralph/test to main, and made 1 commit there:",
    );
    expect(r.stderr).toMatch(/US-001 rejected: the work is not on ralph\/test: the agent committed it on main/);
    expect(r.stderr).toContain('inspect them with git log ralph/test..main');
    expect(git(dir, 'branch', '--show-current')).toBe('ralph/test');
    // main is where the agent found it; its commit is kept under the loop's refs; none of it reached the loop's branch.
    expect(git(dir, 'rev-parse', 'main')).toBe(mainBefore);
    expect(r.stderr).toMatch(/the agent moved branches other than the loop's: main \(to [0-9a-f]{7}; put back at /);
    const kept = git(dir, 'for-each-ref', '--format=%(refname)', 'refs/ralphkit/loops/*/moved/main');
    expect(git(dir, 'log', '-1', '--format=%s', kept)).toBe('feat: US-001 - Story 1');
    expect(git(dir, 'rev-parse', `${kept}~1`)).toBe(mainBefore);
    expect(existsSync(path.join(dir, 'work/US-001.txt'))).toBe(false);
    expect(plan(dir).userStories[0].passes).toBe(false);
    expect(progress(dir)).toContain('ralph: iteration 1 worked on the wrong branch');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it("keeps the loop branch's plan: stories verified there stay passing, claims made on main are rejected", async () => {
    const dir = loopRepo({ stories: 2 });
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), ...FAST, '2'], misbehave('branch-two', 2));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('made 2 commits there');
    const [us1, us2] = plan(dir).userStories;
    expect(us1.passes).toBe(true);
    expect(us2.passes).toBe(false);
    expect(us2.notes).toBe('[ralph] rejected: the work is not on ralph/test: the agent committed it on main');
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): reject US-002 (work on another branch)');
  });

  it('warns about commits an agent made on another branch before coming back, and puts that branch back', async () => {
    const dir = loopRepo({ stories: 1 });
    const mainBefore = git(dir, 'rev-parse', 'main');
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), ...FAST, '1'], misbehave('branch-back'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /the agent committed on other branches than ralph\/test \(they are not this loop's work; a branch of yours it moved is put back\): [0-9a-f]{7,} feat: US-001 - Story 1/,
    );
    expect(git(dir, 'rev-parse', 'main')).toBe(mainBefore);
    expect(plan(dir).userStories[0].passes).toBe(false);
  });

  it('stops to protect work (exit 6, state protected) when uncommitted work blocks the switch back, and changes nothing', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), ...FAST, '3'], misbehave('branch-dirty'));
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(
      /the agent left ralph\/test for main and the runner cannot switch back: the working tree has uncommitted changes \(stray\.txt\)/,
    );
    expect(r.stderr).toContain('git checkout ralph/test');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(onlyState(dir)).toMatchObject({ status: 'protected', exitCode: 6 });
    expect(git(dir, 'branch', '--show-current')).toBe('main');
    expect(existsSync(path.join(dir, 'stray.txt'))).toBe(true);
  });
});

describe('an agent that rewrites history', () => {
  it('stops the loop to protect work (exit 6, protected; not exit 1 like a limit) naming the lost commit and how to get it back', async () => {
    const dir = loopRepo({ stories: 2 });
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), ...FAST, '5'], misbehave('reset', 2));
    const lost = git(dir, 'rev-parse', 'HEAD@{1}');
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(
      `iteration 2: the agent rewrote the history of ralph/test: ${lost.slice(0, 7)} (HEAD before it ran) is no longer in it`,
    );
    expect(r.stderr).toContain(`git reset --hard ${lost}`);
    expect(r.stderr).toContain('(exit 6)');
    expect(r.stderr).not.toContain('iteration 2 done');
    expect(onlyState(dir)).toMatchObject({ status: 'protected', exitCode: 6 });
    // status says why it stopped, under the loop's row.
    const status = await runCli(['status'], { cwd: dir });
    expect(status.stdout).toMatch(/\sprotected\s+2\/5\s/);
    expect(status.stdout).toContain('the agent rewrote the history of ralph/test');
    // Following the hint brings the verified story back.
    git(dir, 'reset', '-q', '--hard', lost);
    expect(plan(dir).userStories[0].passes).toBe(true);
  });

  it('ends with a message, not a stack, when the reset removes ralph/ itself', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), ...FAST, '3'], misbehave('wipe'));
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('the agent rewrote the history of ralph/test');
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('an agent that edits the prompt', () => {
  it('that deletes it: the prompt is put back and committed by the runner, and the next agent works from it (exit 0)', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(
      dir,
      ['--agent-cmd', agent('misbehaver'), ...FAST, '--no-progress-limit', '5', '3'],
      misbehave('rm-prompt'),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('the agent deleted ralph/prompt.md, the instructions every iteration gets; put it back');
    expect(r.stderr).not.toContain('could not read the prompt');
    expect(git(dir, 'show', 'HEAD:ralph/prompt.md').length).toBeGreaterThan(0);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('is warned about, and prompt-only commits are not progress (exit 4)', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(
      dir,
      ['--agent-cmd', agent('misbehaver'), ...FAST, '--no-progress-limit', '1', '3'],
      misbehave('prompt'),
    );
    expect(r.stderr).toMatch(/the agent's commits changed ralph\/prompt\.md, the instructions every iteration gets/);
    expect(git(dir, 'show', 'HEAD:ralph/prompt.md')).not.toContain('IGNORE ALL RULES');
    expect(r.stderr).toContain('its commits change only the plan, progress.txt and the prompt');
    expect(r.stderr).toContain('no progress: 1 iteration in a row');
    expect(r.code).toBe(4);
  });
});

// Prints 30 numbered lines with shell built-ins (no interpreter to load, so they are out within milliseconds
// of the spawn however loaded the machine is), then blocks for good: only the timeout can end it.
const NOISY_HANG = 'i=1; while [ $i -le 30 ]; do echo "working line $i"; i=$((i+1)); done; exec sleep infinity';

describe('an iteration that times out', () => {
  it('leaves a block in progress.txt with the tail of its output, and a trailer in its log', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, [
      '--agent-cmd',
      NOISY_HANG,
      ...FAST,
      '--iteration-timeout',
      '2s',
      '--name',
      'slow',
      '1',
    ]);
    expect(r.code).toBe(1);
    const log = progress(dir);
    expect(log).toContain('ralph: iteration 1 timed out after 2s; the agent and everything it started were killed.');
    expect(log).toContain('working line 30');
    expect(log).toContain('working line 11');
    expect(log).not.toContain('working line 10\n');
    // Committed by the runner, so the next agent's claims are not rejected for it.
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const iterationLog = readFileSync(path.join(dir, 'ralph/.runs/slow/iteration-1.log'), 'utf8');
    expect(iterationLog.trimEnd().split('\n').at(-1)).toBe(
      '[ralph] iteration 1 timed out after 2s; the agent and everything it started were killed',
    );
  });
});
