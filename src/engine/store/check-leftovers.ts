// ralph/.runs/check-leftovers.json: files the runner saw checks leave in the working tree (it warned then), kept so
// that a later start refused for those very files can say they belong in .gitignore instead of guessing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';

const LEFTOVERS_FILE = 'check-leftovers.json';
const MAX_LEFTOVERS = 200;

/** Adds `paths` to the record in `runsDir`; best effort, since it only sharpens a later hint. */
export function recordCheckLeftovers(runsDir: string, paths: readonly string[]): void {
  const all = [...new Set([...paths, ...readCheckLeftovers(runsDir)])].slice(0, MAX_LEFTOVERS);
  try {
    atomicWriteFileSync(path.join(runsDir, LEFTOVERS_FILE), `${JSON.stringify({ paths: all })}\n`);
  } catch {
    /* the warning was printed anyway */
  }
}

export function readCheckLeftovers(runsDir: string): string[] {
  try {
    const { paths } = JSON.parse(readFileSync(path.join(runsDir, LEFTOVERS_FILE), 'utf8')) as { paths?: unknown };
    return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
