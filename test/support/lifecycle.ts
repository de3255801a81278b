// Helpers for the loop lifecycle tests: a plan repository run in-process through runEngine, and stand-ins for
// processes that reuse a dead runner's pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { gitdir } from './repo.js';
import { agent, renderPlan } from './loop-repo.js';
import { runEngine } from '../../src/engine/entry.js';
import type { ParallelState } from '../../src/engine/store/state-types.js';

export const WORKER = ['--agent-cmd', agent('worker'), '--pause', '0'];
export const HAS_PROC = process.platform === 'linux';

/** A repository with a plan and prompt committed on main (no installer needed in-process). */
export function planRepo(plan = renderPlan()): string {
  return gitdir({ 'ralph/prd.json': plan, 'ralph/prompt.md': 'Do the next story.\n', 'ralph/.gitignore': '.runs/\n' });
}

/** runEngine (ralph.mjs) in-process: exit code and everything it printed. */
export async function engine(cwd: string, argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runEngine(argv, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@e',
      ...env,
    },
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
  });
  return { code, stdout, stderr };
}

/**
 * A live process that is not a runner, in its own process group (so signalling its group would kill it), killed
 * when the test ends. It stands in for a pid the OS handed to someone else after a runner was killed with -9.
 */
export function spawnStranger(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore', detached: true });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

export interface FakeLoop {
  id: string;
  pid: number;
  pidStart?: number;
  agentPid?: number;
  agentPidStart?: number;
  /** A --parallel run's workers and merge queue, as the runner records them. */
  parallel?: ParallelState;
}

/** Writes ralph/.runs/<id>/state.json of a loop that says it is running, and optionally its PRD lock. */
export function writeRunningLoop(dir: string, loop: FakeLoop, lockFile?: string): string {
  const now = new Date().toISOString();
  const state = {
    iteration: 1,
    iterationDone: false,
    maxIterations: 10,
    status: 'running',
    agent: 'claude',
    prd: 'ralph/prd.json',
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: {},
    ...loop,
  };
  const file = path.join(dir, 'ralph/.runs', loop.id, 'state.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(state));
  if (lockFile) {
    mkdirSync(path.dirname(lockFile), { recursive: true });
    writeFileSync(
      lockFile,
      JSON.stringify({
        pid: loop.pid,
        pidStart: loop.pidStart,
        loopId: loop.id,
        prd: path.join(dir, 'ralph/prd.json'),
      }),
    );
  }
  return file;
}
