// The Stop hook (src/engine/hook/stop.ts) in-process on real git: `hook start` then `hook stop` as Claude Code runs
// them, the session's work played by the test between the two. A failing check sends the session back; honest work
// ends the loop; a pins ref moved between two stops (the session's git can write .git/refs) ends it with exit 6
// instead of being sealed again and used (issue 26, class 6, for in-session loops).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runHookStart } from '../../../../src/engine/hook/start.js';
import { runHookStop } from '../../../../src/engine/hook/stop.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import { git, gitdir } from '../../../support/repo.js';
import { unpinGitDirs } from '../../../../src/engine/git/git.js';
import { plan, story } from '../../../support/verify-repo.js';
import { keyEnv, useKeyEnv } from '../../../support/verdict-note.js';
import { readLoopSummaries } from '../../../../src/engine/store/summaries.js';
import { resolveViewPaths } from '../../../../src/view/snapshot.js';
import { readPrdSnapshot } from '../../../../src/view/prd-body.js';

const SESSION = 'sess-1';
const PINS = `refs/ralphkit/loops/${SESSION}/pins`;
// The check runs a script the plan names: pinned at the plan commit, so a weakened copy in a later commit is not run.
const CHECKED = plan([story('US-1', { checks: ['sh check.sh'] })]);

function sessionRepo(): { dir: string; env: NodeJS.ProcessEnv } {
  const env = { ...process.env, ...keyEnv(), CLAUDE_CODE_SESSION_ID: SESSION, RALPH_RUNNER: '', RALPH_REVIEW: '' };
  useKeyEnv(env);
  const dir = gitdir({
    'ralph/prd.json': `${JSON.stringify(CHECKED, null, 2)}\n`,
    'ralph/prompt.md': '# work on the next story\n',
    'ralph/progress.txt': '# Ralph Progress Log\n',
    'ralph/.gitignore': '.runs/\n',
    'check.sh': 'test -f feature.txt\n',
  });
  return { dir, env };
}

function io(dir: string, env: NodeJS.ProcessEnv) {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: { cwd: dir, env, stdout: (t: string) => void (out.stdout += t), stderr: (t: string) => void (out.stderr += t) },
  };
}

async function start(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { out, io: hookIo } = io(dir, env);
  expect(await runHookStart(['--max-iterations', '5'], hookIo), out.stderr).toBe(0);
}

async function stop(dir: string, env: NodeJS.ProcessEnv): Promise<{ stdout: Record<string, string>; stderr: string }> {
  const { out, io: hookIo } = io(dir, env);
  const input = JSON.stringify({
    session_id: SESSION,
    hook_event_name: 'Stop',
    stop_hook_active: false,
    last_assistant_message: 'done',
  });
  expect(await runHookStop([], hookIo, async () => input)).toBe(0);
  return { stdout: JSON.parse(out.stdout), stderr: out.stderr };
}

const stateOf = (dir: string): LoopState =>
  JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', SESSION, 'state.json'), 'utf8'));

/** The session's turn: files written, US-1 flipped to passes: true, all committed. */
function claim(dir: string, files: Record<string, string>): string {
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const file = path.join(dir, 'ralph/prd.json');
  const p = JSON.parse(readFileSync(file, 'utf8'));
  p.userStories[0].passes = true;
  writeFileSync(file, `${JSON.stringify(p, null, 2)}\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'feat: US-1');
  return git(dir, 'rev-parse', 'HEAD');
}

describe('hook stop', () => {
  it('a claim whose check fails is sent back with the reason; the honest work after it ends the loop verified', async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);

    claim(dir, {});
    const first = await stop(dir, env);
    expect(first.stdout.decision).toBe('block');
    expect(first.stdout.reason).toContain('- US-1: check `sh check.sh` exited 1');
    expect(first.stdout.reason).toContain('# work on the next story');
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')).userStories[0].passes).toBe(false);
    expect(stateOf(dir)).toMatchObject({ status: 'running', iteration: 1, iterationDone: true });

    claim(dir, { 'feature.txt': 'done\n' });
    const second = await stop(dir, env);
    expect(second.stdout.systemMessage).toMatch(/ended \(complete\) after 2 stops/);
    expect(stateOf(dir)).toMatchObject({ status: 'complete', exitCode: 0, iteration: 2 });
  });

  it('pins moved between two stops to a commit with a weakened check: the loop ends protected (6) with the commands that put them back, and nothing is sealed again', async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);
    const planCommit = git(dir, 'rev-parse', PINS);
    const first = await stop(dir, env);
    expect(first.stdout.decision).toBe('block');
    const seal = readFileSync(path.join(dir, 'ralph/.runs', SESSION, 'anchors.json'), 'utf8');

    // The session weakens the pinned check in a commit of its own, points the loop's pins at it, and claims.
    const weakened = claim(dir, { 'check.sh': 'exit 0\n' });
    execFileSync('git', ['update-ref', PINS, weakened], { cwd: dir });
    const second = await stop(dir, env);

    expect(second.stdout.systemMessage).toMatch(/ended \(protected\) after 2 stops/);
    expect(second.stderr).toContain(
      `${PINS} (its plan commit: the tests checks run with) points at ${weakened.slice(0, 12)}, but the loop recorded ${planCommit.slice(0, 12)}`,
    );
    expect(second.stderr).toContain(`git update-ref ${PINS} ${planCommit}`);
    expect(second.stderr).toContain('/ralph-loop');
    expect(stateOf(dir)).toMatchObject({ status: 'protected', exitCode: 6 });
    expect(stateOf(dir).message).toContain(`git update-ref ${PINS} ${planCommit}`);
    // Neither verified nor resealed: the claim stands unjudged, the seal still names the plan commit.
    expect(readFileSync(path.join(dir, 'ralph/.runs', SESSION, 'anchors.json'), 'utf8')).toBe(seal);
    expect(git(dir, 'rev-parse', PINS)).toBe(weakened);
  });

  it('an honest session between two stops (no ref moved): the seal holds, and each stop seals the plan record it settles', async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);
    const planCommit = git(dir, 'rev-parse', PINS);
    const anchors = () => JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', SESSION, 'anchors.json'), 'utf8'));
    expect(anchors()).toMatchObject({
      loop: SESSION,
      pins: planCommit,
      plan: git(dir, 'rev-parse', `refs/ralphkit/loops/${SESSION}/plan`),
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    expect((await stop(dir, env)).stdout.decision).toBe('block');
    claim(dir, { 'feature.txt': 'done\n' });
    expect((await stop(dir, env)).stdout.systemMessage).toMatch(/ended \(complete\)/);
    expect(anchors()).toMatchObject({
      pins: planCommit,
      plan: git(dir, 'rev-parse', `refs/ralphkit/loops/${SESSION}/plan`),
    });
  });

  it("--verify-in-place comes from hook start's seal, never from state.json: a session that asks for it there (and hides a rewritten check with skip-worktree) is verified in a fresh checkout with the pinned check", async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);
    const file = path.join(dir, 'ralph/.runs', SESSION, 'state.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(
      file,
      `${JSON.stringify({ ...state, options: { ...state.options, verifyInPlace: true } }, null, 2)}\n`,
    );
    git(dir, 'update-index', '--skip-worktree', 'check.sh');
    claim(dir, { 'check.sh': 'exit 0\n' });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const first = await stop(dir, env);
    expect(first.stdout.decision).toBe('block');
    expect(first.stdout.reason).toContain('- US-1: check `sh check.sh` exited 1');
    const log = readFileSync(path.join(dir, 'ralph/.runs', SESSION, 'hook.log'), 'utf8');
    expect(log).toMatch(
      /verifying in a fresh checkout: the loop's state asks for checks in the working tree \(--verify-in-place\), which hook start did not seal/,
    );

    // Started with --verify-in-place, the stops verify in the working tree, as the user asked.
    const { dir: own, env: ownEnv } = sessionRepo();
    const { out, io: hookIo } = io(own, ownEnv);
    expect(await runHookStart(['--max-iterations', '5', '--verify-in-place'], hookIo), out.stderr).toBe(0);
    claim(own, { 'feature.txt': 'done\n' });
    expect((await stop(own, ownEnv)).stdout.systemMessage).toMatch(/ended \(complete\) after 1 stop/);
    expect(readFileSync(path.join(own, 'ralph/.runs', SESSION, 'hook.log'), 'utf8')).toContain(
      'final gate: every check once more in the working tree at',
    );
  });

  it('.git pointed at another repository between two stops: the stop ends the loop protected (6) before verifying anything there', async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);
    const evil = path.join(dir, '.evil');
    git(dir, 'init', '-q', '--bare', evil);
    git(evil, 'config', 'core.bare', 'false');
    writeFileSync(path.join(evil, 'objects/info/alternates'), `${path.join(dir, '.git/objects')}\n`);
    // Its refs are the real ones (the loop's sealed refs too): only where git looks has changed.
    for (const ref of ['refs/heads/main', PINS, `refs/ralphkit/loops/${SESSION}/plan`])
      git(evil, 'update-ref', ref, git(dir, 'rev-parse', ref));
    renameSync(path.join(dir, '.git'), path.join(dir, '.real'));
    writeFileSync(path.join(dir, '.git'), `gitdir: ${evil}\n`);
    unpinGitDirs(dir); // each stop is a process of its own: nothing held from hook start's
    const ended = await stop(dir, env);
    expect(ended.stderr).toContain("the tree's .git names another git folder");
    expect(ended.stdout.systemMessage).toMatch(/ended \(protected\)/);
    expect(stateOf(dir)).toMatchObject({ exitCode: 6 });
  });

  it("a session's verdicts are held against the branch it ran on (not the plan's branchName): a later commit there that breaks the work leaves status and the dashboard without a verified story", async () => {
    const { dir, env } = sessionRepo();
    await start(dir, env);
    expect(stateOf(dir)).toMatchObject({ branch: 'main' });
    claim(dir, { 'feature.txt': 'done\n' });
    expect((await stop(dir, env)).stdout.systemMessage).toMatch(/ended \(complete\)/);
    const verifiedCards = () =>
      readPrdSnapshot(resolveViewPaths(dir)).cards?.filter((c) => c.verification === 'verified').length;
    expect(readLoopSummaries(dir, env)[0]).toMatchObject({ verified: 1 });
    expect(verifiedCards()).toBe(1);
    // The plan names ralph/demo, which does not exist: the session's branch is main, where the work is then undone.
    git(dir, 'rm', '-q', 'feature.txt');
    git(dir, 'commit', '-qm', 'undo the work');
    expect(readLoopSummaries(dir, env)[0]).toMatchObject({ verified: 0 });
    expect(verifiedCards()).toBe(0);
  });
});
