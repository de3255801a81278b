// The one module that writes an install plan, all or nothing (docs/guide.md, "Upgrading"): every file (backups first, the
// manifest last) is staged and fsynced, a journal marks the install decided, then each part is renamed into place.
import { rmdirSync, rmSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import { renderManifest } from './plan.js';
import { commitUnits, planUnits, removeStaging, stageUnits, stagedBytes, type StagedWrite } from './staging.js';
import type { InstallPlan } from './types.js';

export interface ApplyInput {
  /** The folder install runs in (--cwd, symlinks resolved): the staging folder goes there. */
  root: string;
  plan: InstallPlan;
  /** Repository-relative path → absolute path to write (symlinks already resolved and checked). */
  real: ReadonlyMap<string, string>;
  contents: ReadonlyMap<string, Buffer>;
  modes: ReadonlyMap<string, number | undefined>;
  /** The user's current bytes of each file that will be backed up. */
  current: ReadonlyMap<string, Buffer>;
  /** Test hook: after this many steps (a file staged, the journal, a rename), stop and wait to be killed (RALPHKIT_TEST_PAUSE_AFTER_WRITES). */
  pauseAfterWrites?: number;
}

export interface ApplyResult {
  written: string[];
  backups: { path: string; backup: string }[];
}

// fix-mode rewrites the same bytes: the write is what sets the mode, on every platform alike.
const WRITES = new Set(['create', 'upgrade', 'fix-mode', 'overwrite', 'merge']);

export async function applyInstall(input: ApplyInput): Promise<ApplyResult> {
  const { plan, real, root } = input;
  const toWrite = plan.items.filter((i) => WRITES.has(i.action));
  const backups = plan.items
    .filter((i) => i.backup && (WRITES.has(i.action) || i.action === 'remove'))
    .map((i) => ({ path: i.path, backup: i.backup! }));
  const writes: StagedWrite[] = [
    ...backups.map(
      (b): StagedWrite => ({
        target: real.get(b.backup)!,
        data: input.current.get(b.path)!,
        mode: statSync(real.get(b.path)!).mode & 0o777,
        kind: 'backup',
      }),
    ),
    ...toWrite.map(
      (i): StagedWrite => ({
        target: real.get(i.path)!,
        data: input.contents.get(i.path)!,
        mode: input.modes.get(i.path),
        kind: 'file',
      }),
    ),
  ];
  if (plan.manifest.action !== 'identical')
    writes.push({ target: real.get(plan.manifest.path)!, data: renderManifest(plan.manifest.next), kind: 'manifest' });
  const units = planUnits(root, writes);
  let steps = 0;
  const step = async () => {
    if (++steps === input.pauseAfterWrites) await pauseForTest(steps);
  };

  try {
    await stageUnits(root, units, step);
  } catch (err) {
    removeStaging(root);
    throw stagingError(err, root, writes, stagedBytes(units, blockSize(root)));
  }
  const before = steps;
  try {
    await commitUnits(root, units, step);
  } catch (err) {
    throw commitError(err, root, steps - before, units.length);
  }
  // A file install created and uninstall emptied again goes last: if this run is killed first, the file stays with
  // nothing of ralphkit's in it, which is harmless.
  const removed = plan.items.filter((i) => i.action === 'remove').map((i) => i.path);
  for (const rel of removed) {
    rmSync(real.get(rel)!, { force: true });
    removeEmptyParents(root, real.get(rel)!);
  }
  return { written: [...toWrite.map((i) => i.path), ...removed], backups };
}

/**
 * The folders a removed file leaves empty (`.github/workflows/`, `.claude/commands/`, then their parents), up to the
 * install's root and never past it. rmdir removes only an empty folder, so nothing of the user's ever goes.
 */
function removeEmptyParents(root: string, file: string): void {
  for (let dir = path.dirname(file); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
  }
}

function blockSize(root: string): number {
  return statfsSync(root).bsize || 4096;
}

/** Before the journal nothing in the repository has changed: say so, with what it takes on a full disk. */
function stagingError(err: unknown, root: string, writes: readonly StagedWrite[], needed: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return err;
  const where = err instanceof Error ? err.message.split(',')[0] : code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    const stat = statfsSync(root);
    const free = stat.bavail * stat.bsize;
    return new RalphkitError(
      `no space left on the device holding ${root}: writing ${writes.length} files there needs ${kib(needed)}, and ${kib(free)} is free; nothing was changed (free some space, then run the same command again)`,
      { exitCode: EXIT.error, cause: err },
    );
  }
  return new RalphkitError(`could not write into ${root} (${where}); nothing was changed`, {
    exitCode: EXIT.error,
    cause: err,
    hint: 'make the folder writable for this user, then run the same command again',
  });
}

/** Past the journal the install is decided: every file on disk is whole (old or new), and the next run finishes it. */
function commitError(err: unknown, root: string, done: number, total: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return err;
  const what = err instanceof Error ? err.message.split(',')[0] : code;
  return new RalphkitError(
    `the install stopped after putting ${done} of ${total} parts in place in ${root} (${what}); each file there is whole, either the old version or the new one`,
    {
      exitCode: EXIT.error,
      cause: err,
      hint: 'fix the cause, then run the same command again: it finishes the install',
    },
  );
}

function kib(bytes: number): string {
  return `${Math.ceil(bytes / 1024)} KiB`;
}

async function pauseForTest(count: number): Promise<never> {
  process.stderr.write(`ralphkit: paused after ${count} writes (RALPHKIT_TEST_PAUSE_AFTER_WRITES)\n`);
  return new Promise(() => {
    setInterval(() => {}, 60_000);
  });
}
