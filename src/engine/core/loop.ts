// The loop itself: a small state machine over iterations. Everything with side effects (the agent, git,
// verification, the budget, the clock, state persistence) comes in through LoopDeps, so unit tests drive
// it with fakes and run/deps.ts wires the real edges.
import type { AgentRunRecord, LoopState } from '../store/state-types.js';
import type { LoopConfig, LoopDeps } from '../types.js';
import type { VerifyResult } from '../verify/types.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { reportAgentExit, runAgentWithRetries } from './retries.js';
import { renderAllPass, throwIfAborted } from './exits.js';
import { limitAfterIteration, limitBeforeRun, unpricedExit, unpricedLimitReached, usageCeilingExit } from './limits.js';
import { isSettled } from '../../prd/skip.js';

/** Runs iterations until something ends the loop; always ends by returning (never throwing) a LoopExit. */
export async function runLoop(state: LoopState, config: LoopConfig, deps: LoopDeps): Promise<LoopExit> {
  try {
    await finishInterruptedIteration(state, config, deps);
    let iteration = state.iteration === 0 ? 1 : state.iterationDone ? state.iteration + 1 : state.iteration;
    let unpriced = 0;
    for (;;) {
      await checkLimits(state, config, deps, iteration);
      unpriced = (await runIteration(state, config, deps, iteration)) ? 0 : unpriced + 1;
      if (unpricedLimitReached(config, unpriced)) throw unpricedExit(state);
      iteration++;
      if (config.pauseMs > 0) await deps.clock.sleep(config.pauseMs, deps.signal);
      throwIfAborted(deps.signal);
    }
  } catch (err) {
    if (err instanceof LoopExit) return err;
    throw err;
  }
}

async function checkLimits(state: LoopState, config: LoopConfig, deps: LoopDeps, iteration: number): Promise<void> {
  const limit = limitBeforeRun(config, state, iteration - 1, deps.clock.now());
  if (limit) throw limit;
  if ((await deps.budget.beforeIteration()) === 'stop') throw usageCeilingExit(true);
  throwIfAborted(deps.signal);
}

/** One iteration; true when its agent reported a cost, and so did every reviewer run of its claims. */
async function runIteration(state: LoopState, config: LoopConfig, deps: LoopDeps, iteration: number): Promise<boolean> {
  const unpricedReviews = state.reviewRunsUnpriced ?? 0;
  Object.assign(state, {
    iteration,
    iterationDone: false,
    verifying: undefined,
    updatedAt: deps.clock.now().toISOString(),
  });
  deps.saveState(state, 'iteration-start');
  deps.emit({ type: 'iteration-start', iteration, maxIterations: config.maxIterations });
  await deps.beforeAgent(iteration);
  const prdBefore = deps.prdBefore(iteration);
  const headBefore = await deps.headSha();
  const tips = await deps.readBranchTips();
  const result = await runAgentWithRetries(state, config, deps, iteration);
  throwIfAborted(deps.signal);
  const tag = reportAgentExit(deps.emit, iteration, result, config.completionPromise);
  const git = await deps.inspectAgentGit(iteration, headBefore, tips);
  // After the git inspection, so the note lands on the loop's branch even if the agent had left it.
  if (result.timedOut) deps.recordTimeout(iteration, result);
  const headAfter = git.headAfter;
  // Saved before the checks start: if they are interrupted, the resumed loop finishes this iteration from here.
  const ran: AgentRunRecord = {
    headBefore,
    headAfter,
    tag,
    ...(git.offBranch ? { offBranch: git.offBranch } : {}),
    ...(git.violation ? { violation: git.violation } : {}),
  };
  state.verifying = ran;
  deps.saveState(state, 'verifying');
  await settleIteration(state, config, deps, prdBefore, ran, headAfter);
  // The review gate counts its unpriced runs in the state as it verifies (ReviewSetup.spend).
  return result.costUsd !== undefined && (state.reviewRunsUnpriced ?? 0) === unpricedReviews;
}

/**
 * A resumed loop whose last iteration was interrupted after its agent exited (Ctrl-C, cancel or kill -9 while
 * the claims were checked) finishes that iteration: verification, progress and the decision, without running
 * the agent again and without counting another iteration. Returns null when there is nothing to finish.
 */
export async function finishInterruptedIteration(
  state: LoopState,
  config: LoopConfig,
  deps: LoopDeps,
): Promise<VerifyResult | null> {
  const ran = state.verifying;
  if (state.iterationDone || state.iteration < 1 || !ran) return null;
  throwIfAborted(deps.signal);
  // The checks run on the tree as it is now, so the ledger names the HEAD they ran at.
  return settleIteration(state, config, deps, deps.prdBefore(state.iteration), ran, await deps.headSha());
}

/** The second half of an iteration, after the agent: verify, judge progress, mark it done, decide. */
async function settleIteration(
  state: LoopState,
  config: LoopConfig,
  deps: LoopDeps,
  prdBefore: string,
  ran: AgentRunRecord,
  headNow: string | null,
): Promise<VerifyResult> {
  const { iteration } = state;
  // An interrupted verification throws LoopExit(130) here: the iteration stays not done, so a resume finishes it.
  const claimed = await deps.verify(iteration, prdBefore, headNow, ran.offBranch, ran.violation);
  deps.emit({
    type: 'verify',
    iteration,
    verdicts: claimed.verdicts,
    restored: claimed.restored,
    allPass: claimed.allPass,
  });
  const verdict = claimed.allPass ? await passFinalGate(deps, iteration, claimed) : claimed;
  const newCommit = ran.headAfter !== ran.headBefore;
  const progress = await judgeProgress(deps, verdict, newCommit, ran.headBefore, ran.headAfter);
  if (newCommit && !progress.made)
    deps.emit({
      type: 'info',
      iteration,
      message: `iteration ${iteration} made a commit but no progress: ${progress.why}`,
    });
  state.noProgressStreak = progress.made ? 0 : state.noProgressStreak + 1;
  Object.assign(state, { iterationDone: true, verifying: undefined, updatedAt: deps.clock.now().toISOString() });
  deps.saveState(state, 'iteration-end');
  deps.emit({
    type: 'iteration-end',
    iteration,
    newCommit,
    noProgressStreak: state.noProgressStreak,
    costUsd: state.costUsd,
  });
  throwIfAborted(deps.signal);
  decide(state, config, deps, verdict, ran.tag);
  return verdict;
}

/** Every story says passes: only the final gate on the final commit turns that into exit 0. */
async function passFinalGate(deps: LoopDeps, iteration: number, verdict: VerifyResult): Promise<VerifyResult> {
  const gate = await deps.finalGate(iteration);
  if (gate.interrupted)
    throw new LoopExit(
      LOOP_EXIT.interrupted,
      'interrupted during the final gate; nothing decided, state saved',
      'continue with: ./ralph/ralph.sh --resume-last',
    );
  if (gate.passed) return gate.weak ? { ...verdict, weak: gate.weak } : verdict;
  const broken = gate.verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
  deps.emit({
    type: 'warn',
    iteration,
    message: `the final gate rejected ${broken.join(', ')}: ${broken.length === 1 ? 'it no longer passes' : 'they no longer pass'} on the final commit; the loop goes on`,
  });
  return { ...verdict, prd: gate.prd, allPass: false };
}

/**
 * The no-progress rule (docs/engine.md): an iteration is progress when a claim was accepted (verified or
 * unverified), or when the agent committed work — files other than the plan and progress.txt — and none of its
 * claims was rejected. So a liar whose every commit flips `passes` stops after --no-progress-limit iterations.
 */
async function judgeProgress(
  deps: LoopDeps,
  verdict: VerifyResult,
  newCommit: boolean,
  headBefore: string | null,
  headAfter: string | null,
): Promise<{ made: boolean; why: string }> {
  if (verdict.verdicts.some((v) => v.status !== 'rejected')) return { made: true, why: 'a claim was accepted' };
  if (!newCommit) return { made: false, why: 'no new commit' };
  if (verdict.verdicts.length)
    return { made: false, why: `every claim was rejected (${verdict.verdicts.map((v) => v.id).join(', ')})` };
  if (await deps.committedWork(headBefore, headAfter)) return { made: true, why: 'new work committed' };
  return { made: false, why: 'its commits change only the plan, progress.txt and the prompt' };
}

function decide(state: LoopState, config: LoopConfig, deps: LoopDeps, verdict: VerifyResult, tag: string | null): void {
  if (verdict.allPass) throw new LoopExit(LOOP_EXIT.complete, renderAllPass(verdict.prd, verdict.weak));
  if (tag === 'stuck')
    throw new LoopExit(
      LOOP_EXIT.stuck,
      'the agent said it is STUCK',
      'read ralph/progress.txt and the last iteration log, fix the blocker, then --resume-last',
    );
  if (tag === 'complete') {
    const open = verdict.prd.userStories.filter((s) => !isSettled(s)).map((s) => s.id);
    deps.emit({
      type: 'warn',
      iteration: state.iteration,
      message: `${config.completionPromise} ignored: ${open.length} stor${open.length === 1 ? 'y' : 'ies'} not passing under verification (${open.join(', ')})`,
    });
  }
  const limit = limitAfterIteration(config, state, deps.clock.now());
  if (limit) throw limit;
}
