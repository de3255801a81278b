// Setup once per loop for each lockfile content and setup command (SPEC §6). The first checkout that needs a key has
// it built in a folder of the runner's own that holds only the files of the key (the lockfiles, every package.json, the
// tarballs they name, the package managers' configuration: verify/setup-key.ts), where setup runs; the folders it
// creates there (node_modules) are the cache. Every checkout with that key, the first one included, gets its own copy
// of them (a reflink where the file system has them): what its checks write there never reaches the next one, and what
// the install made cannot hold anything of a commit's sources, which a dependency's install script could otherwise
// copy in. Only a recognised dependency install in a project without install scripts of its own is cached; anything
// else, or a setup that fails or makes more than new top-level folders where the cache is built, runs in every
// checkout, as before.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CheckResult } from './checks.js';
import { refuseUpwardConfig, type Checkout } from './checkout.js';
import { makeTempFolder } from '../store/temp-folders.js';
import { SealBroken } from '../errors.js';
import { findExecutable } from '../../util/which.js';
import { recordsRoot } from '../store/layout.js';
import {
  INSTALL_CONFIG,
  isLockfile,
  isNpmLockfile,
  localTarballs,
  outsideDependencies,
  setupKey,
  YARN_FOLDER,
} from './setup-key.js';

/** What one setup made: `names` (top-level folders) under `folder`, and the setup's own result (for the ledger). */
export interface CachedSetup {
  folder: string;
  names: string[];
  result: CheckResult;
  /** fingerprint() of `folder` when it was made: a change since (the agent's code, without --sandbox) drops it. */
  print: string;
}

interface Entry {
  made: Promise<CachedSetup | null>;
  /** Set once the build is over. */
  done?: CachedSetup | null;
  copying: number;
  stale: boolean;
  /** An agent ran at some moment of the build (a --parallel run's other workers): see dropBuiltWhileAgentsRan. */
  whileAgents: boolean;
}

/** The loop's setup cache: at most one key at a time (a new key drops the old once no copy reads it). */
export class SetupCache {
  private readonly entries = new Map<string, Entry>();
  private readonly said = new Set<string>();
  /** Why a key's build failed: said again (once) by every checkout that then runs setup itself. */
  private readonly failures = new Map<string, string>();
  /** Agents running now, and agents started in all (a --parallel run's workers say so: agentRuns). */
  private agents = { live: 0, started: 0 };

  /**
   * A --parallel worker's agent starts: until the returned function is called, a build counts as made while an agent
   * ran. Such an agent shares the host's network (and, without --sandbox, the file system) with the build, so it can
   * serve a dependency that is gone once it exits.
   */
  agentRuns(): () => void {
    this.agents.live++;
    this.agents.started++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.agents.live--;
    };
  }

  /**
   * Forgets every setup built while an agent ran (the run's end, every agent gone: what decides exit 0 must not rest
   * on a dependency that only a running agent could serve); true when one was. The next checkout builds it again.
   */
  dropBuiltWhileAgentsRan(): boolean {
    let dropped = false;
    for (const [key, entry] of [...this.entries])
      if (entry.whileAgents && !entry.stale) {
        this.drop(key, entry);
        dropped = true;
      }
    return dropped;
  }

  /** Why `key` is not cached after its build failed (undefined: it did not fail). */
  failure(key: string): string | undefined {
    return this.failures.get(key);
  }

  /** Records that `key`'s build failed, and why. */
  failed(key: string, why: string): void {
    this.failures.set(key, why);
  }

  /** True the first time `reason` is asked about: why setup is not cached is said once per loop. */
  firstSaid(reason: string): boolean {
    if (this.said.has(reason)) return false;
    this.said.add(reason);
    return true;
  }

  /** The setup made for `key` (waiting for one under way), or null. */
  async lookup(key: string): Promise<CachedSetup | null> {
    const entry = this.entries.get(key);
    return entry ? await entry.made : null;
  }

  /** Claims the build of `key`: undefined when another checkout builds it; else what to call with the result. */
  begin(key: string): ((made: CachedSetup | null) => void) | undefined {
    if (this.entries.has(key)) return undefined;
    let finish!: (made: CachedSetup | null) => void;
    const started = this.agents.started;
    const entry: Entry = {
      made: new Promise((resolve) => (finish = resolve)),
      copying: 0,
      stale: false,
      whileAgents: this.agents.live > 0,
    };
    this.entries.set(key, entry);
    return (made) => {
      // An agent running at the start or the end of the build, or one started (and perhaps gone) during it.
      entry.whileAgents ||= this.agents.live > 0 || this.agents.started !== started;
      entry.done = made;
      finish(made);
      // A build that failed stays known: this key runs setup in each checkout for the rest of the loop.
      if (!made) return;
      if (entry.stale) return this.drop(key, entry);
      for (const [other, old] of this.entries) if (other !== key) this.drop(other, old);
    };
  }

  /**
   * A copy of each cached folder into `dir`: 'copied'; 'changed' when the cache changed since it was made (or while it
   * was copied), the copy then removed and the key dropped; 'no' (nothing copied) when one of them is there already.
   */
  async copyInto(key: string, made: CachedSetup, dir: string): Promise<'copied' | 'changed' | 'no'> {
    if (made.names.some((name) => existsSync(path.join(dir, name)))) return 'no';
    const entry = this.entries.get(key);
    if (!entry || entry.stale) return 'no';
    entry.copying++;
    const undo = () => made.names.forEach((name) => rmSync(path.join(dir, name), { recursive: true, force: true }));
    try {
      for (const name of made.names) await copyFolder(path.join(made.folder, name), path.join(dir, name));
      if (fingerprint(made.folder) === made.print) return 'copied';
      undo();
      entry.stale = true;
      return 'changed';
    } catch {
      undo();
      return 'no';
    } finally {
      entry.copying--;
      if (entry.stale) this.drop(key, entry);
    }
  }

  /** Forgets `key`; its folder goes once no copy reads it and its build is over (else when it ends). */
  private drop(key: string, entry: Entry): void {
    entry.stale = true;
    if (entry.copying || entry.done === undefined) return;
    if (this.entries.get(key) === entry) this.entries.delete(key);
    if (entry.done) rmSync(entry.done.folder, { recursive: true, force: true });
  }

  /** Removes every cached folder now (the runner exits). */
  removeAll(): void {
    for (const entry of this.entries.values())
      if (entry.done) rmSync(entry.done.folder, { recursive: true, force: true });
    this.entries.clear();
  }
}

const caches = new Map<string, SetupCache>();

/**
 * The setup cache of loop `loopId`, made on first use and removed when the runner exits. `top` is the tree it verifies
 * in: a --worktree loop's, or a --parallel worker's or merge queue's, all share the one cache of the loop, kept by its
 * records' tree (store/layout.ts recordsRoot), so one install serves every worktree of the run.
 */
export function loopSetupCache(top: string, loopId: string): SetupCache {
  if (!caches.size) process.once('exit', () => caches.forEach((c) => c.removeAll()));
  const id = `${recordsRoot(top)}\0${loopId}`;
  let cache = caches.get(id);
  if (!cache) caches.set(id, (cache = new SetupCache()));
  return cache;
}

/**
 * The files the key is made of, as the checkout holds them before setup: top-level lockfiles and install configuration,
 * every package.json, and the tarballs of the project they install from. A `.yarn` folder is named by a marker that
 * setupKey refuses (YARN_FOLDER).
 */
export function readSetupInputs(dir: string, tracked: readonly string[]): Map<string, Buffer | null> {
  const top = readdirSync(dir);
  const manifests = tracked.filter(isManifest);
  if (top.includes('package.json')) manifests.push('package.json');
  const files = new Set([...top.filter((f) => isLockfile(f) || INSTALL_CONFIG.includes(f)), ...manifests]);
  const inputs = new Map([...files].map((f) => [f, readRegular(path.join(dir, f))]));
  // The tarballs the manifests and npm's lockfile name: what npm installs from is the lockfile's `resolved`.
  for (const named of [...new Set(manifests), ...top.filter(isNpmLockfile)]) {
    const text = inputs.get(named)?.toString('utf8');
    for (const tarball of text === undefined ? [] : localTarballs(named, text))
      inputs.set(tarball, readRegular(path.join(dir, tarball)));
  }
  if (top.includes('.yarn')) inputs.set(YARN_FOLDER, null);
  return inputs;
}

/**
 * Before any setup in a checkout (its readSetupInputs): a package.json or npm lockfile that installs a dependency from a path out of the
 * checkout (`"impl": "../../../../home/you/app/.stash/impl.tgz"`) refuses the claim, as a link out of it does: setup
 * would install files no commit holds (from the path, or from npm's cache by their hash), and a fresh clone elsewhere
 * has none of them.
 */
export function refuseOutsideDependencies(inputs: ReadonlyMap<string, Buffer | null>): void {
  // The manifests first, then npm's lockfile (what it resolved them to).
  const named = [...inputs.keys()].filter(isManifest).concat([...inputs.keys()].filter(isNpmLockfile));
  const found = named.flatMap((file) => {
    const bytes = inputs.get(file);
    return bytes
      ? outsideDependencies(file, bytes.toString('utf8')).map((spec) => `${file} names ${JSON.stringify(spec)}`)
      : [];
  });
  if (found.length)
    throw new SealBroken(
      `a dependency is installed from out of the checkout (${found.slice(0, 3).join('; ')}): setup would install files no commit holds, which a fresh clone elsewhere does not have; depend on a path inside the repository, or on a published version`,
    );
}

function isManifest(file: string): boolean {
  return file === 'package.json' || file.endsWith('/package.json');
}

function readRegular(file: string): Buffer | null {
  try {
    return lstatSync(file).isFile() ? readFileSync(file) : null;
  } catch {
    return null;
  }
}

/**
 * The cache of a key, built apart: the key's files written into a new runner folder, setup run there (`run`), and the
 * new folders it made at the top (node_modules) kept as they are. null, the folder removed, when setup failed there or
 * changed anything else (a key file rewritten, a file at the top, something inside a package's folder): then the key is
 * not cached, and setup runs in each checkout.
 */
export async function buildApart(
  inputs: ReadonlyMap<string, Buffer | null>,
  run: (dir: string) => Promise<CheckResult>,
): Promise<{ made: CachedSetup | null; result: CheckResult | null }> {
  const folder = makeTempFolder('ralph-setup');
  let made: CachedSetup | null = null;
  let result: CheckResult | null = null;
  try {
    // An install there would read a workspace root or configuration above it (npm's script-shell from a .npmrc) into
    // a cache every later checkout gets, after the file is gone.
    refuseUpwardConfig(folder, 'the folder the setup cache is built in');
    for (const [file, bytes] of inputs) {
      mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      writeFileSync(path.join(folder, file), bytes as Buffer);
    }
    result = await run(folder);
    const names = result.ok ? newFolders(folder, inputs) : null;
    if (names) made = { folder, names, result, print: fingerprint(folder) };
    return { made, result };
  } finally {
    if (!made) rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The folders setup added at the top of `folder`, which held `inputs` before it; null when it changed anything else:
 * a key file's bytes, a new entry that is not a plain folder, or one inside a folder the key's files are in.
 */
function newFolders(folder: string, inputs: ReadonlyMap<string, Buffer | null>): string[] | null {
  const placed = new Set<string>();
  for (const file of inputs.keys()) for (let p = file; p !== '.'; p = path.posix.dirname(p)) placed.add(p);
  for (const [file, bytes] of inputs) {
    const now = readRegular(path.join(folder, file));
    if (!now || !bytes || !now.equals(bytes)) return null;
  }
  const names: string[] = [];
  for (const name of readdirSync(folder)) {
    if (placed.has(name)) continue;
    if (!lstatSync(path.join(folder, name)).isDirectory()) return null;
    names.push(name);
  }
  // Inside the folders of the key's files (a workspace's), only those files: a package's own node_modules is not
  // copied, so such a setup is not cached.
  const clean = (rel: string): boolean =>
    readdirSync(path.join(folder, rel)).every((name) => {
      const sub = `${rel}/${name}`;
      return placed.has(sub) && (!lstatSync(path.join(folder, sub)).isDirectory() || clean(sub));
    });
  const tops = [...placed].filter((p) => !p.includes('/') && lstatSync(path.join(folder, p)).isDirectory());
  return tops.every(clean) ? names : null;
}

/**
 * Every entry under `dir` by path, inode, mode, size and change time, hashed. The change time is the kernel's (no
 * process of the user can set it back), so a file rewritten, replaced, added or removed there changes the print.
 */
export function fingerprint(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    const st = lstatSync(path.join(dir, rel), { bigint: true });
    hash.update(`${rel}\0${st.ino}\0${st.mode}\0${st.size}\0${st.ctimeNs}\n`);
    if (st.isDirectory())
      for (const name of readdirSync(path.join(dir, rel)).sort()) walk(rel ? `${rel}/${name}` : name);
  };
  walk('');
  return hash.digest('hex');
}

/**
 * The system's `cp`, from the system's folders only (NixOS's included), looked up at the first copy: never on the
 * runner's PATH, whose folders (a node_modules/.bin that `npx` or `npm run` put first) an agent may have written.
 */
let systemCp: string | null | undefined;
function findSystemCp(): string | null {
  systemCp ??=
    process.platform === 'linux' ? findExecutable('cp', { PATH: '/usr/bin:/bin:/run/current-system/sw/bin' }) : null;
  return systemCp;
}

/** `from` copied to `to` (absent), links as links: the system's `cp -a --reflink=auto` on Linux, else node's own copy. */
async function copyFolder(from: string, to: string): Promise<void> {
  const cp = findSystemCp();
  if (cp && (await spawnOk(cp, ['-a', '--reflink=auto', '--', from, to]))) return;
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    errorOnExist: true,
    force: false,
  });
}

function spawnOk(file: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/** The warning when the cache changed after setup made it. */
export function renderTamperedCache(made: CachedSetup): string {
  return `the loop's copy of what setup made (${made.names.join(', ')} in ${made.folder}) changed after setup made it (code running as you wrote there, outside any checkout); it is not used: setup runs again in this checkout. Run the loop with --sandbox so that the agent's code cannot reach the runner's temp folders`;
}

/** What the caller does around `setup` in a checkout (verify/session.ts for claims and the gate, verify/weak-checks.ts). */
export interface SetupSteps {
  /** Runs setup in the checkout. */
  run(): Promise<CheckResult>;
  /** After the run: the checkout made sound again (pins, git's configuration). */
  settle(result: CheckResult): Promise<void>;
  /** Runs setup where the key's cache is built (`dir`, holding only the key's files), and says how it went. */
  runApart(dir: string): Promise<CheckResult>;
  /**
   * Instead of a run: the cached folders were copied in (in `ms`); the checkout is treated as after setup. `built`: this
   * checkout's own runApart made them (else an earlier checkout's did).
   */
  copied(made: CachedSetup, ms: number, built: boolean): Promise<void>;
  /** The cache changed since it was made (the agent's code reached the runner's temp folder): setup runs instead. */
  tampered(made: CachedSetup): void;
}

/**
 * `setup` in a fresh `checkout` through the loop's cache: the cached folders copied in (built apart first, by the first
 * checkout that needs its key; a second one waits for it), else run in the checkout. Returns why setup is not cached,
 * if it is not.
 */
export async function setUpThroughCache(
  cache: SetupCache,
  setup: string,
  checkout: Checkout,
  steps: SetupSteps,
): Promise<string | undefined> {
  const inputs = readSetupInputs(checkout.dir, checkout.tracked);
  refuseOutsideDependencies(inputs);
  const k = setupKey(setup, inputs);
  let why = 'uncached' in k ? k.uncached : undefined;
  if ('key' in k) {
    const started = Date.now();
    const finish = cache.begin(k.key);
    let built = false;
    if (finish) {
      let made: CachedSetup | null = null;
      try {
        const apart = await buildApart(inputs, (dir) => steps.runApart(dir));
        made = apart.made;
        built = made !== null;
        if (!made && apart.result && !apart.result.aborted) cache.failed(k.key, renderApartFailure(apart.result));
      } finally {
        finish(made);
      }
    }
    const hit = await cache.lookup(k.key);
    const copy = hit ? await cache.copyInto(k.key, hit, checkout.dir) : 'no';
    if (copy === 'copied') return void (await steps.copied(hit!, Date.now() - started, built));
    if (copy === 'changed') steps.tampered(hit!);
    why = cache.failure(k.key);
  }
  await steps.settle(await steps.run());
  return why;
}

/** Why a key is not cached after its build: setup failed where only the key's files are, or made more than folders. */
function renderApartFailure(r: CheckResult): string {
  return r.ok
    ? 'setup changed more than new folders at the top (node_modules) where only the lockfiles and package.json files were'
    : `setup failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode ?? r.signal}`}${lastLine(r.outputTail)}) where only the lockfiles, package.json files and the tarballs they name were (an install that needs more of the project passes in the checkout; any other failure shows again in its setup there)`;
}

/** The line of setup's output that says what failed: the last error line, past npm's notices and where its log is. */
export function lastLine(output: string): string {
  const lines = output
    .split('\n')
    .filter((l) => l.trim() && !/complete log of this run|^npm (notice|warn)\b/i.test(l.trim()));
  const errors = lines.filter((l) => /\berr(or)?\b|ERR!/i.test(l));
  const line = (errors.pop() ?? lines.pop())?.trim().slice(0, 200);
  return line ? `: ${line}` : '';
}
