// Root ignores file modes, so tests of unwritable files run the runner as `nobody` when they run as root.
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import type { SpawnOptions } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, run, type RunResult } from './repo.js';

export const NOBODY = 65534;
export const asRoot = process.getuid?.() === 0;

/** Spawn options that run a child as `nobody` when the tests run as root (and change nothing otherwise). */
export function asNobodyOptions(): { uid?: number; gid?: number } {
  return asRoot ? { uid: NOBODY, gid: NOBODY } : {};
}

/** Gives `dirs` (recursively) to `nobody` when the tests run as root, so file modes apply to the runner. */
export function handOver(...dirs: string[]): void {
  if (!asRoot) return;
  const walk = (p: string): void => {
    chownSync(p, NOBODY, NOBODY);
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) walk(path.join(p, n));
  };
  dirs.forEach(walk);
}

/**
 * The node binary a child run as `nobody` can execute: the one running the tests when nobody can reach it.
 * CI keeps Node 22 and 24 under root's home (mode 0700), where nobody cannot; then the first `node` on PATH
 * that nobody can run, which is also the one the installed ralph.sh finds when it runs as nobody.
 */
export function nodeForNobody(): string {
  if (!asRoot || othersCanRun(process.execPath)) return process.execPath;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (dir && existsSync(candidate) && othersCanRun(candidate)) return candidate;
  }
  throw new Error(`no node binary that nobody can run (${process.execPath} is not reachable for others)`);
}

// nobody is neither owner nor group of root's files, so the "others" bits decide, on the file and every folder above it.
function othersCanRun(file: string): boolean {
  const real = realpathSync(file);
  if (!(statSync(real).mode & 0o001)) return false;
  return othersCanEnter(path.dirname(real));
}

function othersCanEnter(dir: string): boolean {
  for (let d = realpathSync(dir); ; d = path.dirname(d)) {
    if (!(statSync(d).mode & 0o001)) return false;
    if (path.dirname(d) === d) return true;
  }
}

/** What a child run as nobody reads from the checkout: the package as npm would ship it, and the fake agents. */
const FOR_NOBODY = ['package.json', 'bin', 'dist', 'templates', 'skills', 'test/fixtures'];
let nobodyCopy: string | undefined;

/**
 * The checkout as a child run as `nobody` can read it. A clone under a folder others may not enter (root's
 * home, mode 0700) is out of nobody's reach, so the files it needs are copied once per test file to a
 * readable temp folder, removed when the test process exits. `npm run build` must have run (dist/).
 */
export function nobodyRoot(): string {
  if (!asRoot || othersCanEnter(ROOT)) return ROOT;
  if (nobodyCopy) return nobodyCopy;
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'ralphkit-nobody-')));
  chmodSync(dir, 0o755);
  for (const rel of FOR_NOBODY) cpSync(path.join(ROOT, rel), path.join(dir, rel), { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (nobodyCopy = dir);
}

/** A fake agent from test/fixtures/agents/, at a path a child run as `nobody` can read (see nobodyRoot). */
export function nobodyAgent(name: string): string {
  return path.join(nobodyRoot(), 'test/fixtures/agents', `${name}.mjs`);
}

/** The built CLI, run as `nobody` when the tests run as root (see asNobodyOptions), with a node it can execute. */
export function runCliAsNobody(
  args: string[],
  opts: SpawnOptions & { input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return run(nodeForNobody(), [path.join(nobodyRoot(), 'bin/ralphkit.js'), ...args], { ...opts, ...asNobodyOptions() });
}
