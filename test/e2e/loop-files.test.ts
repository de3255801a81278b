// The installed runner when it cannot write its own loop files (ralph/.runs/: locks, state.json, the iteration
// logs): a refusal or a clear error naming the file and the fix, never a stack. Root ignores file modes, so most
// cases put a file where a folder is expected; the read-only case runs the runner as `nobody`.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { asNobodyOptions, handOver, nobodyAgent } from '../support/nobody.js';
import { run, testdir } from '../support/repo.js';
import { agent, AGENTS, loopRepo } from '../support/loop-repo.js';

const FAST = ['--pause', '0'];
const NO_STACK = /unexpected error|\n\s+at /;

function ralph(dir: string, args: string[], env: NodeJS.ProcessEnv = {}, asNobody = false) {
  return run(path.join(dir, 'ralph/ralph.sh'), args, { cwd: dir, env, ...(asNobody ? asNobodyOptions() : {}) });
}

function readState(dir: string, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', id, 'state.json'), 'utf8')) as Record<string, unknown>;
}

/** An agent that replaces its own run folder with a file, so the runner's next state.json write fails. */
function writeFolderBreakingAgent(dir: string): string {
  const file = path.join(dir, 'breaker.mjs');
  writeFileSync(
    file,
    [
      `import { rmSync, writeFileSync } from 'node:fs';`,
      `import { readPrompt } from ${JSON.stringify(path.join(AGENTS, '_lib.mjs'))};`,
      `readPrompt(); const runDir = process.env.RALPH_RUN_DIR;`,
      `rmSync(runDir, { recursive: true, force: true }); writeFileSync(runDir, 'not a folder');`,
      `console.log('done');`,
    ].join('\n'),
  );
  return file;
}

describe('the runner cannot write its loop files', () => {
  it('ralph/.runs is a file: the start is refused (exit 2) naming the folder and the fix; the agent never runs', async () => {
    const dir = loopRepo();
    writeFileSync(path.join(dir, 'ralph/.runs'), 'not a folder');
    const marker = path.join(testdir(), 'ran');
    const r = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '1'], { FAKE_MARKER: marker });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /ralph: could not write ralph\/\.runs\/locks\/[0-9a-f]+\.lock \((ENOTDIR|EEXIST)[^)]*\): the loop cannot take its lock, so it did not start; nothing was changed/,
    );
    expect(r.stderr).toContain('ralph/.runs/ must be a folder this user can write');
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(existsSync(marker)).toBe(false);
  });

  it('state.json cannot be written at the start (read-only ralph/.runs): refused with exit 2, nothing recorded', async () => {
    const dir = loopRepo();
    const home = testdir();
    const runs = path.join(dir, 'ralph/.runs');
    mkdirSync(path.join(runs, 'locks'), { recursive: true });
    handOver(dir, home);
    chmodSync(runs, 0o555);
    onTestFinished(() => chmodSync(runs, 0o755));
    const r = await ralph(
      dir,
      ['--agent-cmd', nobodyAgent('silent'), ...FAST, '--name', 'ro', '1'],
      { HOME: home },
      true,
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'ralph: could not write ralph/.runs/ro/state.json (EACCES: permission denied): the loop cannot record its state, so it did not start; nothing was changed (exit 2)',
    );
    expect(r.stderr).toContain('ralph/.runs/ must be a folder this user can write: fix its permissions (chmod u+w)');
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(readdirSync(runs).sort()).toEqual(['locks']);
    expect(readdirSync(path.join(runs, 'locks'))).toEqual([]); // both locks released
  });

  it('state.json cannot be written mid-run: exit 1 naming state.json, no stack', async () => {
    const dir = loopRepo();
    const agentFile = writeFolderBreakingAgent(testdir());
    const r = await ralph(dir, [
      '--agent-cmd',
      `node ${JSON.stringify(agentFile)}`,
      ...FAST,
      '--name',
      'mid',
      '--json',
      '2',
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /ralph: could not write ralph\/\.runs\/mid\/state\.json \((ENOTDIR|EEXIST)[^)]*\): the loop state could not be saved/,
    );
    expect(r.stderr).toContain('then continue with: ./ralph/ralph.sh --resume-last');
    expect(r.stderr).not.toMatch(NO_STACK);
    // The final save fails the same way; the exit event still names the loop and says it failed.
    const exit = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(exit).toMatchObject({
      type: 'exit',
      loop: 'mid',
      code: 1,
      status: 'failed',
      stateError: expect.stringMatching(/^could not write ralph\/\.runs\/mid\/state\.json .*is not recorded$/),
    });
  });

  it('the iteration log cannot be created: exit 1 naming the log, state failed, the agent never started', async () => {
    const dir = loopRepo();
    mkdirSync(path.join(dir, 'ralph/.runs/lg/iteration-1.log'), { recursive: true });
    const marker = path.join(testdir(), 'ran');
    const r = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '--name', 'lg', '1'], { FAKE_MARKER: marker });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'ralph: could not write ralph/.runs/lg/iteration-1.log (EISDIR: illegal operation on a directory): the agent was not started (exit 1)',
    );
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(existsSync(marker)).toBe(false);
    expect(readState(dir, 'lg')).toMatchObject({ status: 'failed', exitCode: 1, iteration: 1, iterationDone: false });
  });

  it('the disk fills while the agent writes its log: the agent finishes, then exit 1 naming the log, state failed', async () => {
    const dir = loopRepo();
    const runDir = path.join(dir, 'ralph/.runs/full');
    mkdirSync(runDir, { recursive: true });
    symlinkSync('/dev/full', path.join(runDir, 'iteration-1.log'));
    onTestFinished(() => rmSync(path.join(runDir, 'iteration-1.log'), { force: true }));
    const marker = path.join(testdir(), 'ran');
    const r = await ralph(
      dir,
      ['--agent-cmd', `node ${JSON.stringify(agent('marker'))}; echo some output`, ...FAST, '--name', 'full', '1'],
      { FAKE_MARKER: marker },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'ralph: the disk is full: could not write ralph/.runs/full/iteration-1.log (ENOSPC: no space left on device): the agent ran but its output is missing from the log; the iteration is repeated on resume (exit 1)',
    );
    expect(r.stderr).toContain(
      `ralph: hint: free some space on the disk that holds ${dir}, then continue with: ./ralph/ralph.sh --resume-last`,
    );
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(readFileSync(marker, 'utf8')).toBe('iteration 1\n');
    expect(readState(dir, 'full')).toMatchObject({ status: 'failed', exitCode: 1, iterationDone: false });
  });
});
