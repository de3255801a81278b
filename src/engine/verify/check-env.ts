// The environment checks run in (SPEC §6): built by the runner, not read from places the agent could write since the
// loop started. HOME is a fresh private folder per verification, seeded with the few files of the user's HOME that
// tools need to work (registry logins, git's identity) as they were at loop start; so a `~/.npmrc` with
// `node-options`, a `~/.gitconfig` or a Python user site the agent writes later has no effect. PATH is the loop
// start's: each folder on it the agent could write (under HOME, /tmp, a writable /usr/local, ...) is listed at loop
// start, and a folder whose entries changed since is replaced, for the checks, by a runner-made folder holding only
// the entries that did not change (an added `~/.local/bin/node` is not there, so the user's real node runs).
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../agents/check.js';
import type { CheckEnvBase } from './types.js';
import { planAgentEnv, AGENT_MARK_VAR } from '../agents/env.js';
import { makeTempFolder } from '../store/temp-folders.js';
import { realpathOrUndefined } from '../../util/read.js';
import { isWithin } from '../../util/repo-path.js';
import { absolutePath, existsDir, planRepoVars, repoPathFolders, withRepoVars } from './repo-env.js';

// Files of HOME copied (as at loop start) into the checks' HOME: what a registry or a test that commits needs.
const SEED_FILES: readonly string[] = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.gitconfig',
  '.config/git/config',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
];
// Toolchain managers that find their toolchains through HOME unless told: [variable, folder under HOME].
const TOOLCHAIN_HOMES: ReadonlyArray<[string, string]> = [
  ['RUSTUP_HOME', '.rustup'],
  ['PYENV_ROOT', '.pyenv'],
  ['NVM_DIR', '.nvm'],
  ['VOLTA_HOME', '.volta'],
  ['ASDF_DATA_DIR', '.asdf'],
  ['RBENV_ROOT', '.rbenv'],
  ['SDKMAN_DIR', '.sdkman'],
  ['BUN_INSTALL', '.bun'],
];
// Variables that would point tools back at configuration the agent can write: the checks' HOME decides instead.
const DROPPED =
  /^(XDG_(CONFIG|DATA|STATE|CACHE)_HOME|npm_config_(userconfig|globalconfig)|GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM)|PYTHONUSERBASE|PYTHONSTARTUP|CARGO_HOME|BUNFIG|MISE_.*|RUSTC_WRAPPER|RUSTFLAGS)$/i;

/**
 * Taken once when the loop starts (verify/trust.ts), before the agent runs. PATH folders inside `repo` (the tree the
 * agent works in: `node_modules/.bin`, first on PATH under `npx` and `npm run`) are left out: what an unchanged entry
 * there loads (`node_modules/<tool>/lib/…`) is the agent's to rewrite, and no listing of the folder shows it.
 *
 * `sandboxWritable`: under --sandbox, the host folders the sandboxed agent can write (its repository, git folder and
 * worktrees; its HOME and /tmp are private layers). A PATH folder outside them is read-only to everything the loop
 * sandboxes, whatever the runner's user may write there (root may write /usr/bin), and is not listed: listing
 * /usr/bin and its neighbours took tens of milliseconds of every verification, and an upgrade you run during the loop
 * (`apt-get upgrade` replacing node) would take a tool away from your checks.
 */
export function takeCheckEnvBase(
  env: NodeJS.ProcessEnv,
  repo?: string,
  { sandboxWritable }: { sandboxWritable?: readonly string[] } = {},
): CheckEnvBase {
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;
  const seed = home
    ? SEED_FILES.flatMap((file) => readOrNone(seedSource(env, home, file)).map((bytes) => ({ file, bytes })))
    : [];
  const keep: Record<string, string> = {};
  for (const [name, dir] of TOOLCHAIN_HOMES) {
    const value = env[name] ?? (home ? path.join(home, dir) : undefined);
    if (value && existsDir(value)) keep[name] = value;
  }
  // npm's cache: one of the checks' own, in their HOME (ownCache), wherever the user's is.
  const cache = env.npm_config_cache ?? env.NPM_CONFIG_CACHE ?? (home ? path.join(home, '.npm') : undefined);
  if (cache) keep.npm_config_cache = cache;
  // A folder named twice resolves nothing the first time did not: listed once. Relative entries (`.`, `node_modules/.bin`) are left out: in a check they resolve inside the checkout, the agent's files.
  const inRepo = repo ? repoPathFolders(env, repo) : [];
  const leftOut = inRepo.map((f) => f.dir);
  const dirs = absolutePath(env).filter((d) => !leftOut.includes(d));
  const listed = new Map<string, Record<string, string> | null>();
  return {
    home,
    seed,
    npmGlobal: readNpmGlobal(env),
    path: dirs.map((dir) => (agentCanChange(dir, sandboxWritable) ? { dir, listing: listOnce(dir, listed) } : { dir })),
    keep,
    ...(repo
      ? {
          repo,
          leftOut,
          leftOutRel: inRepo.map((f) => f.rel),
          repoVars: planRepoVars(env, repo),
        }
      : {}),
  };
}

// git and pip read their `.config/` files from XDG_CONFIG_HOME when it is set.
function seedSource(env: NodeJS.ProcessEnv, home: string, file: string): string {
  return file.startsWith('.config/') && env.XDG_CONFIG_HOME
    ? path.join(env.XDG_CONFIG_HOME, file.slice('.config/'.length))
    : path.join(home, file);
}

/** A fresh private HOME (mode 0700) for one verification, and the checks' environment in it; `remove` when done. */
export function openCheckHome(
  base: CheckEnvBase,
  env: NodeJS.ProcessEnv,
): { dir: string; env: NodeJS.ProcessEnv; changed: string[] } {
  const dir = makeTempFolder('ralph-home');
  return { dir, ...buildCheckEnv(base, env, dir) };
}

/**
 * The checks' environment in the private HOME `home` (created by the caller, empty): `env` (the runner's, secrets
 * already out) with HOME, PATH and the toolchain variables the runner's. Writes the seed files and, for PATH folders
 * that changed since loop start, the folders of unchanged entries. Returns what changed, for a warning.
 */
export function buildCheckEnv(
  base: CheckEnvBase,
  env: NodeJS.ProcessEnv,
  home: string,
): { env: NodeJS.ProcessEnv; changed: string[] } {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!DROPPED.test(name) && !(name in base.keep)) out[name] = value;
  for (const { file, bytes } of base.seed) writeSeed(path.join(home, file), bytes);
  const npmGlobal = path.join(home, '.ralph', 'npmrc');
  writeSeed(npmGlobal, base.npmGlobal ?? Buffer.alloc(0));
  const { dirs, changed } = planHeldPath(base, path.join(home, '.ralph', 'path'));
  Object.assign(out, base.keep, { HOME: home, PATH: dirs.join(path.delimiter), npm_config_globalconfig: npmGlobal });
  if (base.keep.npm_config_cache) out.npm_config_cache = ownCache(home);
  return { env: out, changed };
}

/**
 * npm's cache for one verification: an empty folder of the check HOME, nothing of the user's. No part of a cache is
 * safe to share with code the checks run: `_npx` holds package trees npx runs from disk as they are, `_cacache/index-v5`
 * maps URLs to hashes its writer chose, and `_cacache/content-v2`, though found by hash and hashed again when read,
 * is found by the hash the claimed commit's lockfile names: a check that puts a tarball there under its own hash has
 * a later `npm ci` of a lockfile naming that hash install it with no network, where a fresh clone gets EINTEGRITY.
 * Setup downloads what it installs (once per lockfile and loop: verify/setup-cache.ts).
 */
function ownCache(home: string): string {
  const own = path.join(home, '.ralph', 'npm-cache');
  mkdirSync(own, { recursive: true });
  return own;
}

/**
 * `env` with PATH as the loop started with it (planHeldPath), for a command the runner starts outside any check
 * (--on-exit); `remove` deletes its link folders once the command is over.
 */
export function holdPathEnv(
  base: CheckEnvBase,
  env: NodeJS.ProcessEnv,
): { env: NodeJS.ProcessEnv; changed: string[]; remove: () => void } {
  const dir = makeTempFolder('ralph-path');
  const { dirs, changed } = planHeldPath(base, dir);
  return {
    env: withRepoVars({ ...env, PATH: dirs.join(path.delimiter) }, base),
    changed,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * PATH as the loop started with it, for the checks and for what else the runner starts beside the agent's work (the
 * reviewer, --on-exit): absolute folders only, and each folder the agent could write kept only while its entries are
 * as at loop start; one that changed is replaced by a folder under `links` holding links to its unchanged entries.
 */
export function planHeldPath(base: CheckEnvBase, links: string): { dirs: string[]; changed: string[] } {
  const dirs: string[] = [];
  const changed: string[] = [];
  const listed = new Map<string, Record<string, string> | null>();
  base.path.forEach(({ dir, listing }, i) => {
    if (listing === undefined) return void dirs.push(dir);
    const now = listOnce(dir, listed);
    const diff = diffListing(listing, now);
    if (!diff.length) return void dirs.push(dir);
    changed.push(`${dir} (${diff.slice(0, 5).join(', ')}${diff.length > 5 ? ', …' : ''})`);
    if (!listing) return; // created since: not on the checks' PATH at all
    const held = path.join(links, String(i));
    mkdirSync(held, { recursive: true });
    for (const name of Object.keys(listing))
      if (now?.[name] === listing[name]) symlinkSync(path.join(dir, name), path.join(held, name));
    dirs.push(held);
  });
  return { dirs, changed };
}

/** The names whose entry was added, removed or changed between two listings (pure). */
export function diffListing(before: Record<string, string> | null, after: Record<string, string> | null): string[] {
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const out: string[] = [];
  for (const name of [...names].sort()) {
    const [b, a] = [before?.[name], after?.[name]];
    if (b === a) continue;
    out.push(b === undefined ? `added ${name}` : a === undefined ? `removed ${name}` : `changed ${name}`);
  }
  return out;
}

/**
 * listDir, once per real folder in `listed`: where /bin is a link to /usr/bin (most distributions now), both are on
 * PATH and hold the same entries, a thousand or more.
 */
function listOnce(dir: string, listed: Map<string, Record<string, string> | null>): Record<string, string> | null {
  const real = realpathOrUndefined(dir) ?? dir;
  if (!listed.has(real)) listed.set(real, listDir(dir));
  return listed.get(real) ?? null;
}

/**
 * Each entry of `dir` by identity: inode, size, mode and change time (which no write, rename or `touch` can keep),
 * and for a symbolic link the same of what it leads to. null when the folder does not exist.
 */
function listDir(dir: string): Record<string, string> | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const out: Record<string, string> = {};
  for (const name of names) out[name] = identity(path.join(dir, name));
  return out;
}

function identity(file: string): string {
  try {
    const l = lstatSync(file);
    const own = `${l.dev}:${l.ino}:${l.size}:${l.mode}:${l.ctimeMs}`;
    if (!l.isSymbolicLink()) return own;
    const t = statSync(file);
    return `${own}>${t.dev}:${t.ino}:${t.size}:${t.mode}:${t.ctimeMs}`;
  } catch {
    return 'gone';
  }
}

/**
 * Whether the agent could change what PATH folder `dir` holds: under --sandbox, only inside the host folders it can
 * write (`sandboxWritable`, by real path); without it, whenever the runner's user could (agentWritable).
 */
export function agentCanChange(dir: string, sandboxWritable?: readonly string[]): boolean {
  if (!sandboxWritable) return agentWritable(dir);
  const real = realpathOrUndefined(dir) ?? path.resolve(dir);
  return sandboxWritable.some((w) => isWithin(real, realpathOrUndefined(w) ?? path.resolve(w))) && agentWritable(dir);
}

/** Whether the runner's user (so the agent) could change what `dir` holds: it, or the folder it would be made in, is writable. */
function agentWritable(dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsDir(d)) return canWrite(d);
    if (path.dirname(d) === d) return false;
  }
}

function canWrite(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function readOrNone(file: string): Buffer[] {
  try {
    return [readFileSync(file)];
  } catch {
    return [];
  }
}

/** npm's global npmrc: `npm_config_globalconfig`, else `<prefix>/etc/npmrc` of the node on PATH. */
function readNpmGlobal(env: NodeJS.ProcessEnv): Buffer | null {
  const named = env.npm_config_globalconfig ?? env.NPM_CONFIG_GLOBALCONFIG;
  if (named) return readOrNone(named)[0] ?? null;
  const node = findExecutable('node', env);
  if (!node) return null;
  try {
    return readOrNone(path.join(path.dirname(path.dirname(realpathSync(node))), 'etc', 'npmrc'))[0] ?? null;
  } catch {
    return null;
  }
}

function writeSeed(file: string, bytes: Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes, { mode: 0o600 });
}

/** The checks' environment for one verification: the agent's (no runner secrets, a mark of its own) in a private HOME. */
export class ChecksEnv {
  readonly plan: ReturnType<typeof planAgentEnv>;
  private home: string;
  private readonly base: CheckEnvBase;

  constructor(base: CheckEnvBase | undefined, log: (level: 'info' | 'warn', message: string) => void) {
    this.base = base ?? takeCheckEnvBase(process.env);
    const opened = openCheckHome(this.base, process.env);
    this.home = opened.dir;
    this.plan = planAgentEnv(opened.env, {});
    if (opened.changed.length)
      log(
        'warn',
        `PATH folders changed since the loop started: ${opened.changed.join('; ')}; the checks run without what was added or changed there`,
      );
  }

  get env(): NodeJS.ProcessEnv {
    return this.plan.env;
  }

  /** After setup: a fresh HOME, so what setup (the agent's install scripts) wrote there does not reach the checks. */
  renew(): void {
    this.remove();
    const opened = openCheckHome(this.base, process.env);
    this.home = opened.dir;
    this.plan.env = { ...planAgentEnv(opened.env, {}).env, [AGENT_MARK_VAR]: this.plan.token };
  }

  remove(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}
