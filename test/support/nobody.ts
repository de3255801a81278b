// Root ignores file modes, so tests of unwritable files run the runner as `nobody` when they run as root.
import { chownSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const NOBODY = 65534;
export const asRoot = process.getuid?.() === 0;

/** Spawn options that run a child as `nobody` when the tests run as root (and change nothing otherwise). */
export function asNobodyOptions(): { uid?: number; gid?: number } {
  return asRoot ? { uid: NOBODY, gid: NOBODY } : {};
}

/** Gives `dirs` (recursively) to `nobody` when the tests run as root, so file modes apply to the runner. */
export function handOver(...dirs: string[]): void {
  if (!asRoot) return;
  const walk = (p: string): void => {
    chownSync(p, NOBODY, NOBODY);
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) walk(path.join(p, n));
  };
  dirs.forEach(walk);
}
