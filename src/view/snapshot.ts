// Reads what the dashboard shows, fresh from disk: the plan with each story's verification state,
// the progress log, and the loops under ralph/.runs. These are the bodies of /api/prd,
// /api/progress and /api/loops, and of the matching server-sent events. A card is verified only from the
// newest sealed verdict record (refs/notes/ralphkit, checked with the key of $RALPH_KEY_DIR or ~/.config/ralphkit).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { choosePlanFile } from '../prd/plan-location.js';
import type { Prd } from '../prd/types.js';
import { parseLedger, type LedgerLine } from '../engine/store/ledger.js';
import { readLoopSummaries, type LoopSummary } from '../engine/store/summaries.js';
import { pickNewestRecord, readVerdictRecordsSync } from '../engine/store/verdict-record.js';
import { planBoard, type BoardPlan } from './board.js';
import { str } from './ledger.js';
import { parseProgress, type ProgressLog } from './progress-log.js';

/** Where the dashboard reads from; all absolute. */
export interface ViewPaths {
  cwd: string;
  prd: string;
  progress: string;
  runs: string;
}

export interface PrdSnapshot extends Partial<BoardPlan> {
  /** The plan's path relative to the repository. */
  file: string;
  exists: boolean;
  /** Why the plan could not be shown (unreadable JSON, wrong shape); the page keeps the last good one. */
  error: string | null;
  prd: Prd | null;
}

export interface ProgressSnapshot {
  file: string;
  exists: boolean;
  text: string;
  log: ProgressLog;
}

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
    // The runner keeps the log beside the plan it runs, so a plan elsewhere has its own log.
    progress: path.join(path.dirname(prdPath), 'progress.txt'),
    runs: path.join(root, 'ralph/.runs'),
  };
}

export function readPrdSnapshot(paths: ViewPaths): PrdSnapshot {
  const file = path.relative(paths.cwd, paths.prd) || paths.prd;
  const text = readText(paths.prd);
  if (text === null) return { file, exists: false, error: null, prd: null };
  let prd: Prd;
  try {
    prd = JSON.parse(text) as Prd;
  } catch (err) {
    return { file, exists: true, error: `${file} is not valid JSON: ${(err as Error).message}`, prd: null };
  }
  const shapeError = checkShape(prd);
  if (shapeError) return { file, exists: true, error: `${file}: ${shapeError}`, prd: null };
  const sealed = pickNewestRecord(readVerdictRecordsSync(paths.cwd))?.stories ?? {};
  return { file, exists: true, error: null, prd, ...planBoard(prd, readLedgers(paths), sealed) };
}

// Only what the page needs to draw; `ralphkit validate` is the place for a full report.
function checkShape(prd: unknown): string | null {
  if (!prd || typeof prd !== 'object' || Array.isArray(prd)) return 'the plan must be a JSON object';
  const stories = (prd as Prd).userStories;
  if (!Array.isArray(stories)) return 'userStories must be a list';
  const bad = stories.findIndex((s) => !s || typeof s !== 'object' || typeof s.id !== 'string' || !s.id);
  if (bad >= 0) return `userStories[${bad}] needs an id (run ralphkit validate for details)`;
  return null;
}

export function readProgressSnapshot(paths: ViewPaths): ProgressSnapshot {
  const text = readText(paths.progress);
  return { file: path.relative(paths.cwd, paths.progress), exists: text !== null, text: text ?? '', log: parseProgress(text ?? '') };
}

/** The loops exactly as `ralphkit status` reads them: same list, order, liveness and "dead". */
export function readLoopsSnapshot(paths: ViewPaths): LoopsSnapshot {
  return { loops: readLoopSummaries(paths.cwd).map(toLoopInfo) };
}

/** Every line of every loop's ledger, oldest first; the engine's parser, so `status` and the page read the same lines. */
export function readLedgers(paths: ViewPaths): LedgerLine[] {
  const all = listRuns(paths.runs).flatMap((id) => parseLedger(readText(path.join(paths.runs, id, 'ledger.jsonl')) ?? '').map((l) => (l.loop ? l : { ...l, loop: id })));
  return all.map((l, i) => ({ l, i })).sort((a, b) => String(a.l.time).localeCompare(String(b.l.time)) || a.i - b.i).map(({ l }) => l);
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
  };
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
