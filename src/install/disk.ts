// Reads what is on disk now for each planned path, and finds temp files an interrupted write left behind.
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { hashContent } from '../util/hash.js';

export interface DiskFile {
  sha256: string;
  content: Buffer;
  /** Permission bits (e.g. 0o644). */
  mode: number;
}

/** `real` maps repository-relative paths to their resolved absolute paths (see resolveAllInside). */
export function readDisk(real: ReadonlyMap<string, string>): Map<string, DiskFile | undefined> {
  const disk = new Map<string, DiskFile | undefined>();
  for (const [rel, abs] of real) {
    if (!existsSync(abs)) {
      disk.set(rel, undefined);
      continue;
    }
    const content = readFileSync(abs);
    disk.set(rel, { sha256: hashContent(content), content, mode: statSync(abs).mode & 0o777 });
  }
  return disk;
}

/**
 * Paths whose file on disk lacks execute bits that ralphkit's version has (ralph/ralph.sh after a copy or a
 * checkout with core.fileMode off): `./ralph/ralph.sh` would fail with "Permission denied". Windows has no such bits.
 */
export function findNotExecutable(
  disk: ReadonlyMap<string, DiskFile | undefined>,
  wanted: ReadonlyMap<string, number | undefined>,
): Set<string> {
  const paths = new Set<string>();
  if (process.platform === 'win32') return paths;
  for (const [rel, file] of disk) {
    const mode = wanted.get(rel);
    if (file && mode !== undefined && (file.mode & mode & 0o111) !== (mode & 0o111)) paths.add(rel);
  }
  return paths;
}

/** The temp-file name pattern of src/util/atomic.ts for `file`: `.<name>.<pid>.<8 hex>.tmp`. */
export function isTempFileOf(file: string, candidate: string): boolean {
  const name = path.basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\.${name}\\.\\d+\\.[0-9a-f]{8}\\.tmp$`).test(candidate);
}

/** Remove temp files a killed install left beside `files`; returns the ones removed. */
export function removeStaleTempFiles(files: Iterable<string>): string[] {
  const removed: string[] = [];
  for (const file of files) {
    const dir = path.dirname(file);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      // A live pid may be another process (the loop engine) writing the same file right now.
      if (!isTempFileOf(file, name) || pidAlive(Number(name.split('.').at(-3)))) continue;
      unlinkSync(path.join(dir, name));
      removed.push(path.join(dir, name));
    }
  }
  return removed;
}

function pidAlive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
