// Runs one agent process at the edge of the loop. The agent gets its own process group (detached) so a
// timeout or Ctrl-C can kill everything it started (shells, test runners, dev servers), not just its top process.
import { spawn } from 'node:child_process';
import { stopGroup } from '../processes.js';
import type { WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { LineSplitter, OUTPUT_LIMITS, TextTail } from './tail.js';

export interface ProcessRequest {
  file: string;
  args: string[];
  cwd: string;
  input: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Aborting kills the process group (SIGINT/SIGTERM of the runner, `cancel`). */
  signal?: AbortSignal;
  /** Raw output is appended here as it arrives (the iteration log); the agent's pipes wait while it is behind. */
  log?: WriteStream;
  /** Given: stdout is split into lines (at most OUTPUT_LIMITS.line characters each) and each passed here. */
  onStdoutLine?: (line: string) => void;
  onStart?: (pid: number) => void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last OUTPUT_LIMITS.stdout bytes of stdout; `stdoutCut` says whether earlier output was dropped. */
  stdout: string;
  stdoutCut: boolean;
  /** The last OUTPUT_LIMITS.stderr bytes of stderr. */
  stderr: string;
  /** Lines of stdout longer than OUTPUT_LIMITS.line, not passed to onStdoutLine. */
  skippedLines: number;
  durationMs: number;
  spawnError?: string;
}

/** Between SIGTERM and SIGKILL: long enough for an agent to flush, short enough not to stall the loop. */
// A grandchild that left the group may hold our pipes open after the agent exited; stop waiting for it.
const DRAIN_MS = 1000;

export function runProcess(req: ProcessRequest): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // On Windows a detached child gets its own console window, and there are no process groups to kill anyway.
    const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, detached: process.platform !== 'win32', stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout = new TextTail(OUTPUT_LIMITS.stdout);
    const stderr = new TextTail(OUTPUT_LIMITS.stderr);
    const lines = req.onStdoutLine ? new LineSplitter(OUTPUT_LIMITS.line, req.onStdoutLine) : null;
    const toLog = logWriter(req.log, [child.stdout!, child.stderr!]);
    let timedOut = false;
    let aborted = false;
    let settled = false;

    const killGroup = () => stopGroup(child.pid);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, req.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) onAbort();

    const finish = (exitCode: number | null, signal: string | null, spawnError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      // Whatever the agent left running in its group (a dev server, a watcher) must not outlive the iteration.
      stopGroup(child.pid);
      lines?.end();
      child.stdout?.destroy();
      child.stderr?.destroy();
      const out = { stdout: stdout.text(), stdoutCut: stdout.cut, stderr: stderr.text(), skippedLines: lines?.skipped ?? 0 };
      resolve({ exitCode, signal, timedOut, aborted, ...out, durationMs: Date.now() - started, spawnError });
    };

    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout.push(chunk);
      toLog(chunk);
      lines?.push(chunk);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr.push(chunk);
      toLog(chunk);
    });
    // An agent that never reads its prompt closes stdin early; that is its business, not a runner crash.
    child.stdin!.on('error', () => {});
    child.stdin!.end(req.input);

    child.on('error', (err) => finish(null, null, err.message));
    child.on('spawn', () => child.pid && req.onStart?.(child.pid));
    child.on('close', (code, sig) => finish(code, sig));
    child.on('exit', (code, sig) => {
      setTimeout(() => finish(code, sig), DRAIN_MS).unref();
    });
  });
}

/**
 * Writes to the iteration log with backpressure: while the log is behind, the agent's pipes are paused (the agent
 * then waits on its own writes) instead of the runner buffering everything in memory. A log that failed (disk
 * full; run.ts reports it) takes no more writes and never holds the agent up.
 */
function logWriter(log: WriteStream | undefined, pipes: Readable[]): (chunk: string) => void {
  let paused = false;
  let broken = false;
  const resume = () => {
    paused = false;
    for (const pipe of pipes) pipe.resume();
  };
  log?.once('error', () => {
    broken = true;
    resume();
  });
  return (chunk) => {
    if (!log || broken || log.write(chunk) || paused) return;
    paused = true;
    for (const pipe of pipes) pipe.pause();
    log.once('drain', resume);
  };
}
