// The engine's error kinds. Anything that ends a loop on purpose throws a LoopExit (a RalphkitError): it carries
// the exit code (SPEC §4), the status recorded in state.json, the message and a hint saying what to type next.
// run/run.ts records it and entry.ts turns it into the process's exit code: the only two places that read it.
import { readlinkSync } from 'node:fs';
import path from 'node:path';
import type { LoopStatus } from './store/state-types.js';
import { showPath } from '../util/repo-path.js';
import { shellQuote } from '../util/shell-quote.js';
import { RalphkitError } from '../util/errors.js';
import { linkOnTheWay } from '../util/read.js';

export const LOOP_EXIT = {
  complete: 0,
  maxIterations: 1,
  refused: 2,
  stuck: 3,
  noProgress: 4,
  budget: 5,
  protected: 6,
  notMerged: 7,
  interrupted: 130,
} as const;

/**
 * Exit 1 when the loop did not reach its end on purpose: an unexpected error, a runner file not written, a bad
 * command line (SPEC §4 shares 1 with max iterations; LOOP_EXIT, the help's table, names it once as that).
 */
export const EXIT_FAILURE = 1;

/** A loop's status, or `usage` for a command line refused before any loop existed. */
export type ExitStatus = LoopStatus | 'usage';

// Exit 1 has no single meaning (max iterations, bad usage, a failure), so it is given where it is thrown.
const STATUS_BY_CODE: Partial<Record<number, LoopStatus>> = {
  0: 'complete',
  2: 'refused',
  3: 'stuck',
  4: 'no-progress',
  5: 'budget',
  6: 'protected',
  7: 'not-merged',
  130: 'interrupted',
};

/** Thrown anywhere in the engine to end the loop with a given code and status (the one base class, util/errors.ts). */
export class LoopExit extends RalphkitError {
  declare readonly hint?: string;
  declare readonly status: ExitStatus;
  constructor(code: number, message: string, hint?: string, status?: ExitStatus) {
    super(message, { exitCode: code, hint, status: status ?? STATUS_BY_CODE[code] ?? 'failed' });
    this.name = 'LoopExit';
  }

  /** The exit code (the base class's exitCode, by the engine's older name). */
  get code(): number {
    return this.exitCode;
  }
}

/** A bad command line: exit 1, status `usage`. */
export function usageExit(message: string, hint = 'see ./ralph/ralph.sh --help'): LoopExit {
  return new LoopExit(EXIT_FAILURE, message, hint, 'usage');
}

/** A runner's own file that could not be written (a read-only folder, EACCES, a full disk): exit 1, status `failed`. */
export class RunnerFileError extends LoopExit {
  readonly file: string;
  /** The cause is a full disk (or quota), not the file's permissions: the fix is the same for every file. */
  readonly diskFull: boolean;
  constructor(file: string, message: string, hint: string, diskFull = false) {
    super(EXIT_FAILURE, message, hint, 'failed');
    this.name = 'RunnerFileError';
    this.file = file;
    this.diskFull = diskFull;
  }
}

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
// What git prints when a write fails for want of space: strerror's words, or its own "Out of diskspace", ending a
// fatal: or error: line. Anchored at the end: git quotes paths the agent named, so the words anywhere else could be
// a file name, and a claim would then stop the loop instead of being rejected.
const GIT_DISK_FULL = /^(?:fatal|error): (.*(?:No space left on device|Out of diskspace|Disk quota exceeded))\.?\s*$/im;

export function isDiskFull(err: unknown): boolean {
  return DISK_FULL_CODES.has((err as NodeJS.ErrnoException)?.code ?? '');
}

function diskFullHint(repoRoot: string): string {
  return `free some space on the disk that holds ${repoRoot}, then continue with: ./ralph/ralph.sh --resume-last`;
}

/** A git command that failed because the disk is full, as a RunnerFileError (exit 1) instead of a stack trace; else null. */
export function gitDiskFullError(repoRoot: string, command: string, stderr: string): RunnerFileError | null {
  const said = GIT_DISK_FULL.exec(stderr)?.[1];
  if (said === undefined) return null;
  return new RunnerFileError(
    path.join(repoRoot, '.git'),
    `the disk is full: ${command} could not write (${said})`,
    diskFullHint(repoRoot),
    true,
  );
}

/** A stop the runner cannot go on from without the owner (the agent removed the prompt): exit 1, status `failed`. */
export class LoopFailure extends LoopExit {
  constructor(message: string, hint: string) {
    super(EXIT_FAILURE, message, hint, 'failed');
    this.name = 'LoopFailure';
  }
}

/**
 * A stop to protect work (SPEC §4): going on could misfile or lose it, because the agent rewrote the history of the
 * plan's branch or the runner cannot return to that branch. Exit 6 and status `protected`, so scripts can tell it
 * from a limit (exit 1).
 */
export class WorkProtected extends LoopExit {
  constructor(message: string, hint: string) {
    super(LOOP_EXIT.protected, message, hint, 'protected');
    this.name = 'WorkProtected';
  }
}

/**
 * A verification checkout that cannot be trusted (SPEC §6): an object that does not hash to its id, a committed link
 * that leads out of the checkout. The claims checked there are rejected with this message as the reason.
 */
export class SealBroken extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealBroken';
  }
}

/**
 * Runs `write`; a file-system error becomes a RunnerFileError naming `file` (relative to `repoRoot`) and saying
 * what it means (`consequence`). Other errors (bugs) keep their stack: a verdict that could not be recorded
 * must not look decided.
 */
export function guardWrite<T>(file: string, repoRoot: string, write: () => T, consequence?: string): T {
  refuseLinkedFolders(file, repoRoot);
  try {
    return write();
  } catch (err) {
    if (err instanceof LoopExit || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw renderWriteError(file, repoRoot, err as Error, consequence);
  }
}

/**
 * The runner writes its files in the repository (the plan, progress.txt) only through folders of the repository: a
 * folder between `repoRoot` and `file` that is a link was put there by someone else (the agent can replace `ralph/`
 * with a link to a folder outside), and the runner's text would land there: exit 6.
 */
export function refuseLinkedFolders(file: string, repoRoot: string): void {
  const rel = path.relative(repoRoot, file);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return;
  const at = linkOnTheWay(repoRoot, file);
  if (at)
    throw new LoopExit(
      LOOP_EXIT.protected,
      `${showPath(repoRoot, at)} is a link (to ${readlinkSync(at)}), so the runner's ${showPath(repoRoot, file)} would be written somewhere else: the runner writes its files only into folders of the repository`,
      `look at it (ls -la ${shellQuote(showPath(repoRoot, at))}); put the folder back (git checkout -- ${shellQuote(showPath(repoRoot, at))}), then continue with: ./ralph/ralph.sh --resume-last`,
    );
}

export function renderWriteError(file: string, repoRoot: string, err: Error, consequence?: string): RunnerFileError {
  const shown = showPath(repoRoot, file);
  const folder = path.dirname(shown);
  if (isDiskFull(err)) {
    return new RunnerFileError(
      file,
      `the disk is full: could not write ${shown} (${describeError(err)})${consequence ? `: ${consequence}` : ''}`,
      diskFullHint(repoRoot),
      true,
    );
  }
  return new RunnerFileError(
    file,
    `could not write ${shown} (${describeError(err)})${consequence ? `: ${consequence}` : ''}`,
    `make ${shown} and its folder writable for this user (e.g. chmod u+w ${shellQuote(folder)} ${shellQuote(shown)}), then continue with: ./ralph/ralph.sh --resume-last`,
  );
}

// "EACCES: permission denied, open '/repo/ralph/.prd.json.123.tmp'" → "EACCES: permission denied": the temp
// file's name is noise, the file that matters is already named.
export function describeError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  const short = err.message.split(',')[0];
  return code && short.startsWith(code) ? short : err.message;
}
