// Paths as the runner shows them and as git takes them: relative to the repository, always with forward slashes.
import { realpathSync } from 'node:fs';
import path from 'node:path';

/** `file` relative to `root` with forward slashes, as git takes paths ("../x" when outside, "" for root itself). */
export function relPath(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

/** `file` for a message: relative to `root` when inside it, else as given (absolute), never "../../x". */
export function showPath(root: string, file: string): string {
  const rel = path.relative(root, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : file;
}

/**
 * relPath from the repository's top level (a real path, as git reports it) to `file` with its symlinks resolved,
 * so a plan reached through a symlinked folder still matches the paths git lists.
 */
export function relToTop(topLevel: string, file: string): string {
  let real = file;
  try {
    real = realpathSync(file);
  } catch {
    /* not there (yet): as given */
  }
  return relPath(topLevel, real);
}

/** Whether `p` is `dir` or a path below it (by name: no symlink is followed). */
export function isWithin(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
