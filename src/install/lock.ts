// One install at a time in a repository. Two at once would each read the manifest before the other wrote it (the
// second's manifest then lacks the first's --ci or --claude-hook record), and each would remove the other's staging
// folder as an interrupted run's leftover. The lock is a file created with O_EXCL holding its holder's pid and start;
// a second install waits for it a while, a lock whose holder is gone (a killed install) is taken over.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { EXIT, RalphkitError } from '../errors.js';
import { isAlive, ownProcessStart } from '../engine/processes.js';
import { ralphkitCommand } from '../util/invocation.js';
import { pollUntil } from '../util/poll.js';

export const INSTALL_LOCK = '.ralphkit-install.lock';

/** How long a second install waits for the first; an install takes well under a second. */
const WAIT_MS = 30_000;
const POLL_MS = 50;
/** A lock file without a readable holder this old is a crash between its creation and its write. */
const UNREADABLE_STALE_MS = 10_000;

interface Holder {
  pid: number;
  start?: number;
}

export interface LockOptions {
  waitMs?: number;
  /** Told once when the lock is held by another install and this one starts waiting. */
  onWait?: (holder: Holder | null) => void;
}

/** Runs `fn` holding the install lock of `root`; refuses (exit 2) when another install holds it past the wait. */
export async function withInstallLock<T>(root: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const file = path.join(root, INSTALL_LOCK);
  let holder: Holder | null = null;
  let looks = 0;
  const taken = await pollUntil(
    () => {
      if (tryCreate(file)) return true;
      holder = readHolder(file);
      // A dead holder's lock is taken over at once.
      if (isStale(file, holder)) {
        removeFile(file);
        if (tryCreate(file)) return true;
        holder = readHolder(file);
      }
      if (looks++ === 0) options.onWait?.(holder);
      return false;
    },
    { timeoutMs: options.waitMs ?? WAIT_MS, intervalMs: POLL_MS },
  );
  if (!taken) throw busy(root, holder);
  try {
    return await fn();
  } finally {
    if (readHolder(file)?.pid === process.pid) removeFile(file);
  }
}

function tryCreate(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new RalphkitError(`cannot create the install lock ${file}: ${(err as Error).message}`, {
      exitCode: EXIT.refused,
      hint: 'check that you can write to the repository folder, then run install again',
    });
  }
  try {
    const start = ownProcessStart();
    writeSync(fd, JSON.stringify({ pid: process.pid, ...(start === undefined ? {} : { start }) }));
  } catch (err) {
    closeSync(fd);
    removeFile(file);
    // A disk with no block left for the holder's pid: the install's own space check refuses before anything is
    // written, with the message that says where and how much; no lock is needed for that.
    if (['ENOSPC', 'EDQUOT'].includes((err as NodeJS.ErrnoException).code ?? '')) return true;
    throw err;
  }
  closeSync(fd);
  return true;
}

function readHolder(file: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    return Number.isInteger(parsed.pid) && parsed.pid > 0 ? parsed : null;
  } catch {
    return null;
  }
}

function isStale(file: string, holder: Holder | null): boolean {
  if (holder) return !isAlive(holder.pid, holder.start);
  try {
    return Date.now() - statSync(file).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return true; // gone meanwhile: try again
  }
}

function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone already */
  }
}

function busy(root: string, holder: Holder | null): RalphkitError {
  const who = holder ? ` (pid ${holder.pid})` : '';
  return new RalphkitError(`another ralphkit install${who} is still running in ${root}; nothing was changed`, {
    exitCode: EXIT.refused,
    hint: `let it finish, then run ${ralphkitCommand('install')} again with your options (if no install is running, remove ${path.join(root, INSTALL_LOCK)})`,
  });
}
