// Runs one agent process at the edge of the loop. The agent gets its own process group (detached) so a
// timeout or Ctrl-C can kill everything it started (shells, test runners, dev servers), not just its top process.
import { spawn } from 'node:child_process';
import { stopGroup } from '../processes.js';
import type { WriteStream } from 'node:fs';

export interface ProcessRequest {
  file: string;
  args: string[];
  cwd: string;
  input: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Aborting kills the process group (SIGINT/SIGTERM of the runner, `cancel`). */
  signal?: AbortSignal;
  /** Raw output is appended here as it arrives (the iteration log). */
  log?: WriteStream;
  onStdoutLine?: (line: string) => void;
  onStart?: (pid: number) => void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  spawnError?: string;
}

/** Between SIGTERM and SIGKILL: long enough for an agent to flush, short enough not to stall the loop. */
// A grandchild that left the group may hold our pipes open after the agent exited; stop waiting for it.
const DRAIN_MS = 1000;
const MAX_KEPT = 16 * 1024 * 1024;

export function runProcess(req: ProcessRequest): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // On Windows a detached child gets its own console window, and there are no process groups to kill anyway.
    const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, detached: process.platform !== 'win32', stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let partial = '';
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
      if (partial) req.onStdoutLine?.(partial);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ exitCode, signal, timedOut, aborted, stdout, stderr, durationMs: Date.now() - started, spawnError });
    };

    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout = keepTail(stdout + chunk);
      req.log?.write(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) req.onStdoutLine?.(line);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = keepTail(stderr + chunk);
      req.log?.write(chunk);
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

function keepTail(text: string): string {
  return text.length > MAX_KEPT ? text.slice(text.length - MAX_KEPT) : text;
}
