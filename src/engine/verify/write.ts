// The runner's own writes during a loop (prd.json, progress.txt, the ledger, the prd-before snapshot, state.json,
// the iteration logs). One that fails (a read-only folder, EACCES, a full disk) ends the loop with a message
// naming the file and what to do, never with a stack: a verdict that could not be recorded must not look decided.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { LoopExit } from '../types.js';

// Exit 1, as for any error the runner did not cause on purpose; the state says `failed`, not max-iterations.
const EXIT_CODE = 1;

export class RunnerFileError extends LoopExit {
  /** run.ts records this as the loop's status instead of the one its exit code would map to. */
  readonly status = 'failed' as const;
  readonly file: string;
  constructor(file: string, message: string, hint: string) {
    super(EXIT_CODE, message, hint);
    this.name = 'RunnerFileError';
    this.file = file;
  }
}

/**
 * A stop the runner chooses because going on could misfile or lose the user's work (an agent that left the loop's
 * branch, rewrote its history, or removed the prompt): exit 1 and state `failed`, with a message and a hint, no stack.
 * It extends RunnerFileError only because run.ts maps that class to `failed`; `file` is empty (no file is at fault).
 */
export class LoopFailure extends RunnerFileError {
  constructor(message: string, hint: string) {
    super('', message, hint);
    this.name = 'LoopFailure';
  }
}

/**
 * Runs `write`; a file-system error becomes a RunnerFileError naming `file` (relative to `repoRoot`) and saying
 * what it means (`consequence`). Other errors (bugs) keep their stack.
 */
export function guardWrite<T>(file: string, repoRoot: string, write: () => T, consequence?: string): T {
  try {
    return write();
  } catch (err) {
    if (err instanceof LoopExit || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw renderWriteError(file, repoRoot, err as Error, consequence);
  }
}

export function renderWriteError(file: string, repoRoot: string, err: Error, consequence?: string): RunnerFileError {
  const rel = path.relative(repoRoot, file).split(path.sep).join('/') || file;
  const shown = rel.startsWith('../') ? file : rel;
  const folder = path.dirname(shown);
  return new RunnerFileError(
    file,
    `could not write ${shown} (${describeError(err)})${consequence ? `: ${consequence}` : ''}`,
    `make ${shown} and its folder writable for this user (e.g. chmod u+w ${folder} ${shown}), then continue with: ./ralph/ralph.sh --resume-last`,
  );
}

// "EACCES: permission denied, open '/repo/ralph/.prd.json.123.tmp'" → "EACCES: permission denied": the temp
// file's name is noise, the file that matters is already named.
export function describeError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  const short = err.message.split(',')[0];
  return code && short.startsWith(code) ? short : err.message;
}

// ralph/.runs/check-leftovers.json: files the runner saw checks leave in the working tree (it warned then), kept so
// that a later start refused for those very files can say they belong in .gitignore instead of guessing.
const LEFTOVERS_FILE = 'check-leftovers.json';
const MAX_LEFTOVERS = 200;

/** Adds `paths` to the record in `runsDir`; best effort, since it only sharpens a later hint. */
export function recordCheckLeftovers(runsDir: string, paths: readonly string[]): void {
  const all = [...new Set([...paths, ...readCheckLeftovers(runsDir)])].slice(0, MAX_LEFTOVERS);
  try {
    atomicWriteFileSync(path.join(runsDir, LEFTOVERS_FILE), `${JSON.stringify({ paths: all })}\n`);
  } catch {
    /* the warning was printed anyway */
  }
}

export function readCheckLeftovers(runsDir: string): string[] {
  try {
    const { paths } = JSON.parse(readFileSync(path.join(runsDir, LEFTOVERS_FILE), 'utf8')) as { paths?: unknown };
    return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
