// The runner's folders in the temp folder (verification checkouts, the checks' private HOME, a sandboxed agent's HOME
// layer, the reviewer's clone and answer folder, the merge queue's log files) are named after the loop and the runner process that made them: `ralph-verify-<loop>~<pid>~<start>-
// XXXXXX`. A runner killed with -9 cannot remove its own (with `setup: npm ci` each holds a node_modules), so the next
// start or resume in any loop, and `cleanup`, remove those whose runner is gone.
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAlive, ownProcessStart } from '../processes.js';

export type TempKind =
  | 'ralph-verify'
  | 'ralph-setup'
  | 'ralph-review'
  | 'ralph-home'
  | 'ralph-path'
  | 'ralph-agent-home'
  | 'ralphkit-log';
const KINDS: readonly TempKind[] = [
  'ralph-verify',
  'ralph-setup',
  'ralph-review',
  'ralph-home',
  'ralph-path',
  'ralph-agent-home',
  'ralphkit-log',
];

let owner = '-';

/** The loop this process runs, for the names of the folders it makes from now on. */
export function setTempOwner(loopId: string): void {
  owner = loopId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || '-';
}

/** A new private folder in the temp folder, named after its kind, this loop and this process. */
export function makeTempFolder(kind: TempKind): string {
  return mkdtempSync(path.join(tmpdir(), `${kind}-${owner}~${process.pid}~${ownProcessStart() ?? ''}-`));
}

export interface TempFolderName {
  kind: TempKind;
  loop: string;
  pid: number;
  start?: number;
}

/** Pure: what a temp folder's name says of who made it; null for a name the runner does not give (or an older one). */
export function parseTempFolderName(name: string): TempFolderName | null {
  const kind = KINDS.find((k) => name.startsWith(`${k}-`));
  if (!kind) return null;
  const m = /^(.+)~(\d+)~(\d*)-[^~]{6}$/.exec(name.slice(kind.length + 1));
  if (!m) return null;
  return { kind, loop: m[1], pid: Number(m[2]), ...(m[3] ? { start: Number(m[3]) } : {}) };
}

/**
 * Removes this user's runner folders in the temp folder whose runner is no longer alive (its pid gone, or reused by a
 * process that started at another time); returns what was removed, by kind. A folder that is not a plain folder of
 * this user is left alone.
 */
export function removeDeadTempFolders(dir = tmpdir()): { path: string; kind: TempKind; loop: string }[] {
  const removed: { path: string; kind: TempKind; loop: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const parsed = parseTempFolderName(name);
    if (!parsed || isAlive(parsed.pid, parsed.start)) continue;
    const full = path.join(dir, name);
    try {
      const st = lstatSync(full);
      if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid())) continue;
      rmSync(full, { recursive: true, force: true });
      removed.push({ path: full, kind: parsed.kind, loop: parsed.loop });
    } catch {
      /* gone meanwhile, or not ours to remove */
    }
  }
  return removed;
}

/** The lines `cleanup` and a start print for what removeDeadTempFolders removed. */
export function renderRemovedTempFolders(removed: readonly { kind: TempKind; loop: string }[]): string[] {
  if (!removed.length) return [];
  const loops = [...new Set(removed.map((r) => r.loop))].join(', ');
  const what = KINDS.flatMap((kind) => {
    const n = removed.filter((r) => r.kind === kind).length;
    return n ? [`${n} ${KIND_NAMES[kind][n === 1 ? 0 : 1]}`] : [];
  });
  const list = what.length > 1 ? `${what.slice(0, -1).join(', ')} and ${what.at(-1)}` : what[0];
  return [`removed ${list} of stopped runners from ${tmpdir()} (loop ${loops})`];
}

/** How a message names each kind, one and many. */
const KIND_NAMES: Record<TempKind, [string, string]> = {
  'ralph-verify': ['verification checkout', 'verification checkouts'],
  'ralph-setup': ['setup cache', 'setup caches'],
  'ralph-home': ["checks' HOME folder", "checks' HOME folders"],
  'ralph-path': ['PATH folder of --on-exit', 'PATH folders of --on-exit'],
  'ralph-agent-home': ["sandboxed agent's HOME layer", "sandboxed agents' HOME layers"],
  'ralph-review': ['reviewer folder', 'reviewer folders'],
  'ralphkit-log': ['log folder', 'log folders'],
};
