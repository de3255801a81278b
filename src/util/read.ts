// Reading a file or folder that may be missing: null, empty or false instead of an error. Node built-ins only (the
// engine uses it).
import path from 'node:path';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';

/** The file's text, or null when it cannot be read (missing, a folder, no permission). */
export function readTextOrNull(file: string): string | null {
  return readBytesOrNull(file)?.toString('utf8') ?? null;
}

/**
 * The file's bytes, or null when it cannot be read, or is no regular file: a pipe the agent left where a file was
 * (ralph/prd.json) is opened without waiting for a writer, and not read.
 */
export function readBytesOrNull(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * readFileSync for a file the agent could have replaced (the plan, the log, the prompt): opened without waiting, so a
 * pipe left there is refused at once (EINVAL) instead of holding the runner until a writer comes, which never does;
 * and without following a link there (ELOOP): a link the agent put at ralph/prd.json would have the runner read, then
 * back up or copy into the repository, a file hidden from the agent (the verdict record's key).
 */
export function readFileNoWait(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0));
  try {
    if (!fstatSync(fd).isFile())
      throw Object.assign(new Error(`EINVAL: not a regular file, read '${file}'`), { code: 'EINVAL' });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** readFileNoWait's text, or null when it cannot be read that way (missing, a link, a pipe, a folder). */
export function readOwnTextOrNull(file: string): string | null {
  try {
    return readFileNoWait(file).toString('utf8');
  } catch {
    return null;
  }
}

/** The path with every symlink resolved, or undefined when it does not resolve (missing, a loop, no permission). */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The names in a folder, or none when it cannot be read (missing, not a folder, no permission). */
export function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Whether the path is a folder itself (a link to one is not). */
export function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The path's own status (a link is not followed), or null when there is nothing there (or it cannot be read). */
export function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * The first link on the way down from `root` to `file`: each folder between them (neither `root` nor `file`), in order.
 * null when there is none; the walk stops at a part that is missing or not a folder (a write there fails on its own).
 */
export function linkOnTheWay(root: string, file: string): string | null {
  let at = root;
  for (const part of path.relative(root, file).split(path.sep).slice(0, -1)) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (st?.isSymbolicLink()) return at;
    if (!st?.isDirectory()) return null;
  }
  return null;
}

/** The first of `names` (relative paths) in `from` or a folder above it, up to the root, or null. */
export function findUpward(from: string, names: readonly string[]): string | null {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const found = names.map((n) => path.join(dir, n)).find((f) => existsSync(f));
    if (found) return found;
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * A file's mtime and ctime (ns), size and inode, or '-' when it cannot be read: a key that
 * changes with every write. ctime too: a write in place of the
 * same size with the old mtime put back (utimes) changes nothing else, and no one can set ctime.
 */
export function statKey(file: string): string {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.mtimeNs}:${s.ctimeNs}:${s.size}:${s.ino}`;
  } catch {
    return '-';
  }
}
