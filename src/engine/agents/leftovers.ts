// Nothing the agent started may outlive its iteration: a dev server or a watcher left running would change files
// while the runner verifies, or answer the checks' requests itself. Killing the agent's process group is not enough,
// since a process can leave the group (setsid, a daemon's double fork). What it keeps is its environment, and the
// runner put a fresh marker there (agents/env.ts): every process that carries it belongs to this iteration's agent.
//
// What this cannot catch: a process that re-execs with a scrubbed environment (`env -i`, sudo) loses the marker, and
// so does one that overwrites the memory /proc/<pid>/environ reads (some servers do, to set their process title;
// unsetenv() alone does not: that memory is what exec left). A process that made itself non-dumpable (setuid
// programs; ssh-agent does it on purpose) has an environ only root can read, so a runner that is not root does not
// see it. The sandbox's PID namespace is the answer to all of these: when the sandbox ends, every process in it ends
// (sandbox.ts).
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { AGENT_MARK_VAR } from './env.js';
import { readProcStat } from '../processes.js';
import { pollUntil } from '../../util/poll.js';

/** How long the SIGKILLed get to disappear: the kernel is quick, a process stuck in the D state is not. */
const KILL_WAIT_MS = 2000;
const POLL_MS = 25;
// A process can fork while it is being killed, and its child is only found by the next scan; a few rounds catch
// that without looping forever on something that forks faster than we kill.
const MAX_ROUNDS = 4;
const COMMAND_CHARS = 120;

/** processes.ts's reading of /proc/<pid>/stat: the start time (clock ticks since boot) tells a reused pid apart. */
type ProcInfo = ReturnType<typeof readProcStat>;

/** Whether this platform lets us read other processes' environments (Linux /proc). */
function procSupported(): boolean {
  return process.platform === 'linux' && existsSync('/proc/self/environ');
}

/** The pids of live processes (not the current one) whose environment holds RALPH_AGENT_MARK=<token>. */
export function findMarkedProcesses(token: string): number[] {
  if (!token || !procSupported()) return [];
  const wanted = Buffer.from(`${AGENT_MARK_VAR}=${token}`);
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    // Only the numeric entries are processes (a cheap test first: this runs over every process after every iteration).
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57 || !/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid !== process.pid && isMarked(pid, wanted) && isRunning(readProcStat(pid))) pids.push(pid);
  }
  return pids;
}

/**
 * SIGTERM every marked process, SIGKILL those still there after `graceMs`, and scan again, since one may have forked
 * while it was being killed. `stopped` lists every process found and signalled (one that cannot die, EPERM or stuck
 * in the D state, is listed too: findMarkedProcesses afterwards says what is left). `supported` is false where there
 * is no /proc (macOS): nothing was looked for.
 */
export async function stopMarkedProcesses(
  token: string,
  { graceMs = 3000 }: { graceMs?: number } = {},
): Promise<{ supported: boolean; stopped: Array<{ pid: number; command: string }> }> {
  if (!procSupported()) return { supported: false, stopped: [] };
  const wanted = Buffer.from(`${AGENT_MARK_VAR}=${token}`);
  const stopped = new Map<number, string>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const targets = findMarkedProcesses(token).map((pid) => ({ pid, info: readProcStat(pid) }));
    if (targets.length === 0) break;
    for (const { pid } of targets) if (!stopped.has(pid)) stopped.set(pid, readCommand(pid));
    for (const t of targets) signal(t.pid, 'SIGTERM');
    await waitGone(targets, graceMs);
    // A pid that exited during the grace period may already belong to someone else: SIGKILL only the same process,
    // still marked.
    for (const t of targets) if (isSameProcess(t.pid, t.info) && isMarked(t.pid, wanted)) signal(t.pid, 'SIGKILL');
    await waitGone(targets, KILL_WAIT_MS);
  }
  return { supported: true, stopped: [...stopped].map(([pid, command]) => ({ pid, command })) };
}

// Reused by every read of an environment: the scan touches every process, and most environments are small.
let scratch = Buffer.allocUnsafe(64 * 1024);

/** /proc/<pid>/environ, whole (the buffer grows for a large one), or null when it cannot be read. */
function readEnviron(pid: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, 'r');
  } catch {
    // Another user's process, or one that exited between readdir and here.
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        const bigger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(bigger, 0, 0, length);
        scratch = bigger;
      }
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) return scratch.subarray(0, length);
      length += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function isMarked(pid: number, wanted: Buffer): boolean {
  const environ = readEnviron(pid);
  if (environ === null) return false;
  // Entries are NUL-separated; compare whole entries so a token that is a prefix of another never matches.
  for (let start = 0; start < environ.length; ) {
    let end = environ.indexOf(0, start);
    if (end === -1) end = environ.length;
    if (end - start === wanted.length && environ.compare(wanted, 0, wanted.length, start, end) === 0) return true;
    start = end + 1;
  }
  return false;
}

// A zombie (Z) or a dead entry (X) runs no code any more; it stays until its parent reaps it, which may be never.
function isRunning(info: ProcInfo): boolean {
  return info !== null && !info.zombie;
}

function isSameProcess(pid: number, then: ProcInfo): boolean {
  const now = readProcStat(pid);
  return isRunning(now) && then !== null && now!.start === then.start;
}

async function waitGone(targets: Array<{ pid: number; info: ProcInfo }>, ms: number): Promise<void> {
  await pollUntil(() => !targets.some((t) => isSameProcess(t.pid, t.info)), { timeoutMs: ms, intervalMs: POLL_MS });
}

function readCommand(pid: number): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return text.length > COMMAND_CHARS ? text.slice(0, COMMAND_CHARS) : text;
  } catch {
    return '';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone, or not ours to signal (EPERM): the next scan or the caller's report shows what is left.
  }
}
