// The dashboard's bodies, made once per state of what they read. A page asks for /api/prd on load and after every
// event, several pages may be open, and the event hub reads the plan again on every change it is told of: for a
// plan of thousands of stories each read is a parse, a board and megabytes of JSON. Between two changes on disk
// every one of them gets the same bytes. A change is told by a key of file stats (mtime in nanoseconds, size,
// inode: an atomic rename changes the inode), taken on each request, so no answer is older than the request.
import { statSync } from 'node:fs';
import path from 'node:path';
import { keyDir } from '../engine/store/verdict-record.js';
import { readTextOrNull, statKey } from '../util/read.js';
import { signature } from './watch.js';
import type { ViewPaths } from './snapshot.js';

/** `make`'s value, made again only when `key` differs from the key it was made under. */
export function memoize<T>(make: () => T, key: () => string): () => T {
  let last: { key: string; value: T } | null = null;
  return () => {
    const now = key();
    if (last?.key !== now) last = { key: now, value: make() };
    return last.value;
  };
}

/** `read` serialised, made again only when `key` differs from the key it was made under. */
export function memoJson(read: () => unknown, key: () => string): () => string {
  return memoize(() => JSON.stringify(read()), key);
}

/**
 * What /api/prd reads, as stats: the plan, the loops' states and ledgers (watch.ts `signature`), the verdict key, and
 * where git keeps the notes ref that holds the sealed records (its loose file, packed-refs, a reftable's list). The
 * commits and plans those records point at are git objects, which never change under their ids.
 */
export function prdInputsKey(paths: ViewPaths, env: NodeJS.ProcessEnv = process.env): string {
  const common = gitCommonDir(paths.cwd);
  const refFiles = common
    ? ['refs/notes/ralphkit', 'packed-refs', 'reftable/tables.list'].map((f) => path.join(common, f))
    : [];
  // A notes ref made symbolic ("ref: refs/notes/other"; the runner never makes it so): git follows chains of them,
  // per worktree, which no key of file stats can follow. Then every request makes the body anew.
  if (common && readTextOrNull(refFiles[0])?.startsWith('ref:')) return `uncached ${++uncached}`;
  const files = [path.join(keyDir(env), 'verdict.key'), ...refFiles];
  return [signature(paths), ...files.map(statKey)].join('|');
}

let uncached = 0;

/**
 * The repository's common git folder, from `.git` as git would read it: a folder, or a file naming one (a linked
 * worktree) whose `commondir` names the shared one. Null when there is none to be found: the key then leaves the
 * notes out, and a note sealed later shows once the loop's state.json is written (which the runner does after it).
 */
export function gitCommonDir(root: string): string | null {
  const dotGit = path.join(root, '.git');
  try {
    // git follows a commondir file in a git folder of any kind (a worktree's, or a .git folder given one).
    if (statSync(dotGit).isDirectory()) return withCommonDir(dotGit);
    const named = /^gitdir: (.+)$/m.exec(readTextOrNull(dotGit) ?? '')?.[1]?.trim();
    if (!named) return null;
    return withCommonDir(path.resolve(root, named));
  } catch {
    return null;
  }
}

/** `gitDir`'s common folder: the one its `commondir` file names (relative to it), else itself. */
function withCommonDir(gitDir: string): string {
  const named = readTextOrNull(path.join(gitDir, 'commondir'));
  return named === null ? gitDir : path.resolve(gitDir, named.trim());
}
