// No write may leave the repository (SPEC §2): every path and each of its parents is checked
// for symlinks pointing outside before anything is read or written.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import { realpathOrUndefined } from '../util/read.js';
import { isWithin } from '../util/repo-path.js';

/** Resolve every path at once so a refusal comes before any write; the root's real path is read once for all. */
export function resolveAllInside(root: string, rels: readonly string[]): Map<string, string> {
  const realRoot = realpathSync(root);
  return new Map(rels.map((rel) => [rel, resolveInside(realRoot, rel)]));
}

/**
 * The real absolute path that writing `rel` under `realRoot` would touch, following symlinks that stay
 * inside the repository. Throws (exit 2) for a symlink that leads outside or to nothing.
 */
function resolveInside(realRoot: string, rel: string): string {
  let current = realRoot;
  const parts = rel.split('/').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]);
    const stat = lstatOrUndefined(next);
    if (!stat) return path.join(next, ...parts.slice(i + 1));
    const shown = parts.slice(0, i + 1).join('/');
    current = next;
    if (stat.isSymbolicLink()) {
      const target = realpathOrUndefined(next);
      if (!target) throw unsafe(`${shown} is a symlink to something that does not exist`, rel);
      if (!isWithin(target, realRoot)) throw unsafe(`${shown} is a symlink to ${target}, outside the repository`, rel);
      current = target;
    }
    const isDir = statSync(current).isDirectory();
    const last = i === parts.length - 1;
    if (!last && !isDir) throw unsafe(`${shown} is a file where a folder is needed`, rel);
    if (last && isDir) throw unsafe(`${shown} is a folder where a file is needed`, rel);
  }
  return current;
}

function unsafe(reason: string, rel: string): RalphkitError {
  return new RalphkitError(`refusing to write ${rel}: ${reason}. Nothing was written.`, {
    exitCode: EXIT.refused,
    hint: 'replace the symlink with a real folder inside the repository, then run the command again',
  });
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
