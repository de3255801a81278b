// The staging folder that makes an install all or nothing (docs/guide.md, "Upgrading"): every new file is written and
// fsynced into STAGING_DIR first, then a journal marks the install as decided, then each part is renamed into place.
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync, writeNewFilesSynced } from '../util/atomic.js';
import { STAGING_DIR } from './types.js';

/** One file to put in place. */
export interface StagedWrite {
  /** Absolute path to write (symlinks resolved and checked). */
  target: string;
  data: Buffer | string;
  mode?: number;
  /** Backups are put in place before the files they protect; the manifest after everything else. */
  kind: 'backup' | 'file' | 'manifest';
}

/**
 * What one rename puts in place: a file over its old version, or a whole new folder (the topmost folder on the
 * way to the target that does not exist yet), so a first install adds ralph/ and .claude/ in one step each.
 */
export interface StagedUnit {
  /** Absolute path the unit is renamed to. */
  target: string;
  /** Absolute path of the unit inside the staging folder. */
  staged: string;
  writes: StagedWrite[];
}

const JOURNAL = 'journal.json';

export function stagingDir(root: string): string {
  return path.join(root, STAGING_DIR);
}

/** Pure except for existence checks: group the writes into rename units, in commit order. */
export function planUnits(root: string, writes: readonly StagedWrite[]): StagedUnit[] {
  const byTarget = new Map<string, StagedUnit>();
  for (const write of writes) {
    const target = topmostMissingFolder(path.dirname(write.target)) ?? write.target;
    const unit = byTarget.get(target) ?? {
      target,
      staged: path.join(stagingDir(root), String(byTarget.size)),
      writes: [],
    };
    unit.writes.push(write);
    byTarget.set(target, unit);
  }
  // A unit holding a backup goes first even when it also holds the manifest (a new ralph/ with a backup in it).
  const has = (u: StagedUnit, kind: StagedWrite['kind']) => u.writes.some((w) => w.kind === kind);
  const rank = (u: StagedUnit) => (has(u, 'backup') ? 0 : has(u, 'manifest') ? 2 : 1);
  return [...byTarget.values()].sort((a, b) => rank(a) - rank(b));
}

function topmostMissingFolder(dir: string): string | undefined {
  let top: string | undefined;
  for (let d = dir; !existsSync(d) && path.dirname(d) !== d; d = path.dirname(d)) top = d;
  return top;
}

/** Where `write` sits inside its unit's staged copy. */
function stagedPathOf(unit: StagedUnit, write: StagedWrite): string {
  return unit.target === write.target ? unit.staged : path.join(unit.staged, path.relative(unit.target, write.target));
}

/** Phase 1: write every file into the staging folder and fsync them, then the journal. The repository is untouched. */
export async function stageUnits(root: string, units: readonly StagedUnit[], step: () => Promise<void>): Promise<void> {
  const dir = stagingDir(root);
  removeStaging(root);
  mkdirSync(dir);
  const staged = units.flatMap((unit) =>
    unit.writes.map((write) => ({ file: stagedPathOf(unit, write), data: write.data, mode: write.mode })),
  );
  for (const folder of new Set(staged.map((s) => path.dirname(s.file)))) mkdirSync(folder, { recursive: true });
  // Leftovers of an interrupted install must never show in `git status` (or be committed by a hasty `git add -A`):
  // the .gitignore goes first. Every staged file is on disk before the journal decides the install: written one by
  // one (a step each), fsynced together.
  const ignore = { file: path.join(dir, '.gitignore'), data: '*\n' };
  await writeNewFilesSynced([ignore, ...staged], (i) => (i === 0 ? Promise.resolve() : step()));
  const journal = {
    decided: new Date().toISOString(),
    targets: units.map((u) => path.relative(root, u.target).split(path.sep).join('/')),
  };
  atomicWriteFileSync(path.join(dir, JOURNAL), `${JSON.stringify(journal, null, 2)}\n`);
  await step();
}

/** Phase 2: one rename per unit, in order; then the journal goes, then the staging folder. */
export async function commitUnits(
  root: string,
  units: readonly StagedUnit[],
  step: () => Promise<void>,
): Promise<void> {
  for (const unit of units) {
    putInPlace(unit);
    await step();
  }
  unlinkSync(path.join(stagingDir(root), JOURNAL));
  removeEmptiedStaging(root);
}

// Every unit renamed, the staging folder holds its .gitignore alone: two calls, where a recursive removal costs
// Node a module of its own to load. Anything else there (the copies of an EXDEV unit) goes the recursive way.
function removeEmptiedStaging(root: string): void {
  const dir = stagingDir(root);
  if (lstatOrUndefined(dir)?.isDirectory()) {
    try {
      unlinkSync(path.join(dir, '.gitignore'));
      rmdirSync(dir);
      return;
    } catch {
      /* not as left: the recursive way below */
    }
  }
  removeStaging(root);
}

// A folder inside the repository that is another file system (a mount) cannot take a rename from the staging
// folder: its files are copied in, each atomically. Rare, and past the journal either way.
function putInPlace(unit: StagedUnit): void {
  try {
    renameSync(unit.staged, unit.target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    for (const write of unit.writes) {
      mkdirSync(path.dirname(write.target), { recursive: true });
      atomicWriteFileSync(write.target, readFileSync(stagedPathOf(unit, write)), write.mode);
    }
  }
}

/**
 * What an interrupted install left: nothing, a staging folder before its journal, or a decided install. Only for
 * the message: staged files are never replayed (an agent can write this folder); the next plan finishes the job.
 */
export function readLeftover(root: string): 'none' | 'staged' | 'decided' {
  const dir = stagingDir(root);
  if (!lstatOrUndefined(dir)) return 'none';
  return existsSync(path.join(dir, JOURNAL)) ? 'decided' : 'staged';
}

/** Remove the staging folder; a symlink planted in its place is removed itself, never followed. */
export function removeStaging(root: string): void {
  const dir = stagingDir(root);
  const stat = lstatOrUndefined(dir);
  if (!stat) return;
  if (!stat.isDirectory()) return unlinkSync(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Bytes the staged files take, each rounded up to whole blocks of the file system holding `root`. */
export function stagedBytes(units: readonly StagedUnit[], blockSize: number): number {
  const size = (w: StagedWrite) => (typeof w.data === 'string' ? Buffer.byteLength(w.data) : w.data.length);
  return units
    .flatMap((u) => u.writes)
    .reduce((sum, w) => sum + Math.max(1, Math.ceil(size(w) / blockSize)) * blockSize, 0);
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}
