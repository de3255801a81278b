// --on-exit '<command>': the user's command, run once when the loop ends, with sh -c in the repository root and the
// loop's ending in its environment (summary.ts renderOnExitEnv). In its own process group, so a timeout or a
// Ctrl-C stops everything it started; its output is shown afterwards, bounded; it can never change the exit code.
import { spawn } from 'node:child_process';
import { TextTail } from '../agents/tail.js';
import { KILL_GRACE_MS, stopGroup } from '../processes.js';

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

/** Runs the command; resolves once it ended or was stopped (at most the timeout plus the kill grace), never rejects. */
export function runOnExit(run: OnExitRun): Promise<void> {
  const timeoutMs = run.timeoutMs ?? ON_EXIT_TIMEOUT_MS;
  return new Promise((resolve) => {
    const output = new TextTail(ON_EXIT_OUTPUT_BYTES);
    const child = spawn('/bin/sh', ['-c', run.command], { cwd: run.cwd, env: run.env, detached: process.platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    let stopped: string | null = null;
    const stop = (why: string) => {
      stopped ??= why;
      stopGroup(child.pid);
    };
    const timer = setTimeout(() => stop(`ran longer than ${timeoutMs / 1000}s and was stopped`), timeoutMs);
    const onAbort = () => stop('was stopped by an interrupt');
    run.signal.addEventListener('abort', onAbort, { once: true });
    // What a process the command left behind (holding the pipes) can delay: the streams are let go at this point.
    const deadline = setTimeout(() => finish(null, null), timeoutMs + KILL_GRACE_MS + 2000);
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => output.push(d.toString('utf8')));
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      run.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      if (output.cut) run.show(`(the last ${ON_EXIT_OUTPUT_BYTES / 1024} KiB of its output)`);
      for (const line of output.text().split('\n')) if (line.trim()) run.show(line.trimEnd());
      const why = error ? `could not be started (${error.message})` : stopped ?? (code !== 0 ? `exited ${code ?? signal}` : null);
      if (why) run.warn(`--on-exit command ${why}; the loop's exit code is unchanged`);
      resolve();
    };
    child.on('error', (err) => finish(null, null, err));
    child.on('close', (code, signal) => finish(code, signal));
    if (run.signal.aborted) onAbort();
  });
}
