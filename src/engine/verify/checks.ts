// Runs one check command the way the plan's owner wrote it: `sh -c <command>` in a folder, with a timeout.
// The command gets its own process group so a timeout kills everything it started (test runners fork
// workers; a killed `sh` alone would leave them running and holding our pipes open).
import { createHash } from 'node:crypto';
import { spawnInGroup } from '../group-spawn.js';
import { SHELL } from '../../util/which.js';

export interface CheckOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** How much of the combined output to keep in memory (the tail); the hash covers all of it. */
  keepBytes?: number;
  /** Stops the command early (the runner was interrupted); the result then has `aborted: true`. */
  signal?: AbortSignal;
  /** Runs `sh -c <command>` through another program (the sandbox: `bwrap ... -- sh -c <command>`). */
  wrap?: (file: string, args: string[]) => { file: string; args: string[] };
}

export interface CheckResult {
  command: string;
  /** The exit code, or null when the command was killed by a signal (e.g. at the timeout). */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** True when the command was stopped because the runner was interrupted. */
  aborted?: boolean;
  /** True when the command exited 0 within the timeout. */
  ok: boolean;
  durationMs: number;
  /** The last `keepBytes` of stdout and stderr, interleaved as they arrived. */
  outputTail: string;
  /** sha256 (hex) of the whole combined output. */
  outputSha256: string;
  /** Set when the command could not be started at all. */
  error?: string;
}

const KEEP_BYTES = 256 * 1024;
// After SIGTERM a check gets this long to exit before SIGKILL; after it exits, leftovers holding the
// pipes get this long before we stop waiting for them.
const GRACE_MS = 2000;

/** One command from spawn to result: output captured, timeout and abort armed, the group killed at the end. */
export async function runCheck(opts: CheckOptions): Promise<CheckResult> {
  const hash = createHash('sha256');
  const tail = new Tail(opts.keepBytes ?? KEEP_BYTES);
  const onData = (chunk: Buffer): void => {
    hash.update(chunk);
    tail.push(chunk);
  };
  const shell = opts.wrap ? opts.wrap(SHELL, ['-c', opts.command]) : { file: SHELL, args: ['-c', opts.command] };
  const exit = await spawnInGroup({
    ...shell,
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    graceMs: GRACE_MS,
    drainMs: GRACE_MS,
    // Nothing a check started may outlive it.
    atEnd: 'kill',
    onStdout: onData,
    onStderr: onData,
  }).done;
  const timedOut = exit.stopped === 'timeout';
  const aborted = exit.stopped === 'abort';
  const exitCode = exit.spawnError ? null : exit.code;
  return {
    command: opts.command,
    exitCode,
    signal: exit.signal,
    timedOut,
    ...(aborted ? { aborted: true } : {}),
    ok: !timedOut && !aborted && !exit.spawnError && exitCode === 0,
    durationMs: exit.durationMs,
    outputTail: tail.text(),
    outputSha256: hash.digest('hex'),
    ...(exit.spawnError ? { error: exit.spawnError.message } : {}),
  };
}

/** Keeps the last `limit` bytes of a stream without holding the whole of it. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0].length >= this.limit) this.size -= this.chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
}
