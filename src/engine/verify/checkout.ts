// Checks run on the commit, not on the working tree (SPEC §6). A verification checkout is a fresh clone of the
// claimed commit in a temp folder: its own empty configuration and no hooks (the repository's are the agent's to
// write), no index bits such as skip-worktree, nothing ignored or excluded carried over, and the pinned files put
// back as they were at the plan commit.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import type { Pins } from '../types.js';
import { gitOk } from '../git/git.js';
import { allChecks, applyScriptPins, applySectionPin, matchAbsent, PINNED_SECTIONS, planAbsentPaths, planNamedPaths, planPinnedPaths, planScriptNames, planSetupScripts, readRunnerKeys, readScripts, readSection } from './pins.js';
import { globToRegExp } from './glob.js';
import { UPWARD_FILES } from './runner-config.js';
import { readTextOrNull } from '../../util/read.js';
import { makeTempFolder } from '../store/temp-folders.js';

export type { Pins };

/** Every file committed at `commit`. */
export async function readTreeFiles(top: string, commit: string): Promise<string[]> {
  return (await gitOk(top, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit])).split('\0').filter(Boolean);
}

/** The pins of `prd` at `commit` (whose files are `files`); reads the package.json files whose scripts checks and setup run. */
export async function readPins(top: string, commit: string, prd: Prd, files: readonly string[]): Promise<Pins> {
  const paths = planPinnedPaths(files, prd);
  const read = async (file: string) => (files.includes(file) ? gitOk(top, ['cat-file', 'blob', `${commit}:${file}`]) : null);
  const byDir = new Map<string, string[]>();
  // setup's install scripts are pinned like a check's script, their absence included: they run the agent's code too.
  const lifecycle = planSetupScripts(prd.setup);
  for (const { dir, name } of [...allChecks(prd).flatMap(planScriptNames), ...lifecycle]) byDir.set(dir, [...new Set([...(byDir.get(dir) ?? []), name])]);
  // The root manifest's runner keys are pinned even when no check runs a script (`npx jest` reads them too).
  if (files.includes('package.json') && !byDir.has('')) byDir.set('', []);
  const manifests: Pins['manifests'] = [];
  const named: string[] = [];
  for (const [dir, names] of byDir) {
    const file = dir ? `${dir}/package.json` : 'package.json';
    if (paths.includes(file) || !files.includes(file)) continue;
    const text = await read(file);
    const defined = readScripts(text, names);
    // A script the plan commit does not define may be the story's to add; only npm's pre/post hooks around a
    // defined script, and setup's install scripts, are pinned as absent, since they could rewrite the tests right before they run.
    const pinAbsent = (name: string) => isHookOf(name, defined) || lifecycle.some((l) => l.dir === dir && l.name === name);
    const scripts = Object.fromEntries(Object.entries(defined).filter(([name, v]) => v !== null || pinAbsent(name)));
    manifests.push({ file, scripts, keys: readRunnerKeys(text) });
    // The files a pinned script names are pinned like those a check names (`"test": "node test.js"` pins test.js).
    for (const value of Object.values(scripts)) if (value) named.push(...planNamedPathsIn(dir, value, files));
  }
  const sections: Pins['sections'] = [];
  for (const { file, header } of PINNED_SECTIONS) {
    if (paths.includes(file)) continue;
    sections.push({ file, header, text: readSection(await read(file), header) });
  }
  const absent = prd.protectDefaults !== false;
  return { commit, paths: [...new Set([...paths, ...named])].sort(), manifests, sections, absent, absentPaths: absent ? planAbsentPaths(files, prd) : [] };
}

/** The committed files a command run in folder `dir` names (planNamedPaths, relative to that folder). */
function planNamedPathsIn(dir: string, command: string, files: readonly string[]): string[] {
  if (!dir) return planNamedPaths(command, files);
  const inside = files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1));
  return planNamedPaths(command, inside).map((f) => `${dir}/${f}`);
}

function isHookOf(name: string, defined: Record<string, string | null>): boolean {
  const m = /^(pre|post)(.+)$/.exec(name);
  return m !== null && typeof defined[m[2]] === 'string';
}

export interface Checkout {
  dir: string;
  commit: string;
  /** The clone's own .git/config as the runner made it: put back before the runner's git runs there again. */
  gitConfig: Buffer;
  /** Pinned files (and `package.json scripts.<name>`) the commit changed; the checkout has the pinned versions. */
  pinnedChanges: string[];
}

/**
 * A fresh checkout of `commit` with `pins` applied, except the paths the globs `mayChange` match (the story's own).
 * Throws with git's message when the clone or checkout fails.
 */
export async function createCheckout(top: string, commit: string, pins: Pins | null, mayChange: readonly string[] = []): Promise<Checkout> {
  const dir = makeTempFolder('ralph-verify');
  try {
    // --shared borrows the objects (no copy); --template= leaves hooks and info/exclude out of the new repository.
    await gitOk(top, ['clone', '--quiet', '--shared', '--no-checkout', '--template=', top, dir]);
    await gitOk(dir, ['checkout', '--quiet', '--detach', commit, '--']);
    refuseUpwardConfig(dir);
    const pinnedChanges = pins && pins.commit !== commit ? await applyPins(dir, commit, pins, matcher(mayChange)) : [];
    return { dir, commit, pinnedChanges, gitConfig: readFileSync(path.join(dir, '.git', 'config')) };
  } catch (err) {
    removeCheckout(dir);
    throw err;
  }
}

/**
 * Puts the pinned files back once more, after `setup`: an install script (`postinstall`, `prepare`) is the agent's
 * code too, and could rewrite a pinned test between the checkout and the checks. What setup adds (node_modules) stays.
 * Returns what had to be put back.
 */
export async function reapplyPins(checkout: Checkout, pins: Pins | null, mayChange: readonly string[] = []): Promise<string[]> {
  refuseUpwardConfig(checkout.dir);
  if (!pins || pins.commit === checkout.commit) return [];
  resetCheckoutGit(checkout);
  const allowed = matcher(mayChange);
  const pinned = new Set(pins.paths.filter((p) => !allowed(p)));
  const changed = (await gitOk(checkout.dir, ['diff', '--name-only', '--no-renames', '--no-ext-diff', '--no-textconv', '-z', pins.commit, '--'])).split('\0').filter((p) => pinned.has(p));
  if (changed.length) await gitOk(checkout.dir, ['--literal-pathspecs', 'checkout', pins.commit, '--pathspec-from-file=-', '--pathspec-file-nul'], changed.join('\0'));
  // What setup created where the plan commit pins an absence (an untracked .npmrc, a GNUmakefile, a conftest.py).
  const created = pins.absent ? matchAbsent(listProjectFiles(checkout.dir), pins.absentPaths).filter((f) => !pinned.has(f) && !allowed(f)) : [];
  for (const file of created) rmSync(path.join(checkout.dir, file), { recursive: true, force: true });
  return [...changed, ...created, ...pinManifests(checkout.dir, pins, allowed)];
}

/**
 * pytest, mocha, go and cargo also read their configuration from the folders above the one they run in: above a
 * checkout in the temp folder, where anyone (the agent, without --sandbox) can write. One found there is refused.
 */
function refuseUpwardConfig(dir: string): void {
  for (let up = path.dirname(dir); ; up = path.dirname(up)) {
    const found = UPWARD_FILES.map((f) => path.join(up, f)).find((f) => existsSync(f));
    if (found) throw new Error(`${found} lies above the verification checkout, and a test runner would read it as its configuration; remove it (rm -r ${found}) and the claim is checked again`);
    if (path.dirname(up) === up) return;
  }
}

// Folders an install fills with the dependencies' own files: what they hold is setup's output, not project configuration.
const DEPENDENCY_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv']);

/** Every file under `dir` (repository paths), outside dependency folders and Python environments. */
function listProjectFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const file = rel ? `${rel}/${entry.name}` : entry.name;
    if (!entry.isDirectory()) out.push(file);
    else if (!DEPENDENCY_DIRS.has(entry.name) && !existsSync(path.join(dir, file, 'pyvenv.cfg'))) out.push(...listProjectFiles(dir, file));
  }
  return out;
}

/**
 * Setup ran the agent's code in the checkout (under --sandbox too, where the checkout is writable): a filter or an
 * include it put into the clone's .git/config, or an attributes file, would run on the host in the runner's next git
 * command there. The runner's own configuration of the clone goes back first, and git's per-repository extras go.
 */
export function resetCheckoutGit(checkout: Checkout): void {
  const git = path.join(checkout.dir, '.git');
  writeFileSync(path.join(git, 'config'), checkout.gitConfig);
  for (const extra of ['config.worktree', path.join('info', 'attributes')]) rmSync(path.join(git, extra), { force: true });
}

function matcher(globs: readonly string[]): (file: string) => boolean {
  const res = globs.map(globToRegExp);
  return (file) => res.some((re) => re.test(file));
}

async function applyPins(dir: string, commit: string, pins: Pins, mayChange: (file: string) => boolean): Promise<string[]> {
  const pinned = new Set(pins.paths.filter((p) => !mayChange(p)));
  const fields = (await gitOk(dir, ['diff', '--name-status', '--no-renames', '--no-ext-diff', '--no-textconv', '-z', pins.commit, commit, '--'])).split('\0');
  const changed: string[] = [];
  const added: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [status, file] = [fields[i], fields[i + 1]];
    if (pinned.has(file)) changed.push(file);
    else if (status === 'A' && !mayChange(file)) added.push(file);
  }
  if (changed.length) {
    await gitOk(dir, ['--literal-pathspecs', 'checkout', pins.commit, '--pathspec-from-file=-', '--pathspec-file-nul'], changed.join('\0'));
  }
  const removed = pins.absent ? matchAbsent(added, pins.absentPaths) : [];
  for (const file of removed) rmSync(path.join(dir, file), { force: true });
  return [...changed, ...removed, ...pinManifests(dir, pins, mayChange)];
}

/** Pinned script definitions and runner keys back into each package.json, pinned sections into shared config files. */
function pinManifests(dir: string, pins: Pins, mayChange: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const m of pins.manifests) {
    if (mayChange(m.file)) continue;
    const current = readTextOrNull(path.join(dir, m.file));
    if (current === null) continue;
    const { text, changed } = applyScriptPins(current, m.scripts, m.keys);
    if (text !== null) writeFileSync(path.join(dir, m.file), text);
    out.push(...changed.map((c) => `${m.file} ${c}`));
  }
  for (const sec of pins.sections) {
    if (mayChange(sec.file)) continue;
    const current = readTextOrNull(path.join(dir, sec.file));
    if (current === null) continue;
    const text = applySectionPin(current, sec.header, sec.text);
    if (text === null) continue;
    writeFileSync(path.join(dir, sec.file), text);
    out.push(`${sec.file} ${sec.header}`);
  }
  return out;
}

export function removeCheckout(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
