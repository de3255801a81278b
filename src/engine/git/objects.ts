// Git objects read by their content, not their names (SPEC §6). An object's id is the hash of its content, but git
// does not check that when it reads one: the agent can write .git/objects (a loose object rewritten in place, a pack
// of its own, an alternate store), and git then hands out the agent's bytes under the old id. What the runner must
// hold as it was (the plan commit's pinned files) it reads here, and every object read is hashed against its id.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, constants } from 'node:fs';
import { gitBytes, gitOk, printedObjectFormat } from './git.js';

export type ObjectFormat = 'sha1' | 'sha256';

export interface TreeEntry {
  /** As git writes it: 100644, 100755, 120000 (a symbolic link), 160000 (a submodule). */
  mode: string;
  oid: string;
}

/** An object whose content does not hash to its id, or that is missing: the object store is not what git says it is. */
export class ObjectMismatch extends Error {
  constructor(
    readonly oid: string,
    readonly problem: 'missing' | 'content' | 'type',
    /** The commit's path that names it, when it is a file's. */
    readonly path?: string,
  ) {
    const what = path ? `object ${oid} (${path})` : `object ${oid}`;
    super(
      problem === 'missing'
        ? `${what} is missing`
        : problem === 'type'
          ? `${what} is not of the type its parent names`
          : `${what} does not hold the content its id is the hash of`,
    );
    this.name = 'ObjectMismatch';
  }
}

const formats = new Map<string, Promise<ObjectFormat>>();

/**
 * The repository's hash (`extensions.objectFormat`): sha1, or sha256. Asked once per repository and process: a
 * repository cannot change its hash (git refuses to once it has objects), and the sandboxed loop asks at every
 * iteration (its quarantine checks each new object against its id).
 */
export function readObjectFormat(top: string): Promise<ObjectFormat> {
  let format = formats.get(top);
  const printed = printedObjectFormat(top);
  if (!format && printed) formats.set(top, (format = Promise.resolve(printed)));
  if (!format) {
    format = gitOk(top, ['rev-parse', '--show-object-format']).then((out) =>
      out.trim() === 'sha256' ? 'sha256' : 'sha1',
    );
    // A failure is not kept: the next call asks git again.
    format.catch(() => formats.delete(top));
    formats.set(top, format);
  }
  return format;
}

/** The id git gives `bytes` as an object of `type` (`git hash-object -t <type>`): the hash of "<type> <size>\0<bytes>". */
export function hashObject(format: ObjectFormat, type: string, bytes: Buffer): string {
  return createHash(format).update(`${type} ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * The blob id of what is at `abs` as git would hash it (a link: its target; a file: its bytes, read in pieces, so a
 * large one costs no more memory than a piece), or null for anything else (a folder, a pipe) and what is gone. The
 * size hashed is the one read: a file that grows or shrinks while it is read hashes to no id git gave it.
 */
export function hashPathObject(format: ObjectFormat, abs: string | Buffer): string | null {
  const st = lstatOrNull(abs);
  if (st?.isSymbolicLink()) return hashObject(format, 'blob', readlinkSync(abs, { encoding: 'buffer' }));
  if (!st?.isFile()) return null;
  // O_NOFOLLOW and O_NONBLOCK: a link or a pipe put there since the look above is refused, never followed or waited on.
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) return null;
    const size = opened.size;
    const hash = createHash(format).update(`blob ${size}\0`);
    const piece = Buffer.allocUnsafe(Math.min(Math.max(size, 1), 1 << 20));
    let read = 0;
    for (let n; (n = readSync(fd, piece, 0, piece.length, null)) > 0; read += n) hash.update(piece.subarray(0, n));
    return read === size ? hash.digest('hex') : null;
  } finally {
    closeSync(fd);
  }
}

function lstatOrNull(abs: string | Buffer) {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
}

/** The objects `oids` (ids, or names git resolves) as the store holds them, in one `git cat-file --batch` (GIT_NO_REPLACE_OBJECTS: no replace refs); null: missing. */
export async function readObjects(
  top: string,
  oids: readonly string[],
): Promise<Map<string, { type: string; bytes: Buffer } | null>> {
  const out = new Map<string, { type: string; bytes: Buffer } | null>();
  const unique = [...new Set(oids)];
  if (!unique.length) return out;
  const raw = await gitBytes(top, ['cat-file', '--batch'], `${unique.join('\n')}\n`);
  let at = 0;
  for (const oid of unique) {
    const eol = raw.indexOf(0x0a, at);
    const header = raw.subarray(at, eol).toString('latin1').split(' ');
    at = eol + 1;
    if (header[1] === 'missing' || header.length !== 3) {
      out.set(oid, null);
      continue;
    }
    const size = Number(header[2]);
    const obj = { type: header[1], bytes: Buffer.from(raw.subarray(at, at + size)) };
    out.set(oid, obj);
    // Asked by a name (`<commit>^{tree}`), found by its id: the id git printed is a key too (still hashed when used).
    if (header[0] !== oid) out.set(header[0], obj);
    at += size + 1;
  }
  return out;
}

/** readObjects, each checked: of type `type`, and hashing to its id; else ObjectMismatch. */
export async function readVerifiedObjects(
  top: string,
  format: ObjectFormat,
  type: string,
  oids: readonly string[],
): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const [oid, obj] of await readObjects(top, oids)) out.set(oid, checked(format, type, oid, obj));
  return out;
}

/**
 * Every file of `commit` (path → mode and blob id), read from the commit down through each tree, every object hashed
 * against its id: the paths and ids are the commit's own, whatever the store holds. `ls-tree -r -t` names the trees
 * first, so the commit and all its trees come in one `cat-file`; that listing is only a guess of which objects to ask
 * for (each is still hashed against the id its verified parent names), and a tree it left out is read level by level.
 */
export async function readVerifiedTree(
  top: string,
  format: ObjectFormat,
  commit: string,
): Promise<Map<string, TreeEntry>> {
  const listed = await listTreeIds(top, commit);
  const fetched = await readObjects(top, [commit, `${commit}^{tree}`, ...listed]);
  const verified = async (type: string, oids: string[], paths?: Map<string, string>): Promise<Map<string, Buffer>> => {
    const out = new Map<string, Buffer>();
    const missing = oids.filter((oid) => !fetched.get(oid));
    for (const [oid, obj] of await readObjects(top, missing)) fetched.set(oid, obj);
    for (const oid of oids) out.set(oid, checked(format, type, oid, fetched.get(oid) ?? null, paths?.get(oid)));
    return out;
  };
  const body = (await verified('commit', [commit])).get(commit)!;
  const root = /^tree ([0-9a-f]+)\n/.exec(body.toString('latin1'))?.[1];
  if (!root) throw new ObjectMismatch(commit, 'type');
  const files = new Map<string, TreeEntry>();
  let level: Array<{ prefix: string; oid: string }> = [{ prefix: '', oid: root }];
  while (level.length) {
    const trees = await verified(
      'tree',
      level.map((t) => t.oid),
      new Map(level.map((t) => [t.oid, t.prefix || '/'])),
    );
    const next: typeof level = [];
    for (const { prefix, oid } of level) {
      for (const e of parseTree(trees.get(oid)!, format)) {
        if (e.mode === '40000') next.push({ prefix: `${prefix}${e.name}/`, oid: e.oid });
        else files.set(`${prefix}${e.name}`, { mode: e.mode, oid: e.oid });
      }
    }
    level = next;
  }
  return files;
}

/** The ids of the trees under `commit` as git lists them (a guess to fetch by; never trusted as the commit's content). */
async function listTreeIds(top: string, commit: string): Promise<string[]> {
  const out = await gitOk(top, ['ls-tree', '-r', '-t', '-z', '--full-tree', commit]).catch(() => '');
  return out
    .split('\0')
    .filter((line) => / tree /.test(line.slice(0, line.indexOf('\t'))))
    .map((line) => line.slice(0, line.indexOf('\t')).split(' ')[2]);
}

/** An object as read, checked: of type `type` and hashing to its id; else ObjectMismatch naming `file` where given. */
function checked(
  format: ObjectFormat,
  type: string,
  oid: string,
  obj: { type: string; bytes: Buffer } | null,
  file?: string,
): Buffer {
  if (!obj) throw new ObjectMismatch(oid, 'missing', file);
  if (obj.type !== type) throw new ObjectMismatch(oid, 'type', file);
  if (hashObject(format, type, obj.bytes) !== oid) throw new ObjectMismatch(oid, 'content', file);
  return obj.bytes;
}

/** A tree object's entries: "<mode> <name>\0<id as raw bytes>", one after another. */
export function parseTree(bytes: Buffer, format: ObjectFormat): Array<{ mode: string; name: string; oid: string }> {
  const idLength = format === 'sha256' ? 32 : 20;
  const out: Array<{ mode: string; name: string; oid: string }> = [];
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const nul = bytes.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 1 + idLength > bytes.length) throw new Error('a tree object that is not one');
    out.push({
      mode: bytes.subarray(at, space).toString('latin1'),
      name: bytes.subarray(space + 1, nul).toString('utf8'),
      oid: bytes.subarray(nul + 1, nul + 1 + idLength).toString('hex'),
    });
    at = nul + 1 + idLength;
  }
  return out;
}
