// The programs in the tree's node_modules/.bin are ignored files the agent can write (under --sandbox too), and your
// tools run them outside any sandbox: npm's scripts put that folder first on PATH, and `npx <name>` runs
// node_modules/.bin/<name> before anything else, even for a package the project does not depend on (npm 11.19.1).
// Pass 29 left a node_modules/.bin/ralphkit: your next `npx ralphkit validate`, as the README has it, ran the agent's
// script and printed a pass. So at the loop's end the programs there are compared with the loop's start: ralphkit's
// own name, and node_modules/ralphkit, made or changed since are set aside into the loop's records; every other
// program made or changed is named (an honest agent's `npm install` makes them too), with what to type. The package
// managers' project files that start programs (CONFIGS), when no commit tracks them, are set aside the same way.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readlinkSync, renameSync } from 'node:fs';
import path from 'node:path';
import { linkOnTheWay, lstatOrNull, readBytesOrNull } from '../../util/read.js';

/** Each program in node_modules/.bin by name, as what it is: a link's target, or a file's sha256. */
export type ToolBins = ReadonlyMap<string, string>;

const BIN = path.join('node_modules', '.bin');
/** What `npx ralphkit` runs from the tree: set aside when made or changed during the loop. */
const OWN = [path.join(BIN, 'ralphkit'), path.join('node_modules', 'ralphkit')];
/**
 * Files your tools read from the project folder that start programs: npm's `node-options` and `script-shell`, yarn's
 * `yarnPath`, pnpm's hooks file, Claude Code's local hooks. One no commit tracks (ignored, so no diff shows it) made
 * or changed during the loop is set aside too; one the loop's commits change is in the diff you review.
 */
const CONFIGS = ['.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs', path.join('.claude', 'settings.local.json')];

/** The programs in `top`'s node_modules/.bin, and ralphkit's own names there, as they are now. */
export function readToolBins(top: string): ToolBins {
  const out = new Map<string, string>();
  const dir = path.join(top, BIN);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // No folder (or not one): no programs.
  }
  for (const name of names) out.set(path.join(BIN, name), describe(path.join(dir, name)));
  const own = path.join(top, OWN[1]);
  if (lstatOrNull(own)) out.set(OWN[1], describe(path.join(own, 'package.json')));
  for (const name of CONFIGS) {
    const file = path.join(top, name);
    if (lstatOrNull(file)) out.set(name, describe(file));
  }
  return out;
}

function describe(file: string): string {
  const st = lstatOrNull(file);
  if (!st) return 'none';
  if (st.isSymbolicLink()) {
    try {
      return `link ${readlinkSync(file)}`;
    } catch {
      return 'link';
    }
  }
  if (!st.isFile()) return 'other';
  const bytes = readBytesOrNull(file);
  return bytes ? `file ${createHash('sha256').update(bytes).digest('hex')}` : 'file';
}

/**
 * At the loop's end: what changed in node_modules/.bin since `held` (the start). ralphkit's own names go into
 * `keepDir/set-aside/` (not through a link on the way: then only named); the rest are named. Returns what to say.
 */
export function settleToolBins(
  top: string,
  held: ToolBins,
  keepDir: string,
  tracked: (rel: string) => boolean,
): string[] {
  const now = readToolBins(top);
  const changed = [...now].filter(([name, what]) => held.get(name) !== what).map(([name]) => name);
  if (!changed.length) return [];
  const said: string[] = [];
  const own = changed.filter((name) => OWN.includes(name) || (CONFIGS.includes(name) && !tracked(name)));
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
  return said;
}

function runs(name: string): string {
  return OWN.includes(name)
    ? '`npx ralphkit` in this tree would run it'
    : `no commit tracks it, and your ${name.includes('claude') ? 'next Claude Code session here' : 'npm, npx, yarn or pnpm here'} would read it`;
}
