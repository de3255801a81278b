// Reads what is on disk now for each planned path, and finds temp files an interrupted write left behind.
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { hashContent } from './hash.js';

export interface DiskFile {
  sha256: string;
  content: Buffer;
}

/** `real` maps repository-relative paths to their resolved absolute paths (see resolveInside). */
export function readDisk(real: ReadonlyMap<string, string>): Map<string, DiskFile | undefined> {
  const disk = new Map<string, DiskFile | undefined>();
  for (const [rel, abs] of real) {
    if (!existsSync(abs)) {
      disk.set(rel, undefined);
      continue;
    }
    const content = readFileSync(abs);
    disk.set(rel, { sha256: hashContent(content), content });
  }
  return disk;
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
