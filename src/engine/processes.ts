// Processes the runner starts or records by pid (runners, agents, checks): whether one still runs, when it
// started, whether a process group has a member left, and stopping a whole group. Linux answers from /proc;
// elsewhere only the pid can be checked.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';

/**
 * Whether `pid` is a running process. With `start` (the pid's start as recorded by processStart), a process
 * that started at another time holds a reused pid and counts as gone. Without it (older state files, or a
 * platform without /proc) only the pid is checked.
 */
export function isAlive(pid: number | undefined | null, start?: number | null): boolean {
  if (!pid || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = readProcStat(pid);
  if (now === null) return true;
  // A zombie is a runner killed with -9 whose parent has not reaped it yet: it can do nothing any more.
  if (now.zombie) return false;
  return typeof start !== 'number' || start === now.start;
}

/**
 * When `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined where there is no
 * /proc (macOS, Windows). `ps -o lstart=` would answer there too, but costs a process per check, and the
 * dashboard checks every running loop on every poll; those platforms keep the pid-only check.
 */
export function processStart(pid: number): number | undefined {
  return readProcStat(pid)?.start;
}

/** /proc/<pid>/stat on Linux: start time, zombie (Z/X) or not, process group; null elsewhere or when gone. */
export function readProcStat(pid: number): { start: number; zombie: boolean; group: number } | null {
  if (process.platform !== 'linux') return null;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 is the command name in parentheses and may itself hold spaces or ")": count from the last ")".
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[19]);
  return Number.isSafeInteger(start)
    ? { start, zombie: fields[0] === 'Z' || fields[0] === 'X', group: Number(fields[2]) }
    : null;
}

/**
 * Whether process group `pgid` has a member that is not a zombie. Linux reads /proc (a killed group's members stay
 * zombies until some parent reaps them, and kill(-pgid, 0) counts those); elsewhere kill(-pgid, 0) answers.
 */
export function groupHasLiveMember(pgid: number): boolean {
  if (process.platform === 'linux' && existsSync('/proc/self/stat')) {
    return readdirSync('/proc').some((name) => {
      const stat = /^\d+$/.test(name) ? readProcStat(Number(name)) : null;
      return stat !== null && !stat.zombie && stat.group === pgid;
    });
  }
  if (process.platform === 'win32') return isAlive(pgid);
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let ownStart: number | undefined | null = null;

/** This process's start (see processStart), read once. */
export function ownProcessStart(): number | undefined {
  if (ownStart === null) ownStart = processStart(process.pid);
  return ownStart;
}

/** How long a group sent SIGTERM has before SIGKILL. */
export const KILL_GRACE_MS = 3000;

// Groups sent SIGTERM whose SIGKILL is still pending. The timers do not keep the runner alive, so a runner that
// exits first (the last iteration) sends those SIGKILLs on its way out.
const pendingKills = new Map<number, NodeJS.Timeout>();
let exitHookSet = false;

/** SIGTERM to a group now, SIGKILL after the grace period: a process that ignores SIGTERM does not survive. */
export function stopGroup(pid: number | undefined, graceMs = KILL_GRACE_MS): void {
  if (!pid) return;
  signalGroup(pid, 'SIGTERM');
  if (pendingKills.has(pid)) return;
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const group of pendingKills.keys()) signalGroup(group, 'SIGKILL');
    });
  }
  const timer = setTimeout(() => {
    pendingKills.delete(pid);
    signalGroup(pid, 'SIGKILL');
  }, graceMs);
  timer.unref();
  pendingKills.set(pid, timer);
}

/** Signal a whole process group; a group that is already gone is fine. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  if (process.platform === 'win32') {
    spawnSync('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore' });
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is already gone */
  }
}
