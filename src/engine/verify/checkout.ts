// Checks run on the commit, not on the working tree (SPEC §6). A verification checkout is a fresh clone of the
// claimed commit in a temp folder: its own empty configuration and no hooks (the repository's are the agent's to
// write), no index bits such as skip-worktree, nothing ignored or excluded carried over, and the pinned files put
// back as they were at the plan commit.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import type { Pins } from '../contracts.js';
import { gitOk, gitRun } from '../verify-git.js';
import { allChecks, applyScriptPins, matchAbsent, planPinnedPaths, planScriptNames, readScripts } from './pins.js';
import { globToRegExp } from './glob.js';

export type { Pins };

/** Every file committed at `commit`. */
export async function readTreeFiles(top: string, commit: string): Promise<string[]> {
  return (await gitOk(top, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit])).split('\0').filter(Boolean);
}

/** The pins of `prd` at `commit` (whose files are `files`); reads package.json when a check runs a package script. */
export async function readPins(top: string, commit: string, prd: Prd, files: readonly string[]): Promise<Pins> {
  const paths = planPinnedPaths(files, prd);
  const names = allChecks(prd).flatMap(planScriptNames);
  let scripts: Record<string, string | null> = {};
  if (names.length && files.includes('package.json') && !paths.includes('package.json')) {
    const defined = readScripts(await gitOk(top, ['cat-file', 'blob', `${commit}:package.json`]), names);
    // A script the plan commit does not define may be the story's to add; only npm's pre/post hooks around a
    // defined script are pinned as absent, since they could rewrite the tests right before they run.
    scripts = Object.fromEntries(Object.entries(defined).filter(([name, v]) => v !== null || isHookOf(name, defined)));
  }
  return { commit, paths, scripts, absent: prd.protectDefaults !== false };
}

function isHookOf(name: string, defined: Record<string, string | null>): boolean {
  const m = /^(pre|post)(.+)$/.exec(name);
  return m !== null && typeof defined[m[2]] === 'string';
}

export interface Checkout {
  dir: string;
  commit: string;
  /** Pinned files (and `package.json scripts.<name>`) the commit changed; the checkout has the pinned versions. */
  pinnedChanges: string[];
}

/**
 * A fresh checkout of `commit` with `pins` applied, except the paths the globs `mayChange` match (the story's own).
 * Throws with git's message when the clone or checkout fails.
 */
export async function createCheckout(top: string, commit: string, pins: Pins | null, mayChange: readonly string[] = []): Promise<Checkout> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ralph-verify-'));
  try {
    // --shared borrows the objects (no copy); --template= leaves hooks and info/exclude out of the new repository.
    await gitOk(top, ['clone', '--quiet', '--shared', '--no-checkout', '--template=', top, dir]);
    await gitOk(dir, ['checkout', '--quiet', '--detach', commit, '--']);
    const pinnedChanges = pins && pins.commit !== commit ? await applyPins(dir, commit, pins, matcher(mayChange)) : [];
    return { dir, commit, pinnedChanges };
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
  if (!pins || pins.commit === checkout.commit) return [];
  const allowed = matcher(mayChange);
  const pinned = new Set(pins.paths.filter((p) => !allowed(p)));
  const changed = (await gitOk(checkout.dir, ['diff', '--name-only', '--no-renames', '--no-ext-diff', '--no-textconv', '-z', pins.commit, '--'])).split('\0').filter((p) => pinned.has(p));
  if (changed.length) await gitOk(checkout.dir, ['--literal-pathspecs', 'checkout', pins.commit, '--pathspec-from-file=-', '--pathspec-file-nul'], changed.join('\0'));
  const scripts = allowed('package.json') ? [] : pinScripts(checkout.dir, pins);
  return [...changed, ...scripts.map((s) => `package.json scripts.${s}`)];
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
  const removed = pins.absent ? matchAbsent(added) : [];
  for (const file of removed) rmSync(path.join(dir, file), { force: true });
  const scripts = mayChange('package.json') ? [] : pinScripts(dir, pins);
  return [...changed, ...removed, ...scripts.map((s) => `package.json scripts.${s}`)];
}

function pinScripts(dir: string, pins: Pins): string[] {
  if (!Object.keys(pins.scripts).length) return [];
  const file = path.join(dir, 'package.json');
  let current: string;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const { text, changed } = applyScriptPins(current, pins.scripts);
  if (text !== null) writeFileSync(file, text);
  return changed;
}

export function removeCheckout(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Whether git has `commit` (a resumed loop's pins may name one a rewrite dropped). */
export async function hasCommit(top: string, commit: string): Promise<boolean> {
  return (await gitRun(top, ['cat-file', '-e', `${commit}^{commit}`])).code === 0;
}
