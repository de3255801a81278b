// Small tmpfs mounts for full-disk tests, unmounted when the test ends. Mounting needs root (or CAP_SYS_ADMIN):
// TMPFS_SKIP says why it cannot be done here, for `it.skipIf(TMPFS_SKIP)`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

function mount(dir: string, kib: number): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
}

function unmount(dir: string): void {
  // -l: a process a failed test left inside must not keep the mount (and the test run) alive.
  execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  rmdirSync(dir);
}

/** Why a tmpfs cannot be mounted here (a sentence for the skip), or false when it can. */
export const TMPFS_SKIP: string | false = probe();

function probe(): string | false {
  if (process.platform !== 'linux') return 'tmpfs mounts are a Linux feature';
  if (process.getuid?.() !== 0)
    return 'mounting a tmpfs needs root (run the suite as root to include the full-disk tests)';
  const dir = mkdtempSync(path.join(tmpdir(), 'ralphkit-tmpfs-probe-'));
  try {
    mount(dir, 64);
    unmount(dir);
    return false;
  } catch (err) {
    rmdirSync(dir);
    return `mount -t tmpfs is not allowed here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  }
}

/** A fresh tmpfs of `kib` KiB, unmounted when the current test finishes. */
export function tmpfs(kib: number): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'ralphkit-tmpfs-')));
  mount(dir, kib);
  onTestFinished(() => unmount(dir));
  return dir;
}

/** Bytes still free on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const stat = statfsSync(dir);
  return stat.bavail * stat.bsize;
}

/** Fill the file system holding `dir` until not one more block fits; returns the filler's path (remove it to free the space). */
export function fillUp(dir: string, name = 'filler'): string {
  const file = path.join(dir, name);
  writeFileSync(file, Buffer.alloc(freeBytes(dir)));
  return file;
}
