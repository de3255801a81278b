// Reads what the dashboard shows, fresh from disk: the progress log and the loops under ralph/.runs, the bodies of
// /api/progress and /api/loops and of the matching server-sent events; every loop's ledger, for the cards; where the
// dashboard reads from. The plan itself, /api/prd, is prd-body.ts.
import { closeSync, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
import { readTextOrNull } from '../util/read.js';
import path from 'node:path';
import { choosePlanFile, progressPathFor } from '../prd/plan-location.js';
import type { ParallelState } from '../engine/store/state-types.js';
import { parseLedger, type LedgerLine } from '../engine/store/ledger.js';
import { readLoopSummaries, type LoopSummary } from '../engine/store/summaries.js';
import { str } from './ledger.js';
import { parseProgress, parseProgressEnds, type ProgressLog } from './progress-log.js';

/** Where the dashboard reads from; all absolute. */
export interface ViewPaths {
  cwd: string;
  prd: string;
  progress: string;
  runs: string;
}

export interface ProgressSnapshot {
  file: string;
  exists: boolean;
  /** The file's size in bytes. */
  size: number;
  /** Bytes between the head and the newest entries that are not in `log` (0: the whole file is). */
  omittedBytes: number;
  log: ProgressLog;
}

/**
 * The most of progress.txt the dashboard reads and sends: the log only grows, and every change is pushed to every
 * open page. A bigger file is shown as its head (title, pinned patterns) and its newest entries.
 */
export const PROGRESS_HEAD_BYTES = 64 * 1024;
export const PROGRESS_TAIL_BYTES = 192 * 1024;

export interface LoopInfo {
  id: string;
  status: string;
  iteration: number | null;
  maxIterations: number | null;
  agent: string | null;
  prd: string | null;
  costUsd: number | null;
  startedAt: string | null;
  updatedAt: string | null;
  exitCode: number | null;
  pid: number | null;
  /** Why the loop ended (or what it waits for), when the engine said. */
  message: string | null;
  /** The state says running and its process is still there. */
  alive: boolean;
  /** A loop inside a Claude Code session (/ralph-loop): its process is Claude Code, each iteration a stop. */
  inSession: boolean;
  /** A --parallel run's workers, merge queue, merged and given-up stories, as its state.json has them. */
  parallel: ParallelState | null;
}

export interface LoopsSnapshot {
  loops: LoopInfo[];
}

export function resolveViewPaths(cwd: string, prd?: string): ViewPaths {
  const root = path.resolve(cwd);
  // Without --prd, the plan the loop would find: ralph/prd.json, or the original layout's (prd/plan-location.ts).
  const prdPath = path.resolve(root, prd ?? choosePlanFile(root).rel);
  return {
    cwd: root,
    prd: prdPath,
    // The runner keeps the log beside the plan it runs, one per plan (progressPathFor).
    progress: progressPathFor(prdPath),
    runs: path.join(root, 'ralph/.runs'),
  };
}

export function readProgressSnapshot(paths: ViewPaths): ProgressSnapshot {
  const file = path.relative(paths.cwd, paths.progress);
  const ends = readEnds(paths.progress);
  if (!ends) return { file, exists: false, size: 0, omittedBytes: 0, log: parseProgress('') };
  if (!ends.tail)
    return { file, exists: true, size: ends.size, omittedBytes: 0, log: parseProgress(ends.head.toString('utf8')) };
  const tail = ends.tail.toString('utf8');
  const { log, skipped } = parseProgressEnds(ends.head.toString('utf8'), tail);
  const tailShown = ends.tail.length - Buffer.byteLength(tail.slice(0, skipped));
  return { file, exists: true, size: ends.size, omittedBytes: ends.size - ends.head.length - tailShown, log };
}

/** The whole file when it is small, else its first and last bytes, each cut on a line end (so on whole characters). */
function readEnds(file: string): { size: number; head: Buffer; tail: Buffer | null } | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= PROGRESS_HEAD_BYTES + PROGRESS_TAIL_BYTES) return { size, head: readAt(fd, 0, size), tail: null };
    const head = readAt(fd, 0, PROGRESS_HEAD_BYTES);
    const tail = readAt(fd, size - PROGRESS_TAIL_BYTES, PROGRESS_TAIL_BYTES);
    return { size, head: head.subarray(0, head.lastIndexOf(0x0a) + 1), tail: tail.subarray(tail.indexOf(0x0a) + 1) };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Up to `length` bytes from `position`; fewer when the file shrank meanwhile. */
function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  for (let n = 1; got < length && n > 0; got += n) n = readSync(fd, buf, got, length - got, position + got);
  return buf.subarray(0, got);
}

/** The loops exactly as `ralphkit status` reads them: same list, order, liveness and "dead". */
export function readLoopsSnapshot(paths: ViewPaths): LoopsSnapshot {
  return { loops: readLoopSummaries(paths.cwd).map(toLoopInfo) };
}

/** Every line of every loop's ledger, oldest first; the engine's parser, so `status` and the page read the same lines. */
export function readLedgers(paths: ViewPaths): LedgerLine[] {
  const all = listRuns(paths.runs).flatMap((id) =>
    parseLedger(readTextOrNull(path.join(paths.runs, id, 'ledger.jsonl')) ?? '').map((l) =>
      l.loop ? l : { ...l, loop: id },
    ),
  );
  return all
    .map((l, i) => ({ l, i }))
    .sort((a, b) => String(a.l.time).localeCompare(String(b.l.time)) || a.i - b.i)
    .map(({ l }) => l);
}

/** The run folders, for the watcher too: a folder with a ledger but no state.json yet still counts. */
export function listRuns(runs: string): string[] {
  try {
    return readdirSync(runs, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && d.name !== 'locks') // locks/: one file per plan, not a loop
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

// The fields the page reads, under the names it reads them by; what status leaves empty ('') travels as null.
function toLoopInfo(l: LoopSummary): LoopInfo {
  return {
    id: l.id,
    status: l.status,
    iteration: l.iteration,
    maxIterations: l.maxIterations,
    agent: str(l.agent),
    prd: str(l.prd),
    costUsd: l.costUsd,
    startedAt: str(l.startedAt),
    updatedAt: str(l.updatedAt),
    exitCode: l.exitCode,
    pid: l.pid,
    message: l.message ?? null,
    alive: l.alive,
    inSession: l.inSession === true,
    parallel: l.parallel ?? null,
  };
}
