// Cheap answers to "has git's view changed since the runner last asked?", so an iteration in which nothing moved
// costs no git process. A fingerprint is the bytes of every file git reads for the answer: equal bytes, equal answer.
// Anything this cannot see (git told where to look by the environment, a file it cannot read) gives null, and the
// caller asks git itself.
import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Variables that move git's files elsewhere than the folders held here. */
const GIT_LOCATION_VARS = [
  'GIT_DIR',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_WORK_TREE',
  'GIT_NAMESPACE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_REF_FORMAT',
];

/** The parts read, in order: names and markers as strings, file contents as bytes. */
export type Fingerprint = Array<string | Buffer>;

/** Equal fingerprints: the same files, with the same bytes. null (could not tell) equals nothing. */
export function sameFingerprint(a: Fingerprint | null, b: Fingerprint | null): boolean {
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'string' || typeof y === 'string' ? x !== y : !x.equals(y)) return false;
  }
  return true;
}

export interface GitDirs {
  /** The work tree's top level: its `.git` (folder, or a file naming the git dir) is where git starts looking. */
  top: string;
  /** This work tree's git dir (HEAD, index), real path. */
  own: string;
  /** The common dir (refs, packed-refs, reftable), real path. */
  common: string;
}

/**
 * HEAD and every local branch as stored: this work tree's HEAD, packed-refs, the loose refs under refs/heads (names
 * and contents). Git writes each of them whole (a lock file renamed over the old one), and an edit in place changes
 * the bytes read here too; a symlink is held by where it points as well as by what it reads. A reftable repository
 * gives null: its tables can be rewritten in place and a linked work tree keeps a stack of its own, so git is asked.
 */
export function fingerprintRefs(dirs: GitDirs, env: NodeJS.ProcessEnv = process.env): Fingerprint | null {
  if (GIT_LOCATION_VARS.some((v) => env[v] !== undefined)) return null;
  try {
    if (exists(path.join(dirs.common, 'reftable')) || exists(path.join(dirs.own, 'reftable'))) return null;
    const parts: Fingerprint = [
      // A .git replaced or pointed elsewhere is another repository, whatever the folders held here still say.
      '.git',
      describeDotGit(path.join(dirs.top, '.git')),
      // A linked work tree names its common dir in this file.
      'commondir',
      readRef(path.join(dirs.own, 'commondir')),
      'HEAD',
      readRef(path.join(dirs.own, 'HEAD')),
      'packed-refs',
      readRef(path.join(dirs.common, 'packed-refs')),
    ];
    walk(path.join(dirs.common, 'refs', 'heads'), 'refs/heads', parts);
    return parts;
  } catch {
    return null;
  }
}

/**
 * What `git status` reads for `files` besides the refs: the index, and each file's type, mode and bytes. Equal to a
 * fingerprint taken when status listed none of them (and the refs unchanged): status would list none of them again.
 */
export function fingerprintFiles(
  dirs: GitDirs,
  top: string,
  files: string[],
  env: NodeJS.ProcessEnv = process.env,
): Fingerprint | null {
  const refs = fingerprintRefs(dirs, env);
  if (refs === null) return null;
  try {
    const parts: Fingerprint = [...refs, 'index', readOrMissing(path.join(dirs.own, 'index'))];
    for (const rel of files) {
      const abs = path.join(top, rel);
      let st;
      try {
        st = lstatSync(abs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        parts.push(rel, 'missing');
        continue;
      }
      parts.push(rel, String(st.mode), st.isFile() ? readFileSync(abs) : '');
    }
    return parts;
  } catch {
    return null;
  }
}

function describeDotGit(file: string): Buffer | string {
  const st = lstatSync(file, { bigint: true });
  if (st.isDirectory()) return `dir ${st.dev} ${st.ino}`;
  if (st.isSymbolicLink()) return `link ${readlinkSync(file)}`;
  return readFileSync(file);
}

function walk(dir: string, shown: string, parts: Fingerprint): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No loose branches (a new repository), or reftable's placeholder file where the folder would be.
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      parts.push(shown, code);
      return;
    }
    throw err;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) walk(abs, `${shown}/${e.name}`, parts);
    else parts.push(`${shown}/${e.name}`, readRef(abs));
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** A ref-like file: its bytes, and for a symlink also where it points (two links to equal refs are not one ref). */
function readRef(file: string): Buffer | string {
  let st;
  try {
    st = lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '-';
    throw err;
  }
  if (!st.isSymbolicLink()) return readFileSync(file);
  return Buffer.concat([Buffer.from(`link ${readlinkSync(file)}\0`), Buffer.from(readOrMissing(file))]);
}

function readOrMissing(file: string): Buffer | string {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '-';
    throw err;
  }
}
