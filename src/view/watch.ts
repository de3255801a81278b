// Tells the server when something the dashboard shows may have changed on disk.
// fs.watch on the folders gives the fast path; a poll that stats the few files is the safety net,
// because fs.watch misses atomic renames on some platforms and network file systems.
import { watch, type FSWatcher } from 'node:fs';
import { statKey } from '../util/read.js';
import path from 'node:path';
import { listRuns, type ViewPaths } from './snapshot.js';

export interface ChangeWatcherOptions {
  /** Poll interval; a change is noticed within this even when fs.watch says nothing. */
  pollMs?: number;
  /** Quiet time after a watch event before reporting, so one save (temp file + rename) is one change. */
  debounceMs?: number;
  /** More state to compare on each poll (e.g. which loop processes are alive). */
  extraSignature?: () => string;
  /** false: poll only (tests use it to prove the fallback alone keeps the page current). */
  fsWatch?: boolean;
}

export interface ChangeWatcher {
  close(): void;
}

/** Most recent runs that get their own fs.watch; older ones are still polled. */
const WATCHED_RUNS = 32;

export function watchChanges(
  paths: ViewPaths,
  onChange: () => void,
  options: ChangeWatcherOptions = {},
): ChangeWatcher {
  const { pollMs = 500, debounceMs = 25, extraSignature = () => '', fsWatch = true } = options;
  const watchers = new Map<string, FSWatcher>();
  let last = signature(paths) + extraSignature();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const fire = () => {
    timer = null;
    if (closed) return;
    last = signature(paths) + extraSignature();
    onChange();
  };
  const schedule = () => {
    if (!closed && !timer) timer = setTimeout(fire, debounceMs);
  };
  const tick = () => {
    if (fsWatch) syncWatchers(paths, watchers, schedule);
    if (signature(paths) + extraSignature() !== last) schedule();
  };

  if (fsWatch) syncWatchers(paths, watchers, schedule);
  const poll = setInterval(tick, pollMs);
  return {
    close() {
      closed = true;
      clearInterval(poll);
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

/** The files of a loop folder the dashboard reads; its iteration logs grow all the time and are not among them. */
const RUN_FILES = ['state.json', 'ledger.jsonl'];

/**
 * Folder → which file names in it matter (null: all). Atomic writes rename a temp file whose name
 * starts with the target's, so a prefix match catches both halves of the rename.
 */
export function watchedDirs(paths: ViewPaths): Map<string, string[] | null> {
  const dirs = new Map<string, string[] | null>();
  const add = (dir: string, names: string[] | null) => {
    const known = dirs.get(dir);
    dirs.set(dir, known === null || names === null ? null : [...(known ?? []), ...names]);
  };
  add(path.dirname(paths.prd), [path.basename(paths.prd)]);
  add(path.dirname(paths.progress), [path.basename(paths.progress)]);
  add(paths.runs, null); // a new loop folder appears
  for (const id of listRuns(paths.runs).slice(-WATCHED_RUNS)) add(path.join(paths.runs, id), RUN_FILES);
  return dirs;
}

export function isRelevant(names: string[] | null, filename: string | null): boolean {
  if (names === null || !filename) return true; // some platforms do not say which file changed
  const base = path.basename(filename);
  return names.some((n) => base === n || base.startsWith(`${n}.`) || base.startsWith(`.${n}.`));
}

function syncWatchers(paths: ViewPaths, watchers: Map<string, FSWatcher>, onEvent: () => void): void {
  const wanted = watchedDirs(paths);
  for (const [dir, w] of watchers) {
    if (!wanted.has(dir)) {
      w.close();
      watchers.delete(dir);
    }
  }
  for (const [dir, names] of wanted) {
    if (watchers.has(dir)) continue;
    try {
      const w = watch(dir, { persistent: false }, (_event, filename) => {
        if (isRelevant(names, filename === null ? null : String(filename))) onEvent();
      });
      w.on('error', () => {
        w.close();
        watchers.delete(dir); // the folder went away; the next poll re-adds it if it comes back
      });
      watchers.set(dir, w);
    } catch {
      // Missing folder (ralph/.runs before the first loop): the poll notices when it appears.
    }
  }
}

/** mtime, size and inode of every file the dashboard reads; any difference means "re-read". */
export function signature(paths: ViewPaths): string {
  const runFiles = listRuns(paths.runs).flatMap((id) =>
    ['state.json', 'ledger.jsonl'].map((f) => path.join(paths.runs, id, f)),
  );
  return [paths.prd, paths.progress, paths.runs, ...runFiles].map(statKey).join('|');
}
