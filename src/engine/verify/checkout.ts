// Checks run on the commit, not on the working tree (SPEC §6). A verification checkout is a fresh clone of the
// claimed commit in a temp folder: its own empty configuration and no hooks (the repository's are the agent's to
// write), no index bits such as skip-worktree, nothing ignored or excluded carried over, and the pinned files put
// back as they were at the plan commit.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Pins } from './types.js';
import { gitOk, pinnedGitDirs } from '../git/git.js';
import { readObjectFormat } from '../git/objects.js';
import { SealBroken } from '../errors.js';
import { readAsGitWrote, readSealedTree, refuseRewrittenFiles } from './sealed-checkout.js';
import { applyScriptPins, applySectionPin } from './package-pins.js';
import { absentInCommits, matchAbsent, isPathProgram } from './pins.js';
import {
  readCheckoutIndex,
  realParents,
  refuseLinksOut,
  refuseLinkedAbsence,
  refuseRunnerFileChange,
  removeFile,
  sealPins,
} from './pin-apply.js';
import { compiledGlob } from './glob.js';
import { ABOVE_ROOTS, NEAREST_FILES, UPWARD_FILES } from './runner-config.js';
import { readTextOrNull } from '../../util/read.js';
import { makeTempFolder } from '../store/temp-folders.js';
import { shellQuote } from '../../util/shell-quote.js';

export type { Pins };

/** Every file committed at `commit` (a list for decisions no verdict rests on: the reviewer's clone, what it lost). */
export async function readTreeFiles(top: string, commit: string): Promise<string[]> {
  return (await gitOk(top, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit])).split('\0').filter(Boolean);
}

export interface Checkout {
  dir: string;
  commit: string;
  /** The clone's own .git/config as the runner made it: put back before the runner's git runs there again. */
  gitConfig: Buffer;
  /** Pinned files (and `package.json scripts.<name>`) the commit changed; the checkout has the pinned versions. */
  pinnedChanges: string[];
  /** The claimed commit's files, as checked out (before setup could touch the index). */
  tracked: string[];
  /** Pinned files as git wrote them from the pinned blob through the plan commit's own attributes (sealPins). */
  asGitWrote: ReadonlyMap<string, Buffer>;
}

/**
 * A fresh checkout of `commit` with `pins` applied from the runner's own copy of their bytes, except the paths the
 * globs `mayChange` match (the story's own). `sealed` (every verification checkout): a committed link out of the
 * checkout, or an object that is not what its id says, throws SealBroken. Throws with git's message when the clone or
 * checkout fails.
 */
export async function createCheckout(
  top: string,
  commit: string,
  pins: Pins | null,
  mayChange: readonly string[] = [],
  sealed = false,
): Promise<Checkout> {
  const dir = makeTempFolder('ralph-verify');
  try {
    // --shared borrows the objects (no copy); --template= leaves hooks and info/exclude out of the new repository.
    // From the common folder held for `top` when there is one: the tree's .git (a file in a linked worktree) is the
    // agent's to point at a repository of its own.
    const from = pinnedGitDirs(top)?.commonDir ?? top;
    await gitOk(top, ['clone', '--quiet', '--shared', '--no-checkout', '--template=', from, dir]);
    // Sealed: the commit's files as its own objects say, each tree hashed against its id; after the checkout, every
    // file git wrote is held against them (refuseRewrittenFiles). Without --sandbox the agent can rewrite an object
    // in .git/objects under its old id, and git does not check an object against its id when it reads one.
    const sealedIndex = sealed ? await readSealedTree(top, dir, commit) : null;
    await gitOk(dir, ['checkout', '--quiet', '--detach', commit, '--']);
    if (sealedIndex) await refuseRewrittenFiles(dir, commit, sealedIndex, await readObjectFormat(top));
    refuseUpwardConfig(dir);
    const index = sealedIndex ?? (await readCheckoutIndex(dir));
    const tracked = [...index.keys()];
    if (sealed) refuseLinksOut(dir, commit, tracked, pins);
    if (sealed && pins) refuseRunnerFileChange(commit, index, pins);
    const asGitWrote = pins && sealedIndex ? readAsGitWrote(dir, sealedIndex, pins) : new Map<string, Buffer>();
    const pinnedChanges = pins ? await applyPins(dir, commit, index, pins, matcher(mayChange), asGitWrote) : [];
    const gitConfig = readFileSync(path.join(dir, '.git', 'config'));
    return { dir, commit, pinnedChanges, tracked, gitConfig, asGitWrote };
  } catch (err) {
    removeCheckout(dir);
    throw err;
  }
}

/**
 * Puts the pinned files back once more, after `setup`: an install script (`postinstall`, `prepare`) is the agent's
 * code too, and could rewrite a pinned test, or put a link out of the checkout where a committed file was, between the
 * checkout and the checks. What setup adds (node_modules) stays. Returns what had to be put back; throws SealBroken.
 */
export async function reapplyPins(
  checkout: Checkout,
  pins: Pins | null,
  mayChange: readonly string[] = [],
): Promise<string[]> {
  refuseUpwardConfig(checkout.dir);
  resetCheckoutGit(checkout);
  refuseLinksOut(
    checkout.dir,
    checkout.commit,
    [...checkout.tracked, ...(pins?.held.keys() ?? [])],
    pins,
    ' after setup',
  );
  if (!pins) return [];
  const allowed = matcher(mayChange);
  const changed = await sealPins(checkout.dir, pins, allowed, checkout.asGitWrote);
  // What setup created where the plan commit pins an absence (an untracked .npmrc, a GNUmakefile, a conftest.py).
  const pinned = new Set(pins.paths.filter((p) => !allowed(p)));
  const created = pins.absent
    ? matchAbsent(listProjectFiles(checkout.dir, checkout.tracked), pins.absentPaths).filter(
        (f) => !pinned.has(f) && !allowed(f),
      )
    : [];
  for (const file of created) rmSync(path.join(checkout.dir, file), { recursive: true, force: true });
  if (pins.absent) refuseLinkedAbsence(checkout.dir, checkout.commit, pins.absentPaths ?? [], allowed, ' after setup');
  return [...changed, ...created, ...pinManifests(checkout.dir, pins, allowed)];
}

/**
 * pytest, mocha, yarn, go and cargo read their configuration from the folders above the one they run in too, and
 * npm, pnpm, cargo, pytest and node look there for the root of a workspace or a project, or for modules: above a
 * checkout (or the setup cache's build) in the temp folder, where anyone (the agent, without --sandbox) can write.
 * One found there is refused.
 */
export function refuseUpwardConfig(dir: string, what = 'the verification checkout'): void {
  const found = findAbove(dir);
  if (found)
    throw new Error(
      `${found} lies above ${what}, where the tools a check starts look for their configuration or a workspace too, and read it; the claim is checked again once it is gone: remove it if it is not yours (rm -r ${shellQuote(found)}), or set TMPDIR to a folder with none above it and resume`,
    );
}

/**
 * The first file above `checkout` (from its parent up to the root) that a tool a check starts would read there:
 * UPWARD_FILES, ABOVE_ROOTS, and NEAREST_FILES of the groups the checkout has none of at its root.
 */
function findAbove(checkout: string): string | null {
  const names = [
    ...UPWARD_FILES,
    ...NEAREST_FILES.filter((group) => !group.some((name) => existsSync(path.join(checkout, name)))).flat(),
  ];
  for (let dir = path.dirname(path.resolve(checkout)); ; dir = path.dirname(dir)) {
    const found = names.map((name) => path.join(dir, name)).find((file) => existsSync(file));
    if (found) return found;
    for (const root of ABOVE_ROOTS) {
      const file = path.join(dir, root.name);
      // Unreadable (a folder, no permission): a tool would stumble on it, not read it as a root.
      const text = existsSync(file) ? readTextOrNull(file) : null;
      if (text !== null && root.takesIn(text)) return file;
    }
    if (path.dirname(dir) === dir) return null;
  }
}

// Folders an install fills with the dependencies' own files: what they hold is setup's output, not project configuration.
const DEPENDENCY_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv']);

/**
 * Every file under `dir` (repository paths), outside dependency folders and Python environments that setup made. A
 * folder the commit has files in is walked whatever its name or content: setup's code could put a pyvenv.cfg into
 * tests/ to hide a conftest.py there.
 */
function listProjectFiles(dir: string, tracked: readonly string[], rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const file = rel ? `${rel}/${entry.name}` : entry.name;
    if (!entry.isDirectory()) out.push(file);
    else if (entry.name === '.git') continue;
    else if (
      holdsTracked(file, tracked) ||
      !(DEPENDENCY_DIRS.has(entry.name) || existsSync(path.join(dir, file, 'pyvenv.cfg')))
    )
      out.push(...listProjectFiles(dir, tracked, file));
  }
  return out;
}

function holdsTracked(folder: string, tracked: readonly string[]): boolean {
  return tracked.some((t) => t.startsWith(`${folder}/`));
}

/**
 * Setup ran the agent's code in the checkout (under --sandbox too, where the checkout is writable): a filter or an
 * include it put into the clone's .git/config, or an attributes file, would run on the host in the runner's next git
 * command there. The runner's own configuration of the clone goes back first, and git's per-repository extras go.
 */
export function resetCheckoutGit(checkout: Checkout): void {
  const git = path.join(checkout.dir, '.git');
  // Setup's code could also have made these links to files or folders of yours: each is removed, never followed.
  if (!lstatSync(git).isDirectory())
    throw new SealBroken(`setup replaced the checkout's .git (${git}); the claim is rejected`);
  const info = path.join(git, 'info');
  if (lstatOrNull(info)?.isDirectory() === false) rmSync(info, { force: true });
  rmSync(path.join(git, 'config'), { force: true });
  writeFileSync(path.join(git, 'config'), checkout.gitConfig, { flag: 'wx' });
  for (const extra of ['config.worktree', path.join('info', 'attributes')])
    rmSync(path.join(git, extra), { force: true });
}

function lstatOrNull(abs: string) {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
}

function matcher(globs: readonly string[]): (file: string) => boolean {
  const res = globs.map(compiledGlob);
  return (file) => res.some((re) => re.test(file));
}

/**
 * The pins into a fresh checkout (its files `index`): the held bytes, then files whose absence is pinned go. Returns
 * the pinned files the commit changed (by id), removed and re-pinned.
 */
async function applyPins(
  dir: string,
  commit: string,
  index: ReadonlyMap<string, { mode: string; oid: string }>,
  pins: Pins,
  mayChange: (file: string) => boolean,
  asGitWrote: ReadonlyMap<string, Buffer>,
): Promise<string[]> {
  await sealPins(dir, pins, mayChange, asGitWrote);
  const changed = pins.paths.filter(
    (p) =>
      !mayChange(p) && (index.get(p)?.oid !== pins.tree.get(p)?.oid || index.get(p)?.mode !== pins.tree.get(p)?.mode),
  );
  const added = [...index.keys()].filter((file) => !pins.tree.has(file) && !mayChange(file));
  const pinned = new Set(pins.paths);
  // A program a commit adds to a PATH folder of the repository, or makes runnable there: a check's bare name would run it.
  const programs = [...index].filter(
    ([file, { mode }]) => !pinned.has(file) && !mayChange(file) && isPathProgram(file, mode, pins.pathFolders ?? []),
  );
  const removed = [
    ...new Set([...(pins.absent ? matchAbsent(added, absentInCommits(pins)) : []), ...programs.map(([file]) => file)]),
  ];
  for (const file of removed) removeFile(dir, file);
  if (pins.absent) refuseLinkedAbsence(dir, commit, absentInCommits(pins), mayChange);
  return [...changed, ...removed, ...pinManifests(dir, pins, mayChange)];
}

/** Pinned script definitions and runner keys back into each package.json, pinned sections into shared config files. */
function pinManifests(dir: string, pins: Pins, mayChange: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const m of pins.manifests) {
    if (mayChange(m.file)) continue;
    const current = readRegularText(dir, m.file);
    if (current === null) continue;
    const { text, changed } = applyScriptPins(current, m.scripts, m.keys);
    if (text !== null) writeFileSync(path.join(dir, m.file), text);
    out.push(...changed.map((c) => `${m.file} ${c}`));
  }
  for (const sec of pins.sections) {
    if (mayChange(sec.file)) continue;
    const current = readRegularText(dir, sec.file);
    if (current === null) continue;
    const text = applySectionPin(current, sec.header, sec.text);
    if (text === null) continue;
    writeFileSync(path.join(dir, sec.file), text);
    out.push(`${sec.file} ${sec.header}`);
  }
  return out;
}

/**
 * A regular file's text (never one read or written through a link, the file's or a folder's on the way: it could lead
 * out of the checkout), else null.
 */
function readRegularText(dir: string, file: string): string | null {
  const abs = path.join(dir, file);
  try {
    return realParents(dir, file) && lstatSync(abs).isFile() ? readTextOrNull(abs) : null;
  } catch {
    return null;
  }
}

export function removeCheckout(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
