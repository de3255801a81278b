// --sandbox: the agent's git writes new objects into a quarantine, never into the object store (issue #26, "the
// sandbox as a wall"). git's receive-pack does the same with what a push brings (a `tmp_objdir-incoming-*` folder
// inside objects/, the real store its alternate); here the quarantine is bound over .git/objects inside the sandbox,
// with the real store read-only at a path of the sandbox's private /tmp, named in the quarantine's
// info/alternates (gitrepository-layout(5), git 2.39). After the agent exits, the runner moves the new objects into
// the store: each loose object's bytes hashed against its id, each pack through `git index-pack` (which hashes every
// object and dies on one whose bytes differ from an object the store has), and nothing ever written over an object
// the store already holds.
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { runGit } from './git.js';
import { hashObject, type ObjectFormat } from './objects.js';
import { isRealDir } from '../../util/read.js';
import { isObjectId } from './parse.js';

/** Where the real object store appears inside the sandbox (its private /tmp), read-only. */
export const SANDBOX_STORE = '/tmp/ralph-git-objects';
const PREFIX = 'tmp_objdir-ralph-';
/**
 * The largest loose object moved in, inflated (1 GiB): a few kilobytes of zlib can inflate to gigabytes, read into the
 * runner's memory. git itself writes files past core.bigFileThreshold (512 MiB) into packs, which index-pack streams.
 */
const MAX_LOOSE_OBJECT = 1024 ** 3;

/**
 * A new quarantine in `objectsDir` (the real .git/objects, so a runner killed mid-iteration leaves the agent's
 * commits where the next run, or git's own prune of stale `tmp_` folders, finds them), named after `owner`.
 */
export function makeQuarantine(objectsDir: string, owner: string): string {
  const dir = path.join(objectsDir, `${PREFIX}${owner}-${randomBytes(6).toString('hex')}`);
  mkdirSync(path.join(dir, 'info'), { recursive: true, mode: 0o755 });
  mkdirSync(path.join(dir, 'pack'), { mode: 0o755 });
  writeFileSync(path.join(dir, 'info', 'alternates'), `${SANDBOX_STORE}\n`);
  return dir;
}

/** The quarantines in `objectsDir` whose name starts with `PREFIX` + `owner` (all of them for an empty owner). */
export function listQuarantines(objectsDir: string, owner = ''): string[] {
  let names: string[];
  try {
    names = readdirSync(objectsDir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(`${PREFIX}${owner}`)).map((n) => path.join(objectsDir, n));
}

export interface Migration {
  loose: number;
  packs: number;
  /** Objects or packs left out, each with why. */
  dropped: string[];
}

/** Moves the quarantine's objects into `objectsDir` (the store of repository `top`), then removes the quarantine. */
export async function migrateQuarantine(
  top: string,
  format: ObjectFormat,
  quarantine: string,
  objectsDir: string,
  maxObjectBytes = MAX_LOOSE_OBJECT,
): Promise<Migration> {
  const result: Migration = { loose: 0, packs: 0, dropped: [] };
  try {
    for (const dir of readdirSync(quarantine)) {
      if (/^[0-9a-f]{2}$/.test(dir) && isRealDir(path.join(quarantine, dir)))
        migrateLooseDir(format, quarantine, objectsDir, dir, result, maxObjectBytes);
    }
    for (const name of safeList(path.join(quarantine, 'pack'))) {
      if (name.endsWith('.pack')) await migratePack(top, path.join(quarantine, 'pack', name), objectsDir, result);
    }
  } finally {
    rmSync(quarantine, { recursive: true, force: true });
  }
  return result;
}

function migrateLooseDir(
  format: ObjectFormat,
  quarantine: string,
  objectsDir: string,
  dir: string,
  result: Migration,
  maxObjectBytes: number,
): void {
  const idLength = format === 'sha256' ? 62 : 38;
  for (const name of safeList(path.join(quarantine, dir))) {
    if (name.length !== idLength || !/^[0-9a-f]+$/.test(name)) continue;
    const oid = dir + name;
    const problem = checkLoose(format, oid, path.join(quarantine, dir, name), maxObjectBytes);
    if (typeof problem === 'string') {
      result.dropped.push(`${oid}: ${problem}`);
      continue;
    }
    if (writeLoose(objectsDir, dir, name, problem)) result.loose++;
  }
}

/** The loose object's file as read (no symbolic link followed), when it inflates to an object hashing to `oid`; else why not. */
function checkLoose(format: ObjectFormat, oid: string, file: string, maxObjectBytes: number): Buffer | string {
  let raw: Buffer;
  try {
    raw = readNoFollow(file);
  } catch (err) {
    return `not a readable file (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  let body: Buffer;
  try {
    body = inflateSync(raw, { maxOutputLength: maxObjectBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      return `it inflates to more than ${maxObjectBytes} bytes`;
    return 'not zlib data';
  }
  const nul = body.indexOf(0);
  const header = nul > 0 ? /^(blob|tree|commit|tag) (\d+)$/.exec(body.subarray(0, nul).toString('latin1')) : null;
  if (!header || Number(header[2]) !== body.length - nul - 1) return 'no valid object header';
  if (hashObject(format, header[1], body.subarray(nul + 1)) !== oid) return 'its content does not hash to its id';
  return raw;
}

/** Writes the object as git does (a temporary file, then a hard link: an existing object is never replaced); false: it was there. */
function writeLoose(objectsDir: string, dir: string, name: string, raw: Buffer): boolean {
  const folder = path.join(objectsDir, dir);
  mkdirSync(folder, { recursive: true });
  const tmp = path.join(folder, `tmp_obj_ralph_${randomBytes(6).toString('hex')}`);
  writeFileSync(tmp, raw, { mode: 0o444, flag: 'wx' });
  try {
    linkSync(tmp, path.join(folder, name));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/** A pack: copied next to the store's packs, indexed (and so verified) by `git index-pack`, then linked in under its own name. */
async function migratePack(top: string, pack: string, objectsDir: string, result: Migration): Promise<void> {
  const packDir = path.join(objectsDir, 'pack');
  mkdirSync(packDir, { recursive: true });
  const tmp = path.join(packDir, `tmp_pack_ralph_${randomBytes(6).toString('hex')}`);
  try {
    if (!lstatSync(pack).isFile()) throw new Error('not a plain file');
    copyFileSync(pack, `${tmp}.pack`, constants.COPYFILE_EXCL);
    // The agent has just run and could have written a .git/commondir (the runner guard removes it only later): git is
    // told where the repository is rather than left to look.
    const gitDir = path.dirname(objectsDir);
    const indexed = await runGit(top, ['index-pack', '-o', `${tmp}.idx`, `${tmp}.pack`], {
      env: { GIT_DIR: gitDir, GIT_COMMON_DIR: gitDir },
    });
    const name = indexed.stdout.trim();
    if (indexed.code !== 0) throw new Error(`git index-pack refused it (${indexed.stderr.trim().split('\n')[0]})`);
    if (!isObjectId(name))
      throw new Error(`git index-pack printed ${JSON.stringify(indexed.stdout.trim().slice(0, 80))}`);
    for (const ext of ['.pack', '.idx']) {
      chmodSync(`${tmp}${ext}`, 0o444);
      linkOrKeep(`${tmp}${ext}`, path.join(packDir, `pack-${name}${ext}`));
    }
    result.packs++;
  } catch (err) {
    result.dropped.push(`${path.basename(pack)}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    for (const ext of ['.pack', '.idx', '.rev']) rmSync(`${tmp}${ext}`, { force: true });
  }
}

function linkOrKeep(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * A regular file's bytes, never through a link and never blocking: the quarantine is the agent's to fill, and a FIFO
 * named like an object would hang a plain open (O_NONBLOCK makes that open return at once; fstat then refuses it).
 */
function readNoFollow(file: string): Buffer {
  if (!lstatSync(file).isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOTFILE' });
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOTFILE' });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function safeList(dir: string): string[] {
  return isRealDir(dir) ? readdirSync(dir) : [];
}
