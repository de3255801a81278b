// --on-exit '<command>': the user's command, run once when the loop ends, with sh -c in the repository root and the
// loop's ending in its environment (summary.ts renderOnExitEnv). In its own process group, so a timeout or a
// Ctrl-C stops everything it started; its output is shown afterwards, bounded; it can never change the exit code.
import { StringDecoder } from 'node:string_decoder';
import { TextTail } from '../agents/tail.js';
import { spawnInGroup } from '../group-spawn.js';
import { SHELL } from '../../util/which.js';

/** How long the command may run before its process group is stopped. */
export const ON_EXIT_TIMEOUT_MS = 30_000;
/** How much of its output (stdout and stderr together) is shown: the end of it. */
export const ON_EXIT_OUTPUT_BYTES = 4096;

export interface OnExitRun {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Each line of the command's output, after it ended. */
  show: (line: string) => void;
  warn: (message: string) => void;
  timeoutMs?: number;
}

/** Runs the command; resolves once it ended or was stopped (at most the timeout plus the kill grace and a drain), never rejects. */
export async function runOnExit(run: OnExitRun): Promise<void> {
  const timeoutMs = run.timeoutMs ?? ON_EXIT_TIMEOUT_MS;
  const output = new TextTail(ON_EXIT_OUTPUT_BYTES);
  const decoder = new StringDecoder('utf8');
  const push = (chunk: Buffer) => output.push(decoder.write(chunk));
  // What a process the command left behind (holding the pipes) can delay: the streams are let go after the drain.
  const exit = await spawnInGroup({
    file: SHELL,
    args: ['-c', run.command],
    cwd: run.cwd,
    env: run.env,
    timeoutMs,
    signal: run.signal,
    drainMs: DRAIN_MS,
    atEnd: 'keep',
    onStdout: push,
    onStderr: push,
  }).done;
  if (output.cut) run.show(`(the last ${ON_EXIT_OUTPUT_BYTES / 1024} KiB of its output)`);
  for (const line of output.text().split('\n')) if (line.trim()) run.show(line.trimEnd());
  const why = exit.spawnError
    ? `could not be started (${exit.spawnError.message})`
    : exit.stopped
      ? STOPPED[exit.stopped === 'timeout' ? 'timeout' : 'abort'](timeoutMs)
      : exit.code !== 0
        ? `exited ${exit.code ?? exit.signal}`
        : null;
  if (why) run.warn(`--on-exit command ${why}; the loop's exit code is unchanged`);
}

const DRAIN_MS = 2000;
const STOPPED = {
  timeout: (ms: number) => `ran longer than ${ms / 1000}s and was stopped`,
  abort: () => 'was stopped by an interrupt',
};
