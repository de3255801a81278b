// The pinned bytes into a verification checkout (SPEC §6). The runner holds the plan commit's pinned files
// (verify/pin-capture.ts); here they are written into the checkout, never through a link, and read back and hashed
// against their ids. A committed link whose target lies outside the checkout would have the checks read files no
// commit holds: SealBroken, the claims checked there are rejected, saying why.
import { escapeUnsafe } from '../../prd/unsafe-text.js';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { Pins } from './types.js';
import { gitOk } from '../git/git.js';
import { hashObject, hashPathObject, type TreeEntry } from '../git/objects.js';
import { SealBroken } from '../errors.js';
import { lstatOrNull } from '../../util/read.js';

/** The files of the checkout's index (`git ls-files -s`): the claimed commit's, path → mode and blob id. */
export async function readCheckoutIndex(dir: string): Promise<Map<string, TreeEntry>> {
  const out = new Map<string, TreeEntry>();
  for (const rec of (await gitOk(dir, ['ls-files', '-s', '-z'])).split('\0')) {
    const m = /^(\d+) ([0-9a-f]+) \d\t(.*)$/s.exec(rec);
    if (m) out.set(m[3], { mode: m[1], oid: m[2] });
  }
  return out;
}

/**
 * A commit whose index holds the runner's own files (ralph/ralph.mjs, ralph.sh, .ralphkit.json) other than the loop
 * started with, or not at all: SealBroken. The sandbox keeps the working-tree copies read-only, but an agent can
 * commit its own engine through the index alone (`git update-index --cacheinfo`) and hide it from git status; any
 * clone of the branch would then run it, outside the sandbox, as soon as someone starts the loop there.
 */
export function refuseRunnerFileChange(commit: string, index: ReadonlyMap<string, TreeEntry>, pins: Pins): void {
  const changed = [...(pins.runnerFiles ?? [])]
    .filter(([file, oid]) => (index.get(file)?.oid ?? null) !== oid)
    .map(([f]) => f);
  if (!changed.length) return;
  throw new SealBroken(
    `the commit ${commit.slice(0, 7)} holds the runner's own ${changed.join(', ')} other than the loop started with (an engine committed through the index alone runs from any clone of the branch, outside the sandbox); the claim is rejected, and the runner's next commit puts its own back`,
  );
}

/**
 * The held bytes of each pinned path (but those `skip` matches) into the checkout where it does not hold them byte for
 * byte already (bytes equal to the runner's copy hash to the pinned id: the copy was hashed when it was read); what it
 * writes is read back and hashed. `asGitWrote`: pinned files git converted on the way out of the pinned blob (an eol,
 * ident or encoding rule of the plan commit's own attributes), held as git wrote them instead (verify/checkout.ts
 * checked those bytes through git). (An object the store holds under a pinned id with other bytes never gets this far:
 * a sealed checkout holds what git wrote against the commit, verify/checkout.ts.) Throws SealBroken; returns the
 * paths written.
 */
export async function sealPins(
  dir: string,
  pins: Pins,
  skip: (file: string) => boolean,
  asGitWrote: ReadonlyMap<string, Buffer> = new Map(),
): Promise<string[]> {
  const want = (file: string) => asGitWrote.get(file) ?? pins.held.get(file)!;
  const mode = (file: string) => pins.tree.get(file)!.mode;
  const differs = [...pins.held.keys()].filter((file) => !skip(file) && !holds(dir, file, mode(file), want(file)));
  for (const file of differs) putFile(dir, file, mode(file), want(file));
  const bad = differs.filter((file) =>
    asGitWrote.has(file)
      ? !holds(dir, file, mode(file), want(file))
      : readHashed(dir, file, pins) !== pins.tree.get(file)!.oid,
  );
  if (bad.length)
    throw new SealBroken(
      `the pinned files ${bad.join(', ')} in the checkout do not hash to their ids at the plan commit ${pins.commit.slice(0, 7)} after the runner wrote them; the claim is rejected`,
    );
  return differs;
}

/** The checkout's `file` is `bytes` with `mode` (a link: its target), reached through no link. */
function holds(dir: string, file: string, mode: string, bytes: Buffer): boolean {
  const st = realParents(dir, file) ? lstatOrNull(path.join(dir, file)) : null;
  if (!st) return false;
  if (mode === '120000')
    return st.isSymbolicLink() && readlinkSync(path.join(dir, file), { encoding: 'buffer' }).equals(bytes);
  return (
    st.isFile() && ((st.mode & 0o100) !== 0) === (mode === '100755') && readFileSync(path.join(dir, file)).equals(bytes)
  );
}

/** The blob id of the checkout's `file` (a link: of its target), reached through no link; null for anything else. */
function readHashed(dir: string, file: string, pins: Pins): string | null {
  return realParents(dir, file) ? hashPathObject(pins.format, path.join(dir, file)) : null;
}

/** True when every folder on the way to `file` is a real folder (no link, no file in its place). */
export function realParents(dir: string, file: string): boolean {
  let at = dir;
  for (const part of file.split('/').slice(0, -1)) {
    at = path.join(at, part);
    if (!lstatOrNull(at)?.isDirectory()) return false;
  }
  return true;
}

/**
 * A folder in which the plan commit pins a name's absence (`src` of `src/pytest.py`, a PYTHONPATH folder) that is a
 * link in the checkout: SealBroken. Absence is judged on the commit's paths, and a link (`src -> lib`, committed)
 * would bring `lib/pytest.py` in under the pinned name. `when`: said after the commit, " after setup".
 */
export function refuseLinkedAbsence(
  dir: string,
  commit: string,
  absent: readonly string[],
  allowed: (file: string) => boolean,
  when = '',
): void {
  const linked = absent.filter((p) => !p.includes('*') && !allowed(p) && linkOnTheWay(dir, p) !== null);
  if (!linked.length) return;
  const links = [...new Set(linked.map((p) => linkOnTheWay(dir, p)))];
  throw new SealBroken(
    `in the checkout of ${commit.slice(0, 7)}${when}, ${links.join(', ')} ${links.length === 1 ? 'is a link' : 'are links'} where the plan commit pins the absence of ${linked.length === 1 ? linked[0] : `${linked.length} names in it (${linked.slice(0, 3).join(', ')}${linked.length > 3 ? ', …' : ''})`}: what ${links.length === 1 ? 'it leads' : 'they lead'} to would stand in for a test runner's own module; the claim is rejected (commit a real folder there)`,
  );
}

/** The first folder on the way to `file` (relative) that is a link, or null (a folder not there ends the way). */
function linkOnTheWay(dir: string, file: string): string | null {
  let at = dir;
  for (const part of file.split('/').slice(0, -1)) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (!st) return null;
    if (st.isSymbolicLink()) return path.relative(dir, at).split(path.sep).join('/');
  }
  return null;
}

/** `bytes` at `file`: each folder on the way made a real one (a link or a file there is removed, never followed). */
function putFile(dir: string, file: string, mode: string, bytes: Buffer): void {
  let at = dir;
  for (const part of file.split('/').slice(0, -1)) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (st?.isDirectory()) continue;
    if (st) rmSync(at, { recursive: true, force: true });
    mkdirSync(at);
  }
  const abs = path.join(dir, file);
  rmSync(abs, { recursive: true, force: true });
  if (mode === '120000') return symlinkSync(bytes, abs);
  writeFileSync(abs, bytes);
  chmodSync(abs, mode === '100755' ? 0o755 : 0o644);
}

/** Removes `file` from the checkout; a link or file standing for one of its folders goes instead (nothing is followed). */
export function removeFile(dir: string, file: string): void {
  let at = dir;
  for (const part of file.split('/')) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (!st) return;
    if (!st.isDirectory() || at === path.join(dir, file)) return rmSync(at, { recursive: true, force: true });
  }
}

/**
 * Links at or above `paths` in the checkout that lead out of it (an absolute target, `..` past its root, through
 * another link), as "link -> target"; a link the plan commit has at that path, byte for byte, is the owner's own.
 * Git checks nothing out beyond a link, so the first link on a path is the one that counts. One folder listing per
 * folder on the way to `paths`, not a look at each file.
 */
export function findLinksOut(dir: string, paths: Iterable<string>, pins: Pins | null): string[] {
  const root = realpathSync(dir);
  const wanted = new Set<string>();
  const folders = new Set<string>(['']);
  for (const file of paths) {
    wanted.add(file);
    for (let i = file.indexOf('/'); i >= 0; i = file.indexOf('/', i + 1)) folders.add(file.slice(0, i));
  }
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const at = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory() && folders.has(at)) walk(at);
      else if (entry.isSymbolicLink() && (wanted.has(at) || folders.has(at))) {
        const abs = path.join(dir, at);
        if (leavesRoot(root, abs) && !ownLink(pins, at, abs)) out.push(escapeUnsafe(`${at} -> ${readlinkSync(abs)}`));
      }
    }
  };
  walk('');
  return out;
}

function ownLink(pins: Pins | null, rel: string, abs: string): boolean {
  const planned = pins?.tree.get(rel);
  return (
    planned?.mode === '120000' &&
    hashObject(pins!.format, 'blob', readlinkSync(abs, { encoding: 'buffer' })) === planned.oid
  );
}

function leavesRoot(root: string, link: string): boolean {
  const real = resolveLoose(path.resolve(path.dirname(link), readlinkSync(link)));
  return real !== root && !real.startsWith(root + path.sep);
}

/** realpath, for a path that may not exist (a dangling link): its nearest existing folder's realpath, then the rest. */
function resolveLoose(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = path.dirname(p);
    return parent === p ? p : path.join(resolveLoose(parent), path.basename(p));
  }
}

/** Throws SealBroken naming the links of `paths` that lead out of the checkout. */
export function refuseLinksOut(
  dir: string,
  commit: string,
  paths: Iterable<string>,
  pins: Pins | null,
  when = '',
): void {
  const out = findLinksOut(dir, paths, pins);
  if (!out.length) return;
  throw new SealBroken(
    `${out.length === 1 ? 'a symbolic link leads' : 'symbolic links lead'} out of the checkout of ${commit.slice(0, 7)}${when}: ${out.join(', ')}; the checks would read files no commit holds, so the claim is rejected (commit the files themselves, or a link that stays inside the repository)`,
  );
}
