// The installed runner when its final state.json cannot be saved: the loop's own outcome (exit code, status,
// loop id) is still reported, with an error naming state.json; the exit code stays the loop's. The runner is
// interrupted while it pauses between iterations, after its last save, so only the final save meets the fault.
import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { asNobodyOptions, handOver, nobodyAgent, runCliAsNobody } from '../support/nobody.js';
import { gitEnv, runnerArgs, testdir, type RunResult } from '../support/repo.js';
import { jsonEvents, loopRepo } from '../support/loop-repo.js';
import { until } from '../support/process.js';

const NO_STACK = /unexpected error|\n\s+at /;

function startAs(dir: string, args: string[], env: NodeJS.ProcessEnv, asNobody: boolean) {
  const child = spawn(path.join(dir, 'ralph/ralph.sh'), runnerArgs('ralph.sh', args), {
    cwd: dir,
    env: { ...gitEnv(), FORCE_COLOR: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asNobody ? asNobodyOptions() : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  onTestFinished(() => void child.kill('SIGKILL'));
  const done = new Promise<RunResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

function iterationOneSaved(runDir: string): boolean {
  try {
    const s = JSON.parse(readFileSync(path.join(runDir, 'state.json'), 'utf8'));
    return s.iteration === 1 && s.iterationDone === true;
  } catch {
    return false;
  }
}

const FAULTS: Array<[string, boolean, (runDir: string) => void, RegExp]> = [
  [
    'state.json is replaced by a folder',
    false,
    (runDir) => {
      rmSync(path.join(runDir, 'state.json'));
      mkdirSync(path.join(runDir, 'state.json/in-the-way'), { recursive: true });
    },
    /EISDIR|ENOTEMPTY|EEXIST/,
  ],
  [
    'the loop folder is made read-only',
    true,
    (runDir) => {
      chmodSync(runDir, 0o555);
      onTestFinished(() => chmodSync(runDir, 0o755));
    },
    /EACCES/,
  ],
];

describe('the final state.json cannot be saved', () => {
  it.each(FAULTS)(
    '%s: the exit event keeps the loop id, status and code (130), and names state.json',
    async (_what, asNobody, breakIt, errno) => {
      const dir = loopRepo();
      const home = testdir();
      if (asNobody) handOver(dir, home); // git refuses a repository owned by another user, so only when it runs as nobody
      const runDir = path.join(dir, 'ralph/.runs/fin');
      const loop = startAs(
        dir,
        ['--agent-cmd', nobodyAgent('worker'), '--pause', '60s', '--name', 'fin', '--json', '5'],
        { HOME: home },
        asNobody,
      );
      await until('iteration 1 to be saved', () => iterationOneSaved(runDir), 20_000);
      breakIt(runDir);
      loop.child.kill('SIGTERM');
      const r = await loop.done;

      expect(r.code, r.stderr).toBe(130);
      const exit = jsonEvents(r.stdout).at(-1);
      expect(exit).toMatchObject({
        type: 'exit',
        loop: 'fin',
        code: 130,
        status: 'interrupted',
        iteration: 1,
        message: 'interrupted; state saved',
      });
      expect(exit?.stateError).toMatch(
        /^could not write ralph\/\.runs\/fin\/state\.json \(([A-Z]+)[^)]*\): the loop state could not be saved, so how the loop ended \(interrupted, exit 130\) is not recorded$/,
      );
      expect(String(exit?.stateError)).toMatch(errno);
      expect(exit?.hint).toBe(
        "continue with: ./ralph/ralph.sh --resume-last; make ralph/.runs/fin/ a folder this user can write (chmod u+w ralph/.runs/fin) with nothing in the way of state.json; the work is in the plan and in git, only the loop's record is stale",
      );
      expect(r.stderr).toMatch(
        /^ralph: interrupted; state saved \(exit 130\)\nralph: error: could not write ralph\/\.runs\/fin\/state\.json/m,
      );
      expect(r.stderr).not.toMatch(NO_STACK);
    },
  );

  it('a read-only loop folder leaves state.json saying running: status lists the loop as dead, not alive', async () => {
    const dir = loopRepo();
    const home = testdir();
    handOver(dir, home);
    const runDir = path.join(dir, 'ralph/.runs/ro');
    const loop = startAs(
      dir,
      ['--agent-cmd', nobodyAgent('worker'), '--pause', '60s', '--name', 'ro', '5'],
      { HOME: home },
      true,
    );
    await until('iteration 1 to be saved', () => iterationOneSaved(runDir), 20_000);
    FAULTS[1][2](runDir);
    loop.child.kill('SIGTERM');
    expect((await loop.done).code).toBe(130);
    const status = await runCliAsNobody(['status', '--json'], { cwd: dir, env: { HOME: home } });
    expect(JSON.parse(status.stdout).loops).toEqual([
      expect.objectContaining({ id: 'ro', status: 'dead', alive: false }),
    ]);
  });
});
