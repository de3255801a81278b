// The one way the runner starts a program it must be able to stop whole: the agent, a check, the --on-exit command
// and git each run in a process group of their own (a terminal's Ctrl-C does not reach them halfway; a timeout or an
// abort stops everything they started, not just the top process), with a timeout, and with a bounded wait for
// leftovers that hold the pipes after the top process exited. On Windows there are no groups: the process alone.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { KILL_GRACE_MS, signalGroup, stopGroup } from './processes.js';

export interface GroupRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (an empty stdin when absent). */
  input?: string | Buffer;
  timeoutMs: number;
  /** Aborting stops the group (the runner's SIGINT/SIGTERM, `cancel`). */
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL when the group is stopped (default KILL_GRACE_MS); 0: SIGKILL at once. */
  graceMs?: number;
  /** After the top process exited (or was stopped), how long a leftover holding its pipes is waited for; absent: until they close. */
  drainMs?: number;
  /** The group once the run ended: 'kill' (SIGKILL: nothing it started outlives it), 'stop' (SIGTERM, then SIGKILL), 'keep'. */
  atEnd: 'kill' | 'stop' | 'keep';
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  onStart?: (pid: number) => void;
}

export interface GroupExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the runner stopped it ('timeout', 'abort', or the reason given to stop), null when it ended by itself. */
  stopped: string | null;
  /** The program could not be started. */
  spawnError: NodeJS.ErrnoException | null;
  durationMs: number;
}

export interface GroupRun {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once when the run ended (never rejects); the pipes are closed by then. */
  done: Promise<GroupExit>;
  /** Stops the group for `why` (the first reason counts). */
  stop: (why: string) => void;
}

export function spawnInGroup(req: GroupRequest): GroupRun {
  const started = Date.now();
  const grace = req.graceMs ?? KILL_GRACE_MS;
  const child = spawn(req.file, req.args, {
    cwd: req.cwd,
    env: req.env,
    detached: process.platform !== 'win32',
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const timers: NodeJS.Timeout[] = [];
  let stopped: string | null = null;
  let resolveDone!: (exit: GroupExit) => void;
  const done = new Promise<GroupExit>((resolve) => (resolveDone = resolve));
  let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
  let ended = false;

  const signalAll = (how: 'kill' | 'stop') => {
    if (process.platform === 'win32') child.kill();
    else if (how === 'kill' || grace === 0) signalGroup(child.pid, 'SIGKILL');
    else stopGroup(child.pid, grace);
  };
  const finish = (spawnError: NodeJS.ErrnoException | null = null) => {
    if (ended) return;
    ended = true;
    timers.forEach(clearTimeout);
    req.signal?.removeEventListener('abort', onAbort);
    if (req.atEnd !== 'keep') signalAll(req.atEnd);
    child.stdout.destroy();
    child.stderr.destroy();
    resolveDone({ ...exit, stopped, spawnError, durationMs: Date.now() - started });
  };
  const afterDrain = () => {
    if (req.drainMs !== undefined) timers.push(setTimeout(() => finish(), req.drainMs).unref());
  };
  const stop = (why: string) => {
    if (ended || stopped) return;
    stopped = why;
    signalAll('stop');
    // The group's SIGKILL comes after the grace; what still holds the pipes then is not waited for long.
    if (req.drainMs !== undefined) timers.push(setTimeout(() => finish(), grace + req.drainMs).unref());
  };
  const onAbort = () => stop('abort');

  if (req.onStdout) child.stdout.on('data', req.onStdout);
  else child.stdout.resume();
  if (req.onStderr) child.stderr.on('data', req.onStderr);
  else child.stderr.resume();
  child.on('spawn', () => child.pid && req.onStart?.(child.pid));
  child.on('error', (err: NodeJS.ErrnoException) => finish(err));
  child.on('exit', (code, signal) => {
    exit = { code, signal };
    afterDrain();
  });
  child.on('close', (code, signal) => {
    exit = { code: exit.code ?? code, signal: exit.signal ?? signal };
    finish();
  });
  // A program that never reads its stdin closes it early: that is its business, not a runner crash.
  child.stdin.on('error', () => {});
  child.stdin.end(req.input ?? '');
  timers.push(setTimeout(() => stop('timeout'), req.timeoutMs));
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  return { child, done, stop };
}
