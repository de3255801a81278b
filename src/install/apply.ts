// The one module that writes an install plan: backups first, then each file atomically, the manifest last.
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../util/atomic.js';
import { renderManifest } from './plan.js';
import { removeStaleTempFiles } from './disk.js';
import type { InstallPlan } from './types.js';

export interface ApplyInput {
  plan: InstallPlan;
  /** Repository-relative path → absolute path to write (symlinks already resolved and checked). */
  real: ReadonlyMap<string, string>;
  contents: ReadonlyMap<string, Buffer>;
  modes: ReadonlyMap<string, number | undefined>;
  /** The user's current bytes of each file that will be backed up. */
  current: ReadonlyMap<string, Buffer>;
  /** Test hook: after this many writes, stop and wait to be killed (RALPHKIT_TEST_PAUSE_AFTER_WRITES). */
  pauseAfterWrites?: number;
}

export interface ApplyResult {
  written: string[];
  backups: { path: string; backup: string }[];
  cleanedTempFiles: string[];
}

// fix-mode rewrites the same bytes: the atomic write is what sets the mode, on every platform alike.
const WRITES = new Set(['create', 'upgrade', 'fix-mode', 'overwrite']);

export async function applyInstall(input: ApplyInput): Promise<ApplyResult> {
  const { plan, real } = input;
  const toWrite = plan.items.filter((i) => WRITES.has(i.action));
  const cleanedTempFiles = removeStaleTempFiles([...toWrite.map((i) => real.get(i.path)!), real.get(plan.manifest.path)!]);
  let count = 0;
  const write = async (abs: string, data: Buffer | string, mode?: number) => {
    mkdirSync(path.dirname(abs), { recursive: true });
    atomicWriteFileSync(abs, data, mode);
    count++;
    if (count === input.pauseAfterWrites) await pauseForTest(count);
  };

  // Every backup exists before the first file it protects is replaced.
  const backups: ApplyResult['backups'] = [];
  for (const item of toWrite.filter((i) => i.backup)) {
    const original = real.get(item.path)!;
    await write(real.get(item.backup!)!, input.current.get(item.path)!, statSync(original).mode & 0o777);
    backups.push({ path: item.path, backup: item.backup! });
  }
  for (const item of toWrite) await write(real.get(item.path)!, input.contents.get(item.path)!, input.modes.get(item.path));
  if (plan.manifest.action !== 'identical') await write(real.get(plan.manifest.path)!, renderManifest(plan.manifest.next));
  return { written: toWrite.map((i) => i.path), backups, cleanedTempFiles };
}

async function pauseForTest(count: number): Promise<never> {
  process.stderr.write(`ralphkit: paused after ${count} writes (RALPHKIT_TEST_PAUSE_AFTER_WRITES)\n`);
  return new Promise(() => {
    setInterval(() => {}, 60_000);
  });
}
