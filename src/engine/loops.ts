// `status` and `cancel`: read the loops of a repository from ralph/.runs/ and stop a live one. Shared by
// ralph.mjs and `ralphkit status|cancel` (and the dashboard's /api/loops).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LoopExit } from './contracts.js';
import { signalGroup } from './agent-process.js';
import { isLive, isAlive, loopDir, readAllStates, readState, writeState, cancelMarker, type LoopState } from './runs.js';
import { readLedger, summariseLedger } from './ledger.js';

export interface LoopSummary {
  id: string;
  status: string;
  iteration: number;
  maxIterations: number;
  agent: string;
  alive: boolean;
  costUsd: number;
  prd: string;
  storiesPassed: number | null;
  storiesTotal: number | null;
  verified: number;
  unverified: number;
  rejected: number;
  startedAt: string;
  updatedAt: string;
  exitCode: number | null;
  message?: string;
}

export function readLoopSummaries(repoRoot: string): LoopSummary[] {
  return readAllStates(repoRoot).map((s) => summarise(repoRoot, s));
}

function summarise(repoRoot: string, s: LoopState): LoopSummary {
  const alive = isLive(s);
  const stories = readStories(path.resolve(repoRoot, s.prd));
  const { counts } = summariseLedger(readLedger(path.join(loopDir(repoRoot, s.id), 'ledger.jsonl')));
  return {
    id: s.id,
    // A runner killed with -9 never wrote its end: say so rather than "running".
    status: s.status === 'running' && !alive ? 'dead' : s.status,
    iteration: s.iteration,
    maxIterations: s.maxIterations,
    agent: s.agent,
    alive,
    costUsd: s.costUsd ?? 0,
    prd: s.prd,
    storiesPassed: stories ? stories.filter((x) => x.passes === true).length : null,
    storiesTotal: stories ? stories.length : null,
    ...counts,
    startedAt: s.startedAt,
    updatedAt: s.updatedAt,
    exitCode: s.exitCode,
    ...(s.message ? { message: s.message } : {}),
  };
}

function readStories(file: string): { passes?: unknown }[] | null {
  try {
    const prd = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(prd?.userStories) ? prd.userStories : null;
  } catch {
    return null;
  }
}

export function renderLoopTable(loops: LoopSummary[]): string {
  if (!loops.length) return 'no loops yet in ralph/.runs/ (start one with ./ralph/ralph.sh)\n';
  const rows = [['ID', 'STATUS', 'ITER', 'AGENT', 'ALIVE', 'COST', 'STORIES', 'VERIFIED', 'UNVERIFIED', 'REJECTED']];
  for (const l of loops) {
    rows.push([
      l.id, l.status, `${l.iteration}/${l.maxIterations}`, l.agent.length > 24 ? `${l.agent.slice(0, 23)}…` : l.agent,
      l.alive ? 'yes' : 'no', `$${l.costUsd.toFixed(2)}`, l.storiesTotal === null ? '?' : `${l.storiesPassed}/${l.storiesTotal}`,
      String(l.verified), String(l.unverified), String(l.rejected),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n') + '\n';
}

export interface CancelResult {
  id: string;
  /** signalled: a live runner was told to stop · marked: its runner was gone, the state now says cancelled · none: it had ended. */
  action: 'signalled' | 'marked' | 'none';
  status: string;
}

/** Stops a live loop (the runner records `cancelled`), or marks a dead one cancelled. */
export function cancelLoop(repoRoot: string, id: string): CancelResult {
  const state = readState(repoRoot, id);
  if (!state) throw new LoopExit(2, `no loop named "${id}" in ralph/.runs/`, 'list loops with: npx ralphkit status');
  if (state.status !== 'running') return { id, action: 'none', status: state.status };
  writeFileSync(cancelMarker(repoRoot, id), `${new Date().toISOString()}\n`);
  if (isAlive(state.pid)) {
    process.kill(state.pid, 'SIGTERM');
    return { id, action: 'signalled', status: 'cancelled' };
  }
  // The runner died without cleaning up (kill -9): its agent may still be running in its own group.
  if (state.agentPid && isAlive(state.agentPid)) signalGroup(state.agentPid, 'SIGKILL');
  writeState(repoRoot, { ...state, status: 'cancelled', agentPid: undefined, updatedAt: new Date().toISOString() });
  return { id, action: 'marked', status: 'cancelled' };
}

export function renderCancelResult(r: CancelResult): string {
  return r.action === 'marked' ? `loop ${r.id} was not running any more (its runner is gone); marked cancelled` : `loop ${r.id} is not running (${r.status}); nothing to cancel`;
}

/** After signalling: wait (bounded) until the runner has recorded its end, and return the final status. */
export async function waitForLoopEnd(repoRoot: string, id: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readState(repoRoot, id);
    if (!state || state.status !== 'running' || !isAlive(state.pid) || Date.now() > deadline) return state?.status ?? 'unknown';
    await new Promise((r) => setTimeout(r, 100));
  }
}
