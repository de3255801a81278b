// Git repositories inside the working tree (SPEC §6, "what the agent can write"). A gitlink in the index whose folder
// holds a repository (a `.git` folder, or a `.git` file naming a git folder anywhere) is a submodule to git, and a
// plain `git status` in your tree runs a status inside it, with that repository's configuration: its
// `core.fsmonitor` is a command (checked with git 2.39.5: the superproject's status ran it), and so are its filters.
// Your shell prompt runs `git status` too. The runner's own git never enters one (`--ignore-submodules=dirty`), but
// you would, outside the sandbox, once the loop is over. So after every agent run the repositories at the index's
// gitlinks are held against the loop's start: one the agent made is removed, one it changed (its `.git` file, its
// configuration) is put back, and the iteration's claims are rejected. So is a `.git` made in a folder of tracked
// files, which no git status at the top shows (setAsidePlain).
import {
  lstatSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { type IndexView, readIndexView } from './index-flags.js';
import { lstatOrNull } from '../../util/read.js';
import type { Violation } from './types.js';

/** What a gitlink's folder held at one moment: its `.git` entry and the files git reads its configuration from. */
interface NestedGit {
  /** `<gitlink>/.git`: a folder, a file (its bytes), or a link (its target). */
  entry: { kind: 'dir' } | { kind: 'file'; bytes: Buffer } | { kind: 'link'; target: string } | { kind: 'other' };
  /** When the entry leads to a git folder: the files that decide its configuration (readGitFolder). */
  files: HeldFile[];
  /** That git folder (absolute). */
  gitDir?: string;
}

/** A file (absolute), its bytes (null: none), and the real path of its folder then: nothing is written there once that folder leads elsewhere. */
interface HeldFile {
  file: string;
  bytes: Buffer | null;
  dir: string | null;
}

export interface NestedGits {
  top: string;
  /** By the gitlink's path relative to `top`: what its folder held. */
  held: Map<string, NestedGit>;
  /** The index as last listed: its gitlinks (`odd`: paths that are not UTF-8, as bytes) among the rest. */
  links: IndexView;
  /** This tree's own git folder (where its index is). */
  ownGitDir: string;
  /** Folders of tracked files (latin1 of their bytes) that held a `.git` when the loop started: yours, left alone. */
  plain: Set<string>;
}

/**
 * Reads the repositories at the gitlinks of `top`'s index: once when the loop starts, before any agent runs. `since`
 * (a resumed loop's first start, ms): a repository whose `.git` changed after it is not held as the user's, but
 * swept like one the agent made (a runner killed mid-iteration never swept it; no write keeps a change time).
 */
export async function holdNestedGits(
  top: string,
  ownGitDir: string,
  since?: number,
  index?: IndexView,
): Promise<NestedGits> {
  // `index`: the loop start's listing (verify/index-flags.ts), when the caller has it.
  const links = index ?? (await readIndexView(top, ownGitDir, null));
  const held = new Map<string, NestedGit>();
  for (const rel of links.links) {
    let found: NestedGit | null = null;
    try {
      found = readNested(top, rel);
    } catch {
      // Unreadable now: not held, so the first sweep names it.
    }
    if (found && !(since !== undefined && changedSince(top, rel, found, since))) held.set(rel, found);
  }
  const plain = new Set<string>();
  for (const folder of trackedFolders(links)) {
    // A folder whose name is not UTF-8 is not held: a repository there is set aside by the first sweep.
    const bytes = Buffer.from(folder, 'latin1');
    if (!isUtf8(bytes)) continue;
    const rel = bytes.toString('utf8');
    let found: NestedGit | null = null;
    try {
      found = readNested(top, rel);
    } catch {
      // Unreadable now: not held, so the first sweep sets it aside.
    }
    if (found && !(since !== undefined && changedSince(top, rel, found, since))) plain.add(`${folder}/.git`);
  }
  // The rest as found (a `.git` is held above, with `since`): a git folder or untracked .gitignore of yours.
  for (const found of plainFinds({ top, links, plain: new Set() }))
    if (!found.key.endsWith('/.git')) plain.add(found.key);
  return { top, held, links, ownGitDir, plain };
}

// Each index listing's folders, worked out once: the sweep after every agent run looks in each of them.
const foldersOf = new WeakMap<IndexView, string[]>();

/**
 * The folders that hold tracked files or gitlinks, and those above them (not the top), as latin1 of their bytes. git
 * walks into such a folder and never shows a `.git` there, so a repository the agent makes in one is seen by no
 * `git status` of yours; yet your git run inside that folder (your shell prompt's, once you cd there) is that
 * repository's, and runs what its configuration says.
 */
function trackedFolders(view: IndexView): string[] {
  const known = foldersOf.get(view);
  if (known) return known;
  const out = new Set<string>();
  const paths = [
    ...view.files.map((f) => f.raw.toString('latin1')),
    ...view.links,
    ...view.odd.map((o) => o.toString('latin1')),
  ];
  for (const p of paths) {
    for (let at = p.lastIndexOf('/'); at > 0; at = p.lastIndexOf('/', at - 1)) {
      const folder = p.slice(0, at);
      if (out.has(folder)) break;
      out.add(folder);
    }
  }
  const list = [...out];
  foldersOf.set(view, list);
  return list;
}

// Each index listing's tracked paths (latin1 of their bytes), for telling an untracked file from a tracked one.
const trackedOf = new WeakMap<IndexView, Set<string>>();

function trackedPaths(view: IndexView): Set<string> {
  const known = trackedOf.get(view);
  if (known) return known;
  const out = new Set(view.files.map((f) => f.raw.toString('latin1')));
  trackedOf.set(view, out);
  return out;
}

/** One thing setAsidePlain finds: `key` is `<folder>/<entry>` (latin1), `abs` the entry's bytes path. */
interface PlainFind {
  key: string;
  abs: Buffer;
  what: string;
  /** Set aside (renamed beside itself); false: only named (a file a commit tracks). */
  movable: boolean;
}

/**
 * What in the folders of tracked files makes git see another repository there, or hides files from git status, that
 * `plain` (the loop's start) does not hold: a `.git` (pass 29: `git init src` after honest work, with a
 * `core.fsmonitor`: no git status at the top shows it, and your git status in src/ ran it); the folder itself made a
 * git folder (pass 30: `HEAD`, `objects/`, `refs/` and a `config` with `core.worktree` and `core.fsmonitor` in src/,
 * which git's discovery takes for a repository without any `.git`); and a `.gitignore` no commit tracks (pass 30: one
 * that ignores itself and a planted file hides both from every git status, yours and the runner's).
 */
function plainFinds(nested: Pick<NestedGits, 'top' | 'links' | 'plain'>): PlainFind[] {
  const links = new Set(nested.links.links);
  const tracked = trackedPaths(nested.links);
  const out: PlainFind[] = [];
  const at = (folder: string, entry: string) => ({
    key: folder ? `${folder}/${entry}` : entry,
    abs: Buffer.concat([
      Buffer.from(`${nested.top}${path.sep}`),
      Buffer.from(folder ? `${folder}/${entry}` : entry, 'latin1'),
    ]),
  });
  for (const folder of ['', ...trackedFolders(nested.links)]) {
    if (links.has(folder)) continue;
    const found: PlainFind[] = [];
    const git = at(folder, '.git');
    if (folder && existsNoFollow(git.abs)) found.push({ ...git, what: 'a repository', movable: true });
    const head = at(folder, 'HEAD');
    if (folder && looksLikeGitDir(head.abs))
      found.push({ ...head, what: 'a git folder (HEAD, objects, refs)', movable: !tracked.has(head.key) });
    const ignore = at(folder, '.gitignore');
    if (!tracked.has(ignore.key) && existsNoFollow(ignore.abs))
      found.push({
        ...ignore,
        what: 'a .gitignore no commit tracks, which hides files from git status',
        movable: true,
      });
    out.push(...found.filter((f) => !nested.plain.has(f.key)));
  }
  return out;
}

/** git's discovery takes a folder for a git folder when it holds `HEAD` and `objects/` and `refs/` (or a `commondir`). */
function looksLikeGitDir(head: Buffer): boolean {
  if (!existsNoFollow(head)) return false;
  const dir = head.subarray(0, head.length - 'HEAD'.length);
  const has = (name: string) => existsNoFollow(Buffer.concat([dir, Buffer.from(name)]));
  return (has('objects') && has('refs')) || has('commondir');
}

/**
 * After an agent run: what plainFinds finds is set aside beside itself (`<name>-set-aside-by-ralph-<time>`), or named
 * when a commit tracks it; each is named, and the iteration's claims go.
 */
function setAsidePlain(nested: NestedGits): string[] {
  const out: string[] = [];
  for (const f of plainFinds(nested)) {
    const bytes = Buffer.from(f.key, 'latin1');
    const shown = isUtf8(bytes) ? bytes.toString('utf8') : JSON.stringify(f.key);
    const folder = path.posix.dirname(f.key);
    // A folder on the way that is a link leads out of the tree: nothing is moved through it.
    if (
      folder !== '.' &&
      isUtf8(bytes) &&
      !linkFree(nested.top, bytes.toString('utf8').split('/').slice(0, -1).join('/'))
    )
      out.push(`${shown} (${f.what}; through a link: left as it is)`);
    else if (!f.movable)
      out.push(`${shown} (${f.what}; a commit tracks it: left, look at it before you run git there)`);
    else out.push(`${shown} (${f.what})${tryStep(() => setAside(f.abs))}`);
  }
  return out;
}

/**
 * Whether the repository at `rel` changed after `since` (ms): its `.git` file or link, or its git folder's `config`
 * (not the folder itself, whose change time every index write inside it moves). No write keeps a change time.
 */
function changedSince(top: string, rel: string, found: NestedGit, since: number): boolean {
  const entry = lstatOrNull(path.join(top, rel, '.git'));
  const config = found.gitDir ? lstatOrNull(path.join(found.gitDir, 'config')) : null;
  return (found.entry.kind !== 'dir' && (entry?.ctimeMs ?? 0) >= since) || (config?.ctimeMs ?? 0) >= since;
}

/**
 * After an agent run: each repository at a gitlink of the index now, against the loop's start. Made since: set
 * aside in its folder (`.git-set-aside-by-ralph-<time>`, which git does not enter; never deleted: a nested clone of
 * yours that `git add -A` staged as a gitlink keeps its history). Changed: put back. Returns the violation that
 * rejects the iteration's claims, or undefined when all is as it was. An entry it cannot handle is named in it.
 */
export async function restoreNestedGits(nested: NestedGits): Promise<Violation | undefined> {
  nested.links = await readIndexView(nested.top, nested.ownGitDir, nested.links);
  const changed: string[] = [];
  for (const raw of nested.links.odd) {
    // A path that is not UTF-8 cannot be held by name: whatever repository is there is set aside, by its bytes.
    const abs = Buffer.concat([Buffer.from(`${nested.top}${path.sep}`), raw, Buffer.from(`${path.sep}.git`)]);
    if (!existsNoFollow(abs)) continue;
    changed.push(`${JSON.stringify(raw.toString('latin1'))}/.git${tryStep(() => setAside(abs))}`);
  }
  for (const rel of nested.links.links) {
    let now: NestedGit | null;
    try {
      now = readNested(nested.top, rel);
    } catch (err) {
      changed.push(`${rel}/.git (could not be read: ${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      continue;
    }
    const before = nested.held.get(rel);
    if (sameNested(before, now)) continue;
    const shown = `${rel}/.git`;
    if (!linkFree(nested.top, rel)) {
      // A folder on the way is a link: nothing is moved or written through it; the claims still go.
      changed.push(`${shown} (through a link: left as it is)`);
      continue;
    }
    const abs = path.join(nested.top, rel, '.git');
    changed.push(`${shown}${tryStep(() => (before ? putBack(abs, before) : setAside(abs)))}`);
  }
  changed.push(...setAsidePlain(nested));
  if (!changed.length) return undefined;
  return {
    reason: `the agent made or changed a git repository inside the working tree (${changed.join(', ')}): git runs what its configuration says (core.fsmonitor, a filter) in your own git status there; made ones were set aside in their folder as .git-set-aside-by-ralph-*, changed ones put back as they were when the loop started (a story that needs a submodule: add it, and run git submodule update --init, before the loop starts)`,
    files: [],
  };
}

/** Runs `step`; '' when it worked, else why, to name beside the path (nothing the sweep meets stops the loop). */
function tryStep(step: () => void): string {
  try {
    step();
    return '';
  } catch (err) {
    return ` (could not be handled: ${(err as NodeJS.ErrnoException).code ?? String(err)}; remove it yourself before you run git there)`;
  }
}

function existsNoFollow(p: Buffer): boolean {
  try {
    // Asked for three names in every folder of tracked files after each agent run: no error made for a missing one.
    return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Moves an entry (`.git`, `HEAD`, `.gitignore`) beside itself under a name git does not read. */
function setAside(abs: string | Buffer): void {
  const suffix = `-set-aside-by-ralph-${Date.now()}`;
  renameSync(abs, Buffer.isBuffer(abs) ? Buffer.concat([abs, Buffer.from(suffix)]) : `${abs}${suffix}`);
}

/** What `<rel>/.git` is now, or null when there is none. */
function readNested(top: string, rel: string): NestedGit | null {
  const abs = path.join(top, rel, '.git');
  const st = lstatOrNull(abs);
  if (!st) return null;
  if (st.isSymbolicLink()) return { entry: { kind: 'link', target: readLinkOr(abs) }, files: [] };
  if (st.isDirectory()) return { entry: { kind: 'dir' }, files: readGitFolder(abs), gitDir: abs };
  if (!st.isFile()) return { entry: { kind: 'other' }, files: [] };
  const bytes = readFileSync(abs);
  const named = /^gitdir:\s*(.+?)\s*$/m.exec(bytes.toString('utf8'))?.[1];
  if (!named) return { entry: { kind: 'file', bytes }, files: [] };
  const gitDir = path.resolve(path.dirname(abs), named);
  return { entry: { kind: 'file', bytes }, files: readGitFolder(gitDir), gitDir };
}

/**
 * The git folders of the repositories the loop started with at gitlinks (your submodules): under --sandbox they are
 * read-only to the agent (agents/sandbox.ts), so their index cannot gain a gitlink of its own, nor their
 * configuration a command, between two sweeps or below where a sweep looks.
 */
export function heldGitDirs(nested: NestedGits): string[] {
  return [...nested.held.values()].flatMap((n) => (n.gitDir ? [n.gitDir] : []));
}

/**
 * The files git reads a git folder's configuration from (gitrepository-layout(5)): its `config`, `config.worktree`,
 * and `commondir`, which sends git to another folder for config, objects and refs (an adversarial pass pointed a
 * submodule's at a copy whose config ran a program); and that folder's `config`.
 */
function readGitFolder(gitDir: string): HeldFile[] {
  const own = ['config', 'config.worktree', 'commondir'].map((name) => readHeld(path.join(gitDir, name)));
  const common = own[2].bytes?.toString('utf8').trim();
  return common ? [...own, readHeld(path.join(path.resolve(gitDir, common), 'config'))] : own;
}

function readHeld(file: string): HeldFile {
  const dir = realOrNull(path.dirname(file));
  try {
    return { file, dir, bytes: lstatSync(file).isFile() ? readFileSync(file) : Buffer.from('(not a file)') };
  } catch {
    return { file, dir, bytes: null };
  }
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function readLinkOr(abs: string): string {
  try {
    return readlinkSync(abs);
  } catch {
    return '';
  }
}

function sameNested(a: NestedGit | undefined, b: NestedGit | null): boolean {
  if (!a || !b) return !a && !b;
  if (a.entry.kind !== b.entry.kind) return false;
  if (a.entry.kind === 'file' && b.entry.kind === 'file' && !a.entry.bytes.equals(b.entry.bytes)) return false;
  if (a.entry.kind === 'link' && b.entry.kind === 'link' && a.entry.target !== b.entry.target) return false;
  return a.files.length === b.files.length && a.files.every((f, i) => sameHeld(f, b.files[i]));
}

function sameHeld(a: HeldFile, b: HeldFile): boolean {
  return (
    a.file === b.file &&
    a.dir === b.dir &&
    (a.bytes === null ? b.bytes === null : b.bytes !== null && a.bytes.equals(b.bytes))
  );
}

/** Whether every folder from `top` down to `<rel>` is a folder, not a link. */
function linkFree(top: string, rel: string): boolean {
  let dir = top;
  for (const part of rel.split('/')) {
    dir = path.join(dir, part);
    const st = lstatOrNull(dir);
    if (!st || st.isSymbolicLink() || !st.isDirectory()) return false;
  }
  return true;
}

/** `<gitlink>/.git` and its configuration back as `before` held them (a link is not followed). */
function putBack(abs: string, before: NestedGit): void {
  const entry = before.entry;
  const st = lstatOrNull(abs);
  const same = st && (entry.kind === 'dir' ? st.isDirectory() && !st.isSymbolicLink() : false);
  if (!same) {
    // What stands there now goes; a git folder the agent removed or replaced cannot be made again (the submodule is
    // then not checked out, as before `git submodule update`).
    rmSync(abs, { recursive: true, force: true });
    if (entry.kind === 'file') writeFileSync(abs, entry.bytes, { flag: 'wx' });
    if (entry.kind === 'link') symlinkSync(entry.target, abs);
  }
  for (const held of before.files) {
    if (held.dir === null || realOrNull(path.dirname(held.file)) !== held.dir) continue;
    const now = lstatOrNull(held.file);
    if (now && (now.isSymbolicLink() || !now.isFile())) rmSync(held.file, { recursive: true, force: true });
    if (held.bytes === null) rmSync(held.file, { force: true });
    else writeFileSync(held.file, held.bytes);
  }
}
