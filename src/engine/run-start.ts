// The start of a run, around the branch: a working tree with someone else's uncommitted work is refused before
// anything is touched, and stories that already say `passes: true` are claims the runner verifies before
// iteration 1, so a plan cannot end the loop with 0 on its own word.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../prd/types.js';
import { LoopExit } from './contracts.js';
import { verifyIteration } from './edges.js';
import { readLedger, summariseLedger } from './ledger.js';
import { loopDir, RUNS_DIR, type LoopState } from './runs.js';
import { isStartFile } from './run-branch.js';
import type { RunPaths } from './setup.js';
import type { Emit } from './events.js';
import type { LockedRun } from './run-deps.js';
import type { VerifyOutcome } from './verify.js';
import { readDirtyPaths } from './verify-git.js';

const SHOWN_DIRTY = 10;

/** Uncommitted paths that would refuse the start: everything but the runner's own files (plan, log, archive, .runs). */
export async function readStartDirtyPaths(paths: RunPaths): Promise<string[]> {
  const runs = `${RUNS_DIR.split(path.sep).join('/')}/`;
  return (await readDirtyPaths(paths.repoRoot)).filter((p) => !isStartFile(paths, p) && !p.startsWith(runs));
}

/**
 * Uncommitted work the loop did not make would be blamed on the agent (every claim rejected as uncommitted) or
 * swept into its commit. The plan, its log and its archive are the runner's to commit, so they do not count.
 */
export async function refuseDirtyTree(paths: RunPaths, resumed: LoopState | null, emit: Emit): Promise<void> {
  const dirty = await readStartDirtyPaths(paths);
  if (!dirty.length) return;
  const more = dirty.length > SHOWN_DIRTY ? `\n  ... and ${dirty.length - SHOWN_DIRTY} more` : '';
  // An iteration cut short (Ctrl-C, cancel, kill -9) leaves the agent's half-done work; repeating that iteration is
  // how it gets finished and committed, so it is not in the way.
  if (resumed && !resumed.iterationDone && resumed.iteration > 0) {
    emit({ type: 'warn', message: `uncommitted changes from the interrupted iteration ${resumed.iteration} stay for the agent to finish and commit: ${dirty.slice(0, SHOWN_DIRTY).join(', ')}${more ? ', ...' : ''}` });
    return;
  }
  throw new LoopExit(
    2,
    `uncommitted changes in the working tree; the agent would be blamed for them:\n  ${dirty.slice(0, SHOWN_DIRTY).join('\n  ')}${more}\nnot starting`,
    renderDirtyHint(dirty),
  );
}

const LOOP_FILE_ROOTS = ['ralph/', '.claude/skills/', '.agents/skills/'];

/**
 * What to type for a dirty tree at start. Stashing would take the loop's own files (ralph.sh itself) with it,
 * so it is offered only when none of them is among the dirty paths.
 */
export function renderDirtyHint(dirty: readonly string[]): string {
  const loopFiles = dirty.filter((p) => LOOP_FILE_ROOTS.some((root) => p.startsWith(root)));
  if (loopFiles.length === dirty.length) {
    const folders = [...new Set(dirty.map((p) => p.split('/')[0]))].sort();
    const message = dirty.includes('ralph/ralph.mjs') ? 'Add the Ralph loop' : 'Update the Ralph loop files';
    return `these are the loop's own files (ralph/, skills): commit them with \`git add ${folders.join(' ')} && git commit -m "${message}"\`, then start again`;
  }
  if (loopFiles.length) {
    return 'commit them (the loop\'s own files among them), e.g. `git add -A && git commit -m "Plan and loop files"`, then start again; do not stash them: ralph/ would go with them';
  }
  return 'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again';
}

/**
 * Verifies the stories that say `passes: true` without this loop's verdict behind them, in one pass (plan
 * checks run once), recorded as iteration 0. Rejected ones are set back to false with a note, as after any
 * iteration. Returns null when there was nothing to verify.
 */
export async function verifyStartClaims(run: LockedRun, state: LoopState, signal: AbortSignal): Promise<VerifyOutcome | null> {
  const { paths, emit, options } = run;
  const prd = JSON.parse(readFileSync(paths.prd, 'utf8')) as Prd;
  const settled = readSettledStories(paths.repoRoot, state);
  const claims = prd.userStories.filter((s) => s.passes === true && !settled.has(s.id)).map((s) => s.id);
  if (!claims.length) return null;
  emit({ type: 'info', message: `${claims.length} stor${claims.length === 1 ? 'y says' : 'ies say'} passes: true (${claims.join(', ')}); verifying before the first iteration` });
  const before = { ...prd, userStories: prd.userStories.map((s) => (claims.includes(s.id) ? { ...s, passes: false } : s)) };
  const dir = loopDir(paths.repoRoot, state.id);
  const outcome = await verifyIteration({
    topLevel: realpathSync(paths.repoRoot),
    repoRoot: paths.repoRoot, prdPath: paths.prd, progressPath: paths.progress, ledgerPath: path.join(dir, 'ledger.jsonl'),
    loopId: state.id, iteration: 0, prdBefore: `${JSON.stringify(before, null, 2)}\n`, checkTimeoutMs: options.checkTimeoutMs, inWorktree: options.verifyInWorktree,
    log: (level, message) => emit({ type: level, iteration: 0, message }),
    signal,
  });
  emit({ type: 'verify', iteration: 0, verdicts: outcome.verdicts, restored: outcome.restored, allPass: outcome.allPass });
  return outcome;
}

/**
 * Stories a resumed loop has already settled: its newest verdict is verified or unverified, or the iteration it
 * is about to repeat will verify them anyway (they were open in that iteration's snapshot).
 */
function readSettledStories(repoRoot: string, state: LoopState): Set<string> {
  const dir = loopDir(repoRoot, state.id);
  const { stories } = summariseLedger(readLedger(path.join(dir, 'ledger.jsonl')));
  const settled = new Set(Object.entries(stories).filter(([, s]) => s.status !== 'rejected').map(([id]) => id));
  if (!state.iterationDone && state.iteration > 0) {
    try {
      const snap = JSON.parse(readFileSync(path.join(dir, 'prd-before.json'), 'utf8')) as { iteration: number; text: string };
      if (snap.iteration === state.iteration) for (const s of (JSON.parse(snap.text) as Prd).userStories) if (s.passes !== true) settled.add(s.id);
    } catch {
      /* no snapshot: the iteration never reached the agent */
    }
  }
  return settled;
}
