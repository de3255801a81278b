// Claims at start: stories that already say `passes: true` without the runner's record behind them are verified
// before iteration 1, so a plan cannot end the loop with 0 on its own word; and an iteration whose checks were
// interrupted is finished before any agent runs again.
import { readFileSync } from 'node:fs';
import type { Prd } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { verifyIteration } from './verify.js';
import { afterVerification, buildDeps, loopConfig, verifyInput } from '../run/deps.js';
import type { RunTrust } from './trust.js';
import { headSha } from '../git/git.js';
import { finishInterruptedIteration } from '../core/loop.js';
import type { BudgetGate, VerifyResult, LoopState, RunContext } from '../types.js';

/**
 * Verifies the stories that say `passes: true` without the runner's own record behind them (the baseline: none for a
 * new loop, the plan as last settled for a resumed one), in one pass (plan checks run once), recorded as iteration 0.
 * Rejected ones are set back to false with a note, as after any iteration. A resumed loop first finishes an iteration
 * whose checks were interrupted. Returns null when there was nothing to verify.
 */
export async function verifyStartClaims(run: RunContext, state: LoopState, signal: AbortSignal, trust: RunTrust): Promise<VerifyResult | null> {
  const { paths, emit } = run;
  const finished = await finishResumedIteration(run, state, signal, trust);
  const prd = JSON.parse(readFileSync(paths.prd, 'utf8')) as Prd;
  const settled = new Set(trust.baseline ? (JSON.parse(trust.baseline) as Prd).userStories.filter((s) => s.passes === true).map((s) => s.id) : []);
  // A story set aside is never verified, whatever its passes says (prd/skip.ts).
  const claims = prd.userStories.filter((s) => s.passes === true && !isSkipped(s) && !settled.has(s.id)).map((s) => s.id);
  if (!claims.length) return finished;
  emit({ type: 'info', message: `${claims.length} stor${claims.length === 1 ? 'y says' : 'ies say'} passes: true (${claims.join(', ')}); verifying before the first iteration` });
  const before = trust.baseline ?? `${JSON.stringify({ ...prd, userStories: prd.userStories.map((s) => (claims.includes(s.id) ? { ...s, passes: false } : s)) }, null, 2)}\n`;
  const outcome = await verifyIteration({ ...verifyInput(run, state, trust, 0, signal), prdBefore: before });

  await afterVerification(run, state.id, trust, outcome, await headSha(paths.repoRoot));
  emit({ type: 'verify', iteration: 0, verdicts: outcome.verdicts, restored: outcome.restored, allPass: outcome.allPass });
  return outcome;
}

// The budget was settled at start, and finishing an iteration runs no agent.
const NO_BUDGET: BudgetGate = { beforeStart: async () => {}, beforeIteration: async () => 'continue' };

/**
 * Ctrl-C (or kill -9) while the runner checked the claims of iteration N left them pending. They are decided
 * now, as iteration N, before any agent runs: a claim that passes is accepted, one that fails is rejected with
 * its note, and the loop's decision (every story passes, STUCK, no progress, last iteration) is taken as if
 * the iteration had never been interrupted. A second interrupt here again decides nothing (exit 130). The claims
 * are the flips against the runner's own baseline, so nothing in ralph/.runs/ decides which they are.
 */
async function finishResumedIteration(run: RunContext, state: LoopState, signal: AbortSignal, trust: RunTrust): Promise<VerifyResult | null> {
  if (state.iterationDone || state.iteration < 1 || !state.verifying) return null;
  const base = trust.baseline ? (JSON.parse(trust.baseline) as Prd) : null;
  const now = JSON.parse(readFileSync(run.paths.prd, 'utf8')) as Prd;
  const open = new Set(base?.userStories.filter((s) => s.passes !== true).map((s) => s.id) ?? now.userStories.map((s) => s.id));
  const pending = now.userStories.filter((s) => s.passes === true && !isSkipped(s) && open.has(s.id)).map((s) => s.id);
  const what = pending.length ? `checking ${pending.join(', ')} now` : 'finishing its verification now';
  run.emit({ type: 'info', message: `iteration ${state.iteration} was interrupted while its claims were checked; ${what}, before the agent runs again` });
  // buildDeps wants a controller; this one follows the run's signal, so Ctrl-C still reaches the checks.
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener('abort', () => controller.abort(), { once: true });
  return finishInterruptedIteration(state, loopConfig(run.options, run.io.env), buildDeps(run, state, NO_BUDGET, controller, trust));
}
