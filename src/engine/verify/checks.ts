// Runs one check command the way the plan's owner wrote it: `sh -c <command>` in a folder, with a timeout.
// The command gets its own process group so a timeout kills everything it started (test runners fork
// workers; a killed `sh` alone would leave them running and holding our pipes open).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { signalGroup } from '../processes.js';

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

export function runCheck(opts: CheckOptions): Promise<CheckResult> {
  return new Promise((resolve) => new CheckRun(opts, resolve).start());
}

/** One command from spawn to result: output captured, timeout and abort armed, the group killed at the end. */
class CheckRun {
  private readonly started = Date.now();
  private readonly hash = createHash('sha256');
  private readonly tail: Tail;
  private readonly timers: NodeJS.Timeout[] = [];
  private child: ChildProcess | undefined;
  private exit: { code: number | null; signal: string | null } | undefined;
  private timedOut = false;
  private aborted = false;
  private startError: string | undefined;
  private done = false;

  constructor(
    private readonly opts: CheckOptions,
    private readonly resolve: (r: CheckResult) => void,
  ) {
    this.tail = new Tail(opts.keepBytes ?? KEEP_BYTES);
  }

  start(): void {
    const shell = this.opts.wrap ? this.opts.wrap('sh', ['-c', this.opts.command]) : { file: 'sh', args: ['-c', this.opts.command] };
    const child = spawn(shell.file, shell.args, {
      cwd: this.opts.cwd,
      env: this.opts.env ?? process.env,
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const onData = (chunk: Buffer): void => {
      this.hash.update(chunk);
      this.tail.push(chunk);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (err) => {
      this.startError = err.message;
      this.finish();
    });
    child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      // a background process that inherited our pipes would keep 'close' away for ever
      this.timers.push(setTimeout(() => this.finish(), GRACE_MS));
    });
    child.on('close', () => this.finish());
    this.timers.push(setTimeout(() => this.stop('timeout'), this.opts.timeoutMs));
    if (this.opts.signal?.aborted) this.stop('abort');
    else this.opts.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => this.stop('abort');

  // The check runs in its own process group, so a Ctrl-C in the terminal does not reach it: stop it ourselves.
  private stop(why: 'timeout' | 'abort'): void {
    if (this.done) return;
    if (why === 'timeout') this.timedOut = true;
    else this.aborted = true;
    signalGroup(this.child?.pid, 'SIGTERM');
    this.timers.push(setTimeout(() => signalGroup(this.child?.pid, 'SIGKILL'), GRACE_MS));
    this.timers.push(setTimeout(() => this.finish(), 2 * GRACE_MS));
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.timers.forEach(clearTimeout);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    signalGroup(this.child?.pid, 'SIGKILL'); // nothing a check started may outlive it
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.resolve(this.result());
  }

  private result(): CheckResult {
    const exitCode = this.startError ? null : (this.exit?.code ?? null);
    return {
      command: this.opts.command,
      exitCode,
      signal: this.exit?.signal ?? null,
      timedOut: this.timedOut,
      ...(this.aborted ? { aborted: true } : {}),
      ok: !this.timedOut && !this.aborted && !this.startError && exitCode === 0,
      durationMs: Date.now() - this.started,
      outputTail: this.tail.text(),
      outputSha256: this.hash.digest('hex'),
      ...(this.startError ? { error: this.startError } : {}),
    };
  }
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
