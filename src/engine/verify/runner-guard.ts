// What the runner trusts and the agent could write (SPEC §6): the engine itself (ralph/ralph.mjs, ralph.sh, the
// manifest) and git's own behaviour (.git/config with its includes, the hooks, info/attributes and info/exclude, the
// alternate object stores, info/grafts and the commondir file that names git's common dir).
// They are read into memory once the loop holds its branch; after every agent run anything the agent changed
// there is put back byte for byte, and the iteration's claims are rejected (verify.ts `violation`).
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { readGitDirs, removeLinkedAdminFolders, runGit } from '../git/git.js';
import { readConfigList } from '../git/read.js';
import type { RepoLocation } from '../types.js';
import { hashContent } from '../../util/hash.js';
import { parseManifestCore } from '../../util/manifest-files.js';
import { readBytesOrNull } from '../../util/read.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { recordsRoot } from '../store/layout.js';
import { holdRerere, type RerereHold, restoreRerere } from './rerere-hold.js';
import { ralphkitCommand } from '../../util/invocation.js';

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

/**
 * A folder on the way to a held file, as it was when the loop started: a folder, a link (to `target`: a dotfiles
 * manager's ~/.config, say, stays one), or not there (nor anything below it).
 */
type WayStep = { abs: string; kind: 'dir' | 'missing' | 'other' } | { abs: string; kind: 'link'; target: string };

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

/** The deepest of `roots` that holds `abs` (below it), else the folder `abs` is in: nothing above that is looked at. */
function rootOf(abs: string, roots: readonly string[]): string {
  const under = roots.filter((r) => {
    const rel = path.relative(r, abs);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel);
  });
  return under.sort((a, b) => b.length - a.length)[0] ?? path.dirname(abs);
}

/** Each folder from below `root` down to `dir`, as it is now; the steps end at the first that is not there. */
function recordWay(root: string, dir: string): WayStep[] {
  const rel = path.relative(root, dir);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return [];
  const way: WayStep[] = [];
  let at = root;
  for (const part of rel.split(path.sep)) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (!st) {
      way.push({ abs: at, kind: 'missing' });
      break;
    }
    way.push(
      st.isSymbolicLink()
        ? { abs: at, kind: 'link', target: readlinkSync(at) }
        : { abs: at, kind: st.isDirectory() ? 'dir' : 'other' },
    );
  }
  return way;
}

/**
 * The way back as recorded, never followed: a link (or a file) where a folder was is removed and the folder made
 * again, empty (what was held in it is then put back file by file); a link moved is pointed back; a link where nothing
 * was is removed. Returns the steps put back.
 */
function restoreWay(way: readonly WayStep[]): string[] {
  const fixed: string[] = [];
  for (const step of way) {
    const st = lstatOrNull(step.abs);
    if (step.kind === 'dir') {
      if (!st || st.isDirectory()) {
        if (!st) break; // gone: putBack makes it (and what is below) again
        continue;
      }
      rmSync(step.abs, { force: true });
      mkdirSync(step.abs);
      fixed.push(step.abs);
    } else if (step.kind === 'link') {
      if (st?.isSymbolicLink() && readlinkSync(step.abs) === step.target) continue;
      fixed.push(step.abs);
      // A real folder made in the link's place is left as it is (it may hold files now): nothing below it leads out.
      if (st?.isDirectory()) continue;
      if (st) rmSync(step.abs, { force: true });
      symlinkSync(step.target, step.abs);
    } else {
      if (step.kind === 'missing' && st?.isSymbolicLink()) {
        rmSync(step.abs, { force: true });
        fixed.push(step.abs);
      }
      break;
    }
  }
  return fixed;
}

/** Every symbolic link under `dir` (never followed), with its target. */
function listLinksUnder(dir: string, out = new Map<string, string>()): Map<string, string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) out.set(abs, readlinkSync(abs));
    else if (entry.isDirectory()) listLinksUnder(abs, out);
  }
  return out;
}

/** Every symbolic link under `dir` that `kept` does not hold with the same target, removed; returns them. */
function removeLinksUnder(dir: string, kept: ReadonlyMap<string, string>): string[] {
  const removed = [...listLinksUnder(dir)].filter(([abs, target]) => kept.get(abs) !== target).map(([abs]) => abs);
  for (const abs of removed) rmSync(abs, { force: true });
  return removed;
}

function lstatOrNull(abs: string) {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
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

/** The keys (section.subsection.key, as git names them) whose values differ between two config files. */
export function planConfigChange(before: Buffer | null, after: Buffer | null): string[] {
  const a = readConfigEntries(before?.toString('utf8') ?? '');
  const b = readConfigEntries(after?.toString('utf8') ?? '');
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => (a.get(k) ?? []).join('\0') !== (b.get(k) ?? []).join('\0')).sort();
}

/** A small reader of git's config format: every value per key, in order (enough to tell which keys changed). */
export function readConfigEntries(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = '';
  for (const raw of text.replace(/\\\r?\n/g, '').split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, '');
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[\s*([^\]\s"]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (head) {
      const [name, sub] = [head[1].toLowerCase(), head[2]];
      // [section.sub] is the old spelling of [section "sub"], lowercased.
      section = sub !== undefined ? `${name}.${sub}` : name;
      const rest = head[3].trim();
      if (!rest || rest.startsWith('#') || rest.startsWith(';')) continue;
      addEntry(out, section, rest);
      continue;
    }
    addEntry(out, section, line);
  }
  return out;
}

function addEntry(out: Map<string, string[]>, section: string, line: string): void {
  const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line.trim());
  if (!m) return;
  const key = `${section}.${m[1].toLowerCase()}`;
  out.set(key, [...(out.get(key) ?? []), (m[2] ?? 'true').trim()]);
}

// Written by git for ordinary work (`git push -u`, `git branch --set-upstream-to`): kept as the agent left them.
function isKeptKey(key: string): boolean {
  return /^branch\.[^]*\.(remote|merge|pushremote|rebase|description)$/.test(key);
}

// Read by nothing the runner does: its git calls have hooks off, and checks run in clones with a config of their own.
// Put back (they would run in the user's own commits later), without rejecting the work.
function isInertKey(key: string): boolean {
  return key === 'core.hookspath' || /^(advice|color|gui|i18n|column)\./.test(key);
}

/**
 * Settings that make git run a program or change what the runner's own git calls do (a filter, a diff or merge
 * driver, an include, core.*, a URL rewrite, a remote, credentials, signing), and anything git cannot parse.
 */
export function runsCode(key: string): boolean {
  if (key === '?') return true;
  if (key === 'core.hookspath') return false;
  return /^(core|filter|diff|merge|include|includeif|gpg|credential|url|protocol|remote|http|submodule|uploadpack|receive|transfer|fetch|push)\./.test(
    key,
  );
}

/**
 * The start-of-run check: ralph/ralph.mjs and ralph.sh must be the files the manifest says ralphkit installed.
 * A modified engine is the agent's code running as the verifier (exit 2 unless the user says otherwise).
 */
export function refuseModifiedEngine(
  repoRoot: string,
  allow: boolean,
  warn: (message: string) => void,
  packaged?: string,
): void {
  const problems = readEngineProblems(repoRoot, packaged);
  if (!problems.length) return;
  const what = problems.join('; ');
  if (allow) {
    warn(`running a modified engine because of --allow-modified-engine: ${what}`);
    return;
  }
  throw new LoopExit(
    LOOP_EXIT.refused,
    `the loop's own files are not what ralphkit installed: ${what}; a modified engine could pass anything`,
    `put them back with: ${ralphkitCommand('install --force')} (your version goes to ralph/.backup/), commit, and start again; or run anyway with --allow-modified-engine`,
  );
}

/**
 * Each engine file that differs from the manifest's record, in words. `packaged` (the engine `ralphkit run` ships)
 * is a record the agent cannot rewrite: the repository's engine must equal it byte for byte (line endings aside).
 */
export function readEngineProblems(repoRoot: string, packaged?: string): string[] {
  const engine = path.join(repoRoot, 'ralph', 'ralph.mjs');
  // A repository without an installed engine runs the packaged one (npx ralphkit run): nothing to compare.
  const installed = readBytesOrNull(engine);
  if (installed === null) return [];
  const shipped = packaged ? readBytesOrNull(packaged) : null;
  if (shipped && hashContent(shipped) !== hashContent(installed))
    return ['ralph/ralph.mjs differs from the engine this ralphkit ships (an install by another version, or an edit)'];
  const manifestText = readBytesOrNull(path.join(repoRoot, 'ralph', '.ralphkit.json'));
  const manifest = manifestText ? parseManifestCore(manifestText.toString('utf8')) : undefined;
  if (!manifest) return ['ralph/.ralphkit.json is missing or is not a ralphkit manifest'];
  const problems: string[] = [];
  for (const rel of ['ralph/ralph.mjs', 'ralph/ralph.sh']) {
    const bytes = readBytesOrNull(path.join(repoRoot, rel));
    const entry = manifest.files[rel];
    if (!entry) problems.push(`${rel} is not in the manifest`);
    else if (bytes === null) problems.push(`${rel} is missing`);
    else if (hashContent(bytes) !== entry.sha256) problems.push(`${rel} was modified`);
  }
  return problems;
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

/** The configuration the guard holds files for: the local includes and the user's core.hooksPath (local, global). */
interface GuardConfig {
  includes: string[];
  hooksPaths: string[];
  /**
   * Configuration from outside the repository that the runner's git reads, beyond ~/.gitconfig and the XDG file: the
   * system file, and the files the global and system files include (read or not there yet). Each can set a filter
   * the runner's checkout would run.
   */
  outside: string[];
  /** The file core.attributesFile names, in the global or system configuration (held like .git/info/attributes). */
  attributes: string | null;
}

/** GuardConfig from one `git config --list`; when git cannot list it so (before git 2.26, no --show-scope), each is asked on its own. */
async function readGuardConfig(repoRoot: string, common: string): Promise<GuardConfig> {
  const list = await readConfigList(repoRoot);
  if (!list)
    return {
      includes: await readIncludedConfigs(repoRoot, common),
      hooksPaths: await readHooksPath(repoRoot),
      outside: [systemConfig()],
      attributes: null,
    };
  const isInclude = (e: (typeof list)[number]) => /^include(if\..*)?\.path$/.test(e.key) && e.value !== null;
  const includes = list.filter((e) => e.scope === 'local' && isInclude(e)).map((e) => resolveInclude(common, e.value!));
  const beyond = list.filter((e) => e.scope === 'system' || e.scope === 'global');
  const attributes = beyond.filter((e) => e.key === 'core.attributesfile' && e.value).pop()?.value;
  const outside = [
    // The system file, or where git looks for one when there is none yet.
    ...(beyond.some((e) => e.scope === 'system') ? [] : [systemConfig()]),
    ...beyond.flatMap((e) => (e.file ? [path.resolve(repoRoot, e.file)] : [])),
    ...beyond
      .filter(isInclude)
      .map((e) => resolveInclude(e.file ? path.dirname(path.resolve(repoRoot, e.file)) : common, e.value!)),
  ];
  // As `git config --<scope> --get`: the last value of the key in that scope.
  const hooksPath = (scope: string) =>
    list
      .filter((e) => e.scope === scope && e.key === 'core.hookspath')
      .map((e) => e.value ?? '')
      .pop() ?? '';
  return {
    includes,
    outside: [...new Set(outside)],
    attributes: attributes ? resolveInclude(repoRoot, attributes) : null,
    hooksPaths: ['local', 'global']
      .map(hooksPath)
      .map((v) => v.trim())
      .filter(Boolean)
      .map((v) => resolveHooksPath(repoRoot, v)),
  };
}

/** Files the repository's configuration includes (include.path, includeIf.*.path), resolved as git does. */
async function readIncludedConfigs(repoRoot: string, common: string): Promise<string[]> {
  const r = await runGit(repoRoot, ['config', '--local', '--get-regexp', '-z', '^include(if\\..*)?\\.path$']);
  if (r.code !== 0) return [];
  return r.stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => resolveInclude(common, entry.slice(entry.indexOf('\n') + 1)));
}

// Where git looks for its system configuration when GIT_CONFIG_SYSTEM does not say (a build's $(sysconfdir); /etc
// for the distributions' packages). One found in another place is held where git read it.
const systemConfig = () => process.env.GIT_CONFIG_SYSTEM || '/etc/gitconfig';

function resolveInclude(common: string, value: string): string {
  const expanded = value.startsWith('~/') ? path.join(process.env.HOME ?? '', value.slice(2)) : value;
  return path.resolve(common, expanded);
}

/**
 * A core.hooksPath the user set before the loop (their hooks for their own commits): held too. Read per file scope,
 * since the runner's own `-c core.hooksPath` override would answer a plain `git config --get`.
 */
async function readHooksPath(repoRoot: string): Promise<string[]> {
  const out: string[] = [];
  for (const scope of ['--local', '--global']) {
    const r = await runGit(repoRoot, ['config', scope, '--get', 'core.hooksPath']);
    const value = r.code === 0 ? r.stdout.trim() : '';
    if (value) out.push(resolveHooksPath(repoRoot, value));
  }
  return out;
}

function resolveHooksPath(repoRoot: string, value: string): string {
  return path.resolve(repoRoot, value.startsWith('~/') ? path.join(process.env.HOME ?? '', value.slice(2)) : value);
}
