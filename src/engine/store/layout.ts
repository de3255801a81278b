// Every path the runner keeps under ralph/.runs/ (gitignored), in one table: one folder per loop with its state,
// ledger, iteration logs and cancel marker, the locks, and the few files shared by all loops.
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';

export const RUNS_DIR = path.join('ralph', '.runs');

/** What a loop id (and --name) may be: it names a folder under ralph/.runs/ and must never climb out of it. */
export const LOOP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

// A loop in its own git worktree (--worktree, git/worktree.ts) keeps its records in the main tree's ralph/.runs/,
// where status, cancel, --resume and the dashboard look: its working tree's root is mapped to the main tree's.
const recordRoots = new Map<string, string>();

/** From now on, records asked for under `treeRoot` (any of its spellings) are kept under `mainRoot`. */
export function keepRecordsIn(treeRoots: string[], mainRoot: string): void {
  for (const root of treeRoots) recordRoots.set(path.resolve(root), mainRoot);
}

/** The main tree whose ralph/.runs/ holds the records of the loop working in `repoRoot`. */
export function recordsRoot(repoRoot: string): string {
  return recordRoots.get(path.resolve(repoRoot)) ?? repoRoot;
}

export function runsDir(repoRoot: string): string {
  return path.join(recordsRoot(repoRoot), RUNS_DIR);
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

/** One lock per working tree, whatever the plan; a --worktree loop's tree has its own. */
export function treeLockPath(repoRoot: string): string {
  const main = recordsRoot(repoRoot);
  if (main === repoRoot) return path.join(runsDir(repoRoot), 'locks', 'worktree.lock');
  return path.join(runsDir(repoRoot), 'locks', `worktree-${shortHash(path.resolve(repoRoot))}.lock`);
}

/**
 * The branch the last loop on this plan file ran on, so a new branchName archives the old log (store/progress.ts).
 * Kept per plan (`prdRel`, relative to its tree), so a loop on another plan does not look like a branch change.
 */
export function lastBranchPath(repoRoot: string, prdRel: string): string {
  return path.join(runsDir(repoRoot), `last-branch${planSuffix(prdRel)}`);
}

/** The plan as the last loop on this plan file left it. */
export function lastPlanPath(repoRoot: string, prdRel: string): string {
  return path.join(runsDir(repoRoot), `last-plan${planSuffix(prdRel)}.json`);
}

// The default plan (either layout) keeps the names older runners wrote; any other plan gets its own pair.
function planSuffix(prdRel: string): string {
  const rel = prdRel.split(path.sep).join('/');
  return rel === 'ralph/prd.json' || rel === 'scripts/ralph/prd.json' ? '' : `-${shortHash(rel)}`;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export function newLoopId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}
