// Which git the runner runs, and git's synchronous form for the readers that must be synchronous (status and the
// dashboard's snapshots read the sealed record and the loop's plan): hardened like every git call of the runner's,
// with a timeout and an output limit.
import { execFileSync } from 'node:child_process';
import { findExecutable } from '../../util/which.js';
import { hardenedArgs, hardenedGitEnv } from './harden.js';

const SYNC_TIMEOUT_MS = 30_000;
const SYNC_MAX_OUTPUT = 64 * 1024 * 1024;

// git's path, looked up on the runner's PATH once (not by every spawn, which blocks until the child has tried each
// folder): a `git` the agent drops into an earlier PATH folder later on is never the one the runner runs.
let resolvedGit: { pathVar: string | undefined; file: string } | null = null;

export function gitProgram(): string {
  const pathVar = process.env.PATH;
  // None found: the system looks it up (Windows through PATHEXT), from each call's own cwd.
  if (!resolvedGit || resolvedGit.pathVar !== pathVar)
    resolvedGit = { pathVar, file: findExecutable('git', process.env) ?? 'git' };
  return resolvedGit.file;
}

/** One hardened git command, synchronously: its stdout as bytes, or null when git failed, timed out or could not start. */
export function gitSyncBytes(cwd: string, args: string[], input?: string): Buffer | null {
  try {
    return execFileSync(gitProgram(), hardenedArgs(args), {
      cwd,
      env: hardenedGitEnv(process.env, gitProgram()),
      input: input ?? '',
      maxBuffer: SYNC_MAX_OUTPUT,
      timeout: SYNC_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      stdio: ['pipe', 'pipe', 'ignore'],
    });
  } catch {
    return null;
  }
}

/** gitSyncBytes as UTF-8 text. */
export function gitSync(cwd: string, args: string[], input?: string): string | null {
  return gitSyncBytes(cwd, args, input)?.toString('utf8') ?? null;
}
