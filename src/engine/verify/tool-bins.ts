// The programs in the tree's node_modules/.bin are ignored files the agent can write (under --sandbox too), and your
// tools run them outside any sandbox: npm's scripts put that folder first on PATH, and `npx <name>` runs
// node_modules/.bin/<name> before anything else, even for a package the project does not depend on (npm 11.19.1).
// Pass 29 left a node_modules/.bin/ralphkit: your next `npx ralphkit validate`, as the README has it, ran the agent's
// script and printed a pass. Pass 30 edited an installed ralphkit in place, and made a package of another folder
// name say `"name": "ralphkit"`, which npx found by its name. So at the loop's end the programs there (a link by its
// target and the bytes it leads to) and every package named ralphkit (its package.json and what its bin and dist
// hold) are compared with the loop's start: ralphkit's made or changed since are set aside into the loop's records,
// and every other program made or changed is named (an honest agent's `npm install` makes them too), with what to
// type. The package managers' project files that start programs (CONFIGS), when no commit tracks them, are set aside
// the same way. What cannot be set aside ends the loop with no exit 0.
import { createHash } from 'node:crypto';
import { mkdirSync, readlinkSync, renameSync } from 'node:fs';
import path from 'node:path';
import { linkOnTheWay, listOrEmpty, lstatOrNull, readBytesOrNull, readTextOrNull } from '../../util/read.js';

/** Each program in node_modules/.bin, package named ralphkit and config file, by path, as what it is. */
export type ToolBins = ReadonlyMap<string, string>;

const MODULES = 'node_modules';
const BIN = path.join(MODULES, '.bin');
/** What `npx ralphkit` runs from the tree: set aside when made or changed during the loop. */
const OWN_BIN = path.join(BIN, 'ralphkit');
/**
 * Files your tools read from the project folder that start programs: npm's `node-options` and `script-shell`, yarn's
 * `yarnPath`, pnpm's hooks file, Claude Code's local hooks. One no commit tracks (ignored, so no diff shows it) made
 * or changed during the loop is set aside too; one the loop's commits change is in the diff you review.
 */
const CONFIGS = ['.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs', path.join('.claude', 'settings.local.json')];

/** The programs in `top`'s node_modules/.bin, the packages there named ralphkit, and CONFIGS, as they are now. */
export function readToolBins(top: string): ToolBins {
  const out = new Map<string, string>();
  const dir = path.join(top, BIN);
  for (const name of listOrEmpty(dir)) out.set(path.join(BIN, name), describe(path.join(dir, name)));
  for (const pkg of ralphkitPackages(top)) out.set(pkg, describePackage(path.join(top, pkg)));
  for (const name of CONFIGS) {
    const file = path.join(top, name);
    if (lstatOrNull(file)) out.set(name, describe(file));
  }
  return out;
}

/**
 * node_modules/ralphkit, and node_modules/<name> or node_modules/@<scope>/<name> whose package.json says `"name":
 * "ralphkit"` (npm takes a package by that name, the folder's when there is none).
 */
function ralphkitPackages(top: string): string[] {
  const root = path.join(top, MODULES);
  const folders = listOrEmpty(root).flatMap((name) =>
    name.startsWith('@') ? listOrEmpty(path.join(root, name)).map((n) => path.join(name, n)) : [name],
  );
  return folders
    .filter(
      (f) =>
        f === 'ralphkit' || /"name"\s*:\s*"ralphkit"/.test(readTextOrNull(path.join(root, f, 'package.json')) ?? ''),
    )
    .map((f) => path.join(MODULES, f));
}

/** A link by its target and the bytes it leads to; a file by its bytes; anything else by its kind. */
function describe(file: string): string {
  const st = lstatOrNull(file);
  if (!st) return 'none';
  const bytes = st.isSymbolicLink() || st.isFile() ? readBytesOrNull(file) : null;
  const hash = bytes ? createHash('sha256').update(bytes).digest('hex') : '-';
  if (st.isSymbolicLink()) {
    try {
      return `link ${readlinkSync(file)} ${hash}`;
    } catch {
      return 'link';
    }
  }
  return st.isFile() ? `file ${hash}` : 'other';
}

/** A package: its package.json, and every file under its bin/ and dist/ (what `npx ralphkit` would run). */
function describePackage(dir: string): string {
  const files = ['package.json'];
  const walk = (rel: string, depth: number) => {
    for (const name of listOrEmpty(path.join(dir, rel))) {
      const sub = path.join(rel, name);
      if (lstatOrNull(path.join(dir, sub))?.isDirectory() && depth < 8) walk(sub, depth + 1);
      else files.push(sub);
    }
  };
  walk('bin', 0);
  walk('dist', 0);
  return files.map((f) => `${f} ${describe(path.join(dir, f))}`).join('\n');
}

/**
 * At the loop's end: what changed since `held` (the start). ralphkit's own (the .bin name, a package named ralphkit)
 * and the CONFIGS no commit tracks go into `keepDir/set-aside/` (not through a link on the way); the other programs
 * are named. Returns what to say, and whether something that had to go could not.
 */
export function settleToolBins(
  top: string,
  held: ToolBins,
  keepDir: string,
  tracked: (rel: string) => boolean,
): { said: string[]; failed: boolean } {
  const now = readToolBins(top);
  const changed = [...now].filter(([name, what]) => held.get(name) !== what).map(([name]) => name);
  const said: string[] = [];
  let failed = false;
  const own = changed.filter((name) => isOwn(name) || (CONFIGS.includes(name) && !tracked(name)));
  for (const name of own) {
    const from = path.join(top, name);
    const link = linkOnTheWay(top, from);
    try {
      if (link) throw new Error(`${path.relative(top, link)} is a link`);
      const to = path.join(keepDir, 'set-aside', name);
      mkdirSync(path.dirname(to), { recursive: true });
      renameSync(from, `${to}-${Date.now()}`);
      said.push(
        `${name} was made or changed during the loop: ${runs(name)}; moved into ${path.relative(top, path.dirname(to))}`,
      );
    } catch (err) {
      failed = true;
      said.push(
        `${name} was made or changed during the loop: ${runs(name)}; it could not be moved aside (${(err as Error).message}): remove it (rm -rf ${name}) before you run npm, npx, yarn or claude here`,
      );
    }
  }
  const rest = changed.filter((name) => name.startsWith(BIN) && !own.includes(name)).map((name) => path.basename(name));
  if (rest.length)
    said.push(
      `programs in node_modules/.bin were made or changed during the loop (${rest.slice(0, 8).join(', ')}${rest.length > 8 ? `, and ${rest.length - 8} more` : ''}): npm, npx and your package.json scripts run them outside any sandbox; unless the work installed packages, run rm -rf node_modules && npm ci before any npm command here (--worktree keeps the agent's files out of your tree)`,
    );
  return { said, failed };
}

/** ralphkit's own: its name in node_modules/.bin, or a package named ralphkit. */
function isOwn(name: string): boolean {
  return name === OWN_BIN || (name.startsWith(MODULES) && !name.startsWith(BIN));
}

function runs(name: string): string {
  return isOwn(name)
    ? '`npx ralphkit` in this tree would run it'
    : `no commit tracks it, and your ${name.includes('claude') ? 'next Claude Code session here' : 'npm, npx, yarn or pnpm here'} would read it`;
}
