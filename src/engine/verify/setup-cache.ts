// Setup once per loop for each lockfile content and setup command (SPEC §6). The first checkout that needs a key runs
// `setup` as before; right after (the pins put back, no check run yet) the folders setup created at the top of the
// checkout (node_modules) are copied into a runner temp folder. Each later checkout with the same key gets its own
// copy of them (a reflink where the file system has them) instead of a fresh install: what its checks write there
// never reaches the next one. Only a recognised dependency install in a project without install scripts of its own
// is cached (verify/setup-key.ts); anything else runs in every checkout, as before.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { CheckResult } from './checks.js';
import type { Checkout } from './checkout.js';
import { gitOk } from '../git/git.js';
import { makeTempFolder } from '../store/temp-folders.js';
import { recordsRoot } from '../store/layout.js';
import { isLockfile, setupKey } from './setup-key.js';

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
}

/** The loop's setup cache: at most one key at a time (a new key drops the old once no copy reads it). */
export class SetupCache {
  private readonly entries = new Map<string, Entry>();
  private readonly said = new Set<string>();

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
    const entry: Entry = { made: new Promise((resolve) => (finish = resolve)), copying: 0, stale: false };
    this.entries.set(key, entry);
    return (made) => {
      entry.done = made;
      finish(made);
      if (!made || entry.stale) return this.drop(key, entry);
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

/** The files the key is made of, as the checkout holds them before setup: top-level lockfiles, every package.json. */
export function readSetupInputs(dir: string, tracked: readonly string[]): Map<string, Buffer | null> {
  const files = new Set([
    ...readdirSync(dir).filter(isLockfile),
    ...tracked.filter((f) => f === 'package.json' || f.endsWith('/package.json')),
  ]);
  if (existsSync(path.join(dir, 'package.json'))) files.add('package.json');
  return new Map([...files].map((f) => [f, readRegular(path.join(dir, f))]));
}

function readRegular(file: string): Buffer | null {
  try {
    return lstatSync(file).isFile() ? readFileSync(file) : null;
  } catch {
    return null;
  }
}

/** The key of `setup` in a fresh checkout, or why it is not cached. */
export function checkoutSetupKey(setup: string, checkout: Checkout): ReturnType<typeof setupKey> {
  return setupKey(setup, readSetupInputs(checkout.dir, checkout.tracked));
}

/** What `git status` says of the checkout, untracked and ignored folders as one entry each. */
export async function readStatus(dir: string): Promise<Set<string>> {
  // --ignore-submodules=all: setup's code could write a gitlink and a sub/.git whose config names a filter, which a
  // status that recursed into it would run on the host.
  return new Set(
    (
      await gitOk(dir, [
        'status',
        '--porcelain=v1',
        '-z',
        '--ignored=traditional',
        '--untracked-files=normal',
        '--ignore-submodules=all',
      ])
    )
      .split('\0')
      .filter(Boolean),
  );
}

/**
 * After setup (the pins put back): when all it changed is new untracked top-level folders (`before`: the status before
 * setup), a copy of them in a runner temp folder; else null (a tracked file changed, a file at the top, a folder
 * inside a committed one: the next checkout could not be given the same by a copy).
 */
export async function storeSetup(
  dir: string,
  before: ReadonlySet<string>,
  result: CheckResult,
): Promise<CachedSetup | null> {
  const added = [...(await readStatus(dir))].filter((s) => !before.has(s));
  const names = added.map((s) => /^(\?\?|!!) ([^/]+)\/$/.exec(s)?.[2]);
  if (!names.length || names.some((n) => !n || n === '.git' || !lstatSync(path.join(dir, n)).isDirectory()))
    return null;
  const folder = makeTempFolder('ralph-setup');
  try {
    for (const name of names as string[]) await copyFolder(path.join(dir, name), path.join(folder, name));
    return { folder, names: names as string[], result, print: fingerprint(folder) };
  } catch {
    rmSync(folder, { recursive: true, force: true });
    return null;
  }
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

/** `from` copied to `to` (absent), links as links: `cp -a --reflink=auto` on Linux, else node's own copy. */
async function copyFolder(from: string, to: string): Promise<void> {
  if (process.platform === 'linux' && (await spawnOk('cp', ['-a', '--reflink=auto', '--', from, to]))) return;
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
  /** After the run: the checkout made sound again (pins, git's configuration); true when its folders may be cached. */
  settle(result: CheckResult): Promise<boolean>;
  /** Instead of a run: the cached folders were copied in (in `ms`); the checkout is treated as after setup. */
  copied(made: CachedSetup, ms: number): Promise<void>;
  /** The cache changed since it was made (the agent's code reached the runner's temp folder): setup runs instead. */
  tampered(made: CachedSetup): void;
}

/**
 * `setup` in a fresh `checkout` through the loop's cache: the folders copied in when its key was built, else run (and
 * then cached when it may be: the first checkout with a key builds it, a second one waits for it). Returns why setup
 * is not cached, if it is not.
 */
export async function setUpThroughCache(
  cache: SetupCache,
  setup: string,
  checkout: Checkout,
  steps: SetupSteps,
): Promise<string | undefined> {
  const k = checkoutSetupKey(setup, checkout);
  const key = 'key' in k ? k.key : undefined;
  const started = Date.now();
  const hit = key ? await cache.lookup(key) : null;
  const copy = key && hit ? await cache.copyInto(key, hit, checkout.dir) : 'no';
  if (copy === 'copied') return void (await steps.copied(hit!, Date.now() - started));
  if (copy === 'changed') steps.tampered(hit!);
  const finish = key ? cache.begin(key) : undefined;
  let made: CachedSetup | null = null;
  try {
    const before = finish ? await readStatus(checkout.dir) : undefined;
    const r = await steps.run();
    if ((await steps.settle(r)) && before) made = await storeSetup(checkout.dir, before, r);
  } finally {
    finish?.(made);
  }
  return 'uncached' in k ? k.uncached : undefined;
}
