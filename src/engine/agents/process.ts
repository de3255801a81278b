// Runs one agent process at the edge of the loop. The agent gets its own process group (detached) so a
// timeout or Ctrl-C can kill everything it started (shells, test runners, dev servers), not just its top process.
import { StringDecoder } from 'node:string_decoder';
import { spawnInGroup } from '../group-spawn.js';
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

// A grandchild that left the group may hold our pipes open after the agent exited; stop waiting for it.
const DRAIN_MS = 1000;

export async function runProcess(req: ProcessRequest): Promise<ProcessResult> {
  const stdout = new TextTail(OUTPUT_LIMITS.stdout);
  const stderr = new TextTail(OUTPUT_LIMITS.stderr);
  const lines = req.onStdoutLine ? new LineSplitter(OUTPUT_LIMITS.line, req.onStdoutLine) : null;
  const decoders = { out: new StringDecoder('utf8'), err: new StringDecoder('utf8') };
  let toLog: (chunk: string) => void = () => {};
  const run = spawnInGroup({
    ...req,
    drainMs: DRAIN_MS,
    // Whatever the agent left running in its group (a dev server, a watcher) must not outlive the iteration.
    atEnd: 'stop',
    onStdout: (chunk) => {
      const text = decoders.out.write(chunk);
      stdout.push(text);
      toLog(text);
      lines?.push(text);
    },
    onStderr: (chunk) => {
      const text = decoders.err.write(chunk);
      stderr.push(text);
      toLog(text);
    },
  });
  toLog = logWriter(req.log, [run.child.stdout, run.child.stderr]);
  const exit = await run.done;
  lines?.end();
  const out = {
    stdout: stdout.text(),
    stdoutCut: stdout.cut,
    stderr: stderr.text(),
    skippedLines: lines?.skipped ?? 0,
  };
  const timedOut = exit.stopped === 'timeout';
  const aborted = exit.stopped === 'abort';
  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    aborted,
    ...out,
    durationMs: exit.durationMs,
    spawnError: exit.spawnError?.message,
  };
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
