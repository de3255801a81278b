// Every path the runner keeps under ralph/.runs/ (gitignored), in one table: one folder per loop with its state,
// ledger, iteration logs and cancel marker, the locks, and the few files shared by all loops.
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';

export const RUNS_DIR = path.join('ralph', '.runs');

/** What a loop id (and --name) may be: it names a folder under ralph/.runs/ and must never climb out of it. */
export const LOOP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function runsDir(repoRoot: string): string {
  return path.join(repoRoot, RUNS_DIR);
}

export function loopDir(repoRoot: string, id: string): string {
  return path.join(runsDir(repoRoot), id);
}

/** ralph/.runs/<id>/state.json (SPEC §4). */
export function statePath(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'state.json');
}

/** ralph/.runs/<id>/ledger.jsonl: the evidence behind every verdict (store/ledger.ts). */
export function ledgerPath(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'ledger.jsonl');
}

/** ralph/.runs/<id>/iteration-<n>.log: what the agent printed in iteration n. */
export function iterationLogPath(repoRoot: string, id: string, iteration: number): string {
  return path.join(loopDir(repoRoot, id), `iteration-${iteration}.log`);
}

/** `ralphkit cancel` leaves this marker before signalling, so the runner records cancelled, not interrupted. */
export function cancelMarker(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'cancel');
}

/** One lock per plan file, named by a hash of its absolute path. */
export function lockPath(repoRoot: string, prdAbs: string): string {
  const hash = createHash('sha256').update(prdAbs).digest('hex').slice(0, 16);
  return path.join(runsDir(repoRoot), 'locks', `${hash}.lock`);
}

/** One lock per working tree, whatever the plan. */
export function treeLockPath(repoRoot: string): string {
  return path.join(runsDir(repoRoot), 'locks', 'worktree.lock');
}

/** The branch the last loop ran on, so a new branchName archives the old log (store/progress.ts). */
export function lastBranchPath(repoRoot: string): string {
  return path.join(runsDir(repoRoot), 'last-branch');
}

/** The plan as the last loop left it. */
export function lastPlanPath(repoRoot: string): string {
  return path.join(runsDir(repoRoot), 'last-plan.json');
}

export function newLoopId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}
