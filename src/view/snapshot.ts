// Reads what the dashboard shows, fresh from disk: the plan with each story's verification state,
// the progress log, and the loops under ralph/.runs. These are the bodies of /api/prd,
// /api/progress and /api/loops, and of the matching server-sent events.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../prd/types.js';
import { parseLedger, type LedgerEntry } from './ledger.js';
import { planBoard, type BoardPlan } from './board.js';
import { parseProgress, type ProgressLog } from './progress-log.js';
import { isAlive } from '../engine/runs.js';

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
  const prdPath = path.resolve(root, prd ?? 'ralph/prd.json');
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
  return { file, exists: true, error: null, prd, ...planBoard(prd, readLedgers(paths)) };
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

export function readLoopsSnapshot(paths: ViewPaths): LoopsSnapshot {
  const loops = listRuns(paths.runs)
    .map((id) => readLoop(paths.runs, id))
    .filter((l): l is LoopInfo => l !== null);
  loops.sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '')); // as `ralphkit status` lists them
  return { loops };
}

/** Every ledger line of every loop, oldest first. */
export function readLedgers(paths: ViewPaths): LedgerEntry[] {
  const all = listRuns(paths.runs).flatMap((id) => parseLedger(readText(path.join(paths.runs, id, 'ledger.jsonl')) ?? '', id));
  return all.map((e, i) => ({ e, i })).sort((a, b) => a.e.time.localeCompare(b.e.time) || a.i - b.i).map(({ e }) => e);
}

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

function readLoop(runs: string, id: string): LoopInfo | null {
  const text = readText(path.join(runs, id, 'state.json'));
  if (text === null) return null;
  let s: Record<string, unknown>;
  try {
    s = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const pid = num(s.pid);
  const status = str(s.status) ?? 'unknown';
  const alive = status === 'running' && pid !== null && isAlive(pid);
  return {
    id: str(s.id) ?? id,
    // Same words as `ralphkit status`: a runner killed with -9 never wrote its end.
    status: status === 'running' && !alive ? 'dead' : status,
    iteration: num(s.iteration),
    maxIterations: num(s.maxIterations),
    agent: str(s.agent),
    prd: str(s.prd),
    costUsd: num(s.costUsd),
    startedAt: str(s.startedAt),
    updatedAt: str(s.updatedAt),
    exitCode: num(s.exitCode),
    pid,
    message: str(s.message),
    alive,
  };
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
