// What the runner trusts and the agent could write (SPEC §6): the engine itself (ralph/ralph.mjs, ralph.sh, the
// manifest) and git's own behaviour (.git/config with its includes, the hooks, info/attributes and info/exclude, the
// alternate object stores, info/grafts and the commondir file that names git's common dir).
// They are read into memory once the loop holds its branch; after every agent run anything the agent changed
// there is put back byte for byte, and the iteration's claims are rejected (verify.ts `violation`). Which files git's
// configuration names and which of its keys matter is guard-config.ts; the folders on the way to them, held-way.ts.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { readGitDirs, removeLinkedAdminFolders } from '../git/git.js';
import type { RepoLocation } from '../types.js';
import { readBytesOrNull } from '../../util/read.js';
import { recordsRoot } from '../store/layout.js';
import { holdRerere, type RerereHold, restoreRerere } from './rerere-hold.js';
import { isInertKey, isKeptKey, planConfigChange, readGuardConfig } from './guard-config.js';
import { listLinksUnder, recordWay, removeLinksUnder, restoreWay, rootOf, type WayStep } from './held-way.js';

/** The runner-owned files in ralph/ that an agent must never change: the engine, its launcher and the manifest. */
export const ENGINE_FILES: readonly string[] = ['ralph/ralph.mjs', 'ralph/ralph.sh', 'ralph/.ralphkit.json'];

interface Held {
  abs: string;
  /** For messages: repository-relative, or `.git/...`. */
  shown: string;
  /** True for files inside the working tree (the runner commits their restoration). */
  inRepo: boolean;
  /**
   * engine: any change rejects the iteration's claims · config: a git configuration file, judged by the keys that
   * changed · inert: put back with a warning, but nothing it changes decides a verdict (hooks never run in the
   * runner's git calls; the merge attributes of info/attributes shape a --parallel merge, whose result is checked).
   */
  kind: 'engine' | 'config' | 'inert';
  /** null: the file did not exist (an agent that creates it is undone by removing it). */
  bytes: Buffer | null;
  mode: number;
  /** The folders between the root it lies under and the file, as they were (recordWay). */
  way?: WayStep[];
}

interface HeldDir {
  abs: string;
  shown: string;
  /** The regular files directly in it (hooks are files); null: the folder did not exist. */
  entries: Map<string, { bytes: Buffer; mode: number }> | null;
  /** The folders from the root it lies under down to it, as they were (recordWay). */
  way?: WayStep[];
}

export interface RunnerGuard {
  files: Held[];
  dirs: HeldDir[];
  /** The links among git's reflogs when the loop started, and their targets: the only ones left there. */
  logLinks?: ReadonlyMap<string, string>;
  /** git's common dir, real path. */
  gitDir: string;
  /** This work tree's own git dir (HEAD, index), real path. */
  ownGitDir?: string;
  /** git's recorded conflict resolutions as the loop found them (verify/rerere-hold.ts). */
  rerere?: RerereHold;
}

export interface GuardRestore {
  /** Everything the agent changed and the runner put back, as shown to the user. */
  changed: string[];
  /** The changes among them that reject the iteration's claims (the engine, git configuration that runs code). */
  rejecting: string[];
  /** Settings git itself writes for honest work (`git push -u` records the upstream): kept, not put back. */
  kept: string[];
  /** The working-tree paths among the restored (relative to the repository), for the runner's commit. */
  inRepo: string[];
}

/**
 * Reads every trusted file into memory. Call it once the loop is on its branch, before the first agent runs. `dirs`:
 * git's folders for `repoRoot` when the caller has them (git/git.ts resolveRepo), else git is asked.
 */
export async function snapshotRunnerFiles(
  repoRoot: string,
  dirs?: Pick<RepoLocation, 'gitDir' | 'commonDir'>,
  readConfig = true,
): Promise<RunnerGuard> {
  const { commonDir: common, gitDir: own } = dirs ?? (await readGitDirs(repoRoot));
  const show = (abs: string) => path.relative(repoRoot, abs).split(path.sep).join('/') || abs;
  // false: the files the configuration includes and its hooks folders are held by the caller's own snapshot (a
  // --parallel worker's guard takes them from the run's), so git is not asked for them again.
  const config = readConfig
    ? await readGuardConfig(repoRoot, common)
    : { includes: [], hooksPaths: [], outside: [] as string[], attributes: null };
  const configFiles = [
    path.join(common, 'config'),
    path.join(own, 'config.worktree'),
    ...config.includes,
    ...config.outside,
  ];
  const home = process.env.HOME;
  const xdgGit = home ? path.join(process.env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git') : null;
  const globalFiles = home && xdgGit ? [path.join(home, '.gitconfig'), path.join(xdgGit, 'config')] : [];
  // A --worktree loop runs the engine of the user's tree (store/layout.ts maps its records there): held as well.
  const main = recordsRoot(repoRoot);
  const files = [
    ...ENGINE_FILES.map((rel) => hold(path.join(repoRoot, rel), rel, true, 'engine')),
    ...(main === repoRoot
      ? []
      : ENGINE_FILES.map((rel) => hold(path.join(main, rel), path.join(main, rel), false, 'engine'))),
    ...[...new Set([...configFiles, ...globalFiles])].map((abs) =>
      hold(abs, abs.startsWith(repoRoot + path.sep) ? show(abs) : abs.replace(home ?? '\0', '~'), false, 'config'),
    ),
    ...[path.join(common, 'info', 'attributes'), path.join(common, 'info', 'exclude')].map((abs) =>
      hold(abs, show(abs), false, 'inert'),
    ),
    // The global attributes file applies to every checkout the runner makes (eol, ident, working-tree-encoding, a
    // filter): the one core.attributesFile names, else the XDG one.
    ...[...new Set([config.attributes ?? (xdgGit ? path.join(xdgGit, 'attributes') : null)])]
      .filter((abs): abs is string => abs !== null)
      .map((abs) => hold(abs, abs.replace(home ?? '\0', '~'), false, 'inert')),
    // Where git finds objects besides .git/objects, and parents it makes up: an agent's store or history of its own.
    ...[
      path.join(common, 'objects', 'info', 'alternates'),
      path.join(common, 'info', 'grafts'),
      // Commits git is told have no parents (a shallow clone's boundary): history cut short, like grafts.
      path.join(common, 'shallow'),
    ].map((abs) => hold(abs, show(abs), false, 'engine')),
    // Where git finds the common dir (config, hooks, objects, refs): a commondir the agent writes into the main .git
    // makes every later git call of the runner (and the user's own, in the main tree) read another folder's config,
    // filters and hooks. A linked worktree's own has one already, held as it is; the main .git's is held too.
    ...[...new Set([path.join(own, 'commondir'), path.join(common, 'commondir')])].map((abs) =>
      hold(abs, show(abs), false, 'engine'),
    ),
    // A linked worktree's .git is a file naming its git folder, in the agent's tree: pointed at a repository of the
    // agent's own, it is what your git in the tree reads (the runner's is told its folders: git.ts pinGitDirs).
    ...(isFile(path.join(repoRoot, '.git')) ? [hold(path.join(repoRoot, '.git'), '.git', false, 'engine')] : []),
  ];
  const hookDirs = [path.join(common, 'hooks'), ...config.hooksPaths];
  const heldDirs = [...new Set(hookDirs)].map((abs) => holdDir(abs, show(abs)));
  // The folders on the way from each root down to what is held: the agent can put a link where one was (.git/info
  // is its to write under --sandbox too), and putting a file back through it writes, or removes, outside.
  const roots = [repoRoot, main, common, own, home].filter((r): r is string => !!r);
  for (const f of files) f.way = recordWay(rootOf(f.abs, roots), path.dirname(f.abs));
  for (const d of heldDirs) d.way = recordWay(rootOf(d.abs, roots), d.abs);
  const gitDir = realpathSync(common);
  const ownGitDir = realpathSync(own);
  // Links among the reflogs at start are yours (contrib's git-new-workdir makes logs/refs one): kept as they are.
  const logLinks = new Map([
    ...listLinksUnder(path.join(gitDir, 'logs')),
    ...listLinksUnder(path.join(ownGitDir, 'logs')),
  ]);
  return { files, dirs: heldDirs, gitDir, ownGitDir, logLinks, rerere: holdRerere(path.join(gitDir, 'rr-cache')) };
}

/** The engine files of the tree the guard holds (ENGINE_FILES, by their path in it): their bytes at loop start. */
export function heldEngineBytes(guard: RunnerGuard): Map<string, Buffer | null> {
  return new Map(guard.files.filter((f) => f.kind === 'engine' && f.inRepo).map((f) => [f.shown, f.bytes]));
}

/**
 * Puts back whatever differs from the snapshot (git's own upstream records aside); returns what was changed.
 * `rejects` says which changed configuration keys reject the claims: after an agent run, every key but the inert
 * ones; after the checks (`runsCode`), only keys that make git run a command or change what the runner's git does,
 * since a test suite may well set `user.name` for itself.
 */
export function restoreRunnerFiles(
  guard: RunnerGuard,
  rejects: (key: string) => boolean = (k) => !isInertKey(k),
): GuardRestore {
  const out: GuardRestore = { changed: [], rejecting: [], kept: [], inRepo: [] };
  // First the folders on the way: nothing below is read or written through a link the agent put there.
  for (const fixed of new Set([...guard.files, ...guard.dirs].flatMap((h) => restoreWay(h.way ?? [])))) {
    const shown = `${fixed.replace(process.env.HOME ?? '\0', '~')} (a folder on the way to a file the runner holds)`;
    out.changed.push(shown);
    out.rejecting.push(shown);
  }
  // git appends to the reflogs of the refs it moves (the runner's commits too), through a link as well: git makes
  // none there, so one in logs/ is the agent's (a file of yours it points at would get the runner's lines).
  for (const link of [...new Set([guard.gitDir, guard.ownGitDir ?? guard.gitDir])].flatMap((d) =>
    removeLinksUnder(path.join(d, 'logs'), guard.logLinks ?? new Map()),
  )) {
    const shown = `${link} (a link among git's logs)`;
    out.changed.push(shown);
    out.rejecting.push(shown);
  }
  // An entry of worktrees/ that is a link: `git worktree prune` would delete what it leads to (git/git.ts).
  for (const link of removeLinkedAdminFolders(guard.gitDir)) {
    const shown = `${link} (a link among git's worktree folders)`;
    out.changed.push(shown);
    out.rejecting.push(shown);
  }
  for (const f of guard.files) {
    const now = readBytesOrNull(f.abs);
    const same = now === null ? f.bytes === null : f.bytes !== null && now.equals(f.bytes) && modeOf(f.abs) === f.mode;
    if (same) continue;
    const keys = f.kind === 'config' ? planConfigChange(f.bytes, now) : null;
    if (keys && keys.every(isKeptKey)) {
      // Nothing that runs code: the new file becomes the one held.
      f.bytes = now;
      f.mode = now === null ? 0 : modeOf(f.abs);
      out.kept.push(...keys.map((k) => `${f.shown} ${k}`));
      continue;
    }
    putBack(f.abs, f.bytes, f.mode);
    out.changed.push(f.shown);
    const dangerous = f.kind === 'engine' || (keys ?? ['?']).some((k) => rejects(k) && !isKeptKey(k));
    if (dangerous) out.rejecting.push(keys ? `${f.shown} (${keys.filter((k) => !isKeptKey(k)).join(', ')})` : f.shown);
    if (f.inRepo) out.inRepo.push(f.shown);
  }
  for (const d of guard.dirs) out.changed.push(...restoreDir(d));
  if (guard.rerere)
    for (const gone of restoreRerere(guard.rerere))
      out.changed.push(`${gone} (a conflict resolution git would write into your files in a merge of yours)`);
  return out;
}

function hold(abs: string, shown: string, inRepo: boolean, kind: Held['kind']): Held {
  const bytes = readBytesOrNull(abs);
  return { abs, shown, inRepo, kind, bytes, mode: bytes === null ? 0 : modeOf(abs) };
}

function holdDir(abs: string, shown: string): HeldDir {
  return { abs, shown, entries: readDirFiles(abs) };
}

function restoreDir(d: HeldDir): string[] {
  const now = readDirFiles(d.abs);
  const changed: string[] = [];
  const was = d.entries ?? new Map();
  for (const [name] of now ?? new Map()) {
    if (was.has(name)) continue;
    rmSync(path.join(d.abs, name), { force: true });
    changed.push(`${d.shown}/${name}`);
  }
  for (const [name, held] of was) {
    const cur = now?.get(name);
    if (cur && cur.bytes.equals(held.bytes) && cur.mode === held.mode) continue;
    putBack(path.join(d.abs, name), held.bytes, held.mode);
    changed.push(`${d.shown}/${name}`);
  }
  return changed;
}

function readDirFiles(dir: string): Map<string, { bytes: Buffer; mode: number }> | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const out = new Map<string, { bytes: Buffer; mode: number }>();
  for (const name of names) {
    const abs = path.join(dir, name);
    try {
      // A symlinked hook runs as surely as a file: hold what it points at under its own name.
      if (!statSync(abs).isFile()) continue;
      out.set(name, { bytes: readFileSync(abs), mode: lstatSync(abs).isSymbolicLink() ? -1 : modeOf(abs) });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

function putBack(abs: string, bytes: Buffer | null, mode: number): void {
  // A folder made where the held file was (a whole repository in place of a worktree's .git) goes too.
  rmSync(abs, { force: true, recursive: true });
  if (bytes === null) return;
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, bytes);
  if (mode > 0) chmodSync(abs, mode);
}

function isFile(abs: string): boolean {
  try {
    return lstatSync(abs).isFile();
  } catch {
    return false;
  }
}

function modeOf(abs: string): number {
  try {
    return lstatSync(abs).isSymbolicLink() ? -1 : statSync(abs).mode & 0o7777;
  } catch {
    return 0;
  }
}
