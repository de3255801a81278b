// The run's limits, decided once for both loops (the single loop, core/loop.ts, and --parallel's coordinator,
// run/parallel/run.ts): --max-iterations, --max-duration, --max-cost, the usage ceiling, the no-progress limit and
// the unpriced-iteration stop. Pure: the time comes in as `now` from the caller's injected clock; each limit has one
// sentence and one hint.
import type { LoopConfig } from '../types.js';
import type { LoopState } from '../store/state-types.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { renderCostSplit, renderUsd } from '../../util/usd.js';
import { formatDuration } from './duration.js';
import { renderResumeCommand } from './exits.js';

/**
 * Before an agent run starts: the limit another run would break, or null. `ran` is the agent runs the loop has
 * already counted (the single loop's iterations before this one, every worker's attempts with --parallel).
 * The usage ceiling is asked separately (it is the budget gate's I/O): `usageCeilingExit` words its stop.
 */
export function limitBeforeRun(config: LoopConfig, state: LoopState, ran: number, now: Date): LoopExit | null {
  if (config.maxIterations > 0 && ran >= config.maxIterations) return maxIterationsExit(config);
  if (pastDeadline(config, now)) return durationExit(config);
  if (overCost(state, config)) return costExit(state, config);
  return null;
}

/**
 * Before judging work again with no agent run (--parallel's re-judge, run/parallel/run.ts): the time and cost limits
 * still hold (its reviewer is paid for), the iteration limit does not (no agent runs).
 */
export function limitBeforeJudging(config: LoopConfig, state: LoopState, now: Date): LoopExit | null {
  if (pastDeadline(config, now)) return durationExit(config);
  if (overCost(state, config)) return costExit(state, config);
  return null;
}

/**
 * After an iteration that neither passed every story nor said STUCK: the limit that ends the loop now, or null.
 * Cost first (money spent is the hardest limit), then no progress, then the iteration and time limits.
 */
export function limitAfterIteration(config: LoopConfig, state: LoopState, now: Date): LoopExit | null {
  if (overCost(state, config)) return costExit(state, config);
  if (state.noProgressStreak >= config.noProgressLimit) return noProgressExit(state.noProgressStreak);
  if (config.maxIterations > 0 && state.iteration >= config.maxIterations) return maxIterationsExit(config);
  if (pastDeadline(config, now)) return durationExit(config);
  return null;
}

/**
 * --parallel's no-progress limit, per story: after `attempts` failed attempts in a row, why the run gives up on it,
 * or null while it may try again.
 */
export function storyGivenUp(attempts: number, config: LoopConfig): string | null {
  return attempts >= config.noProgressLimit
    ? `no progress: ${attempts} attempt${attempts === 1 ? '' : 's'} in a row without a verified merge`
    : null;
}

/** With no iteration cap and a --max-cost, this many iterations in a row without a reported cost end the run. */
export function unpricedLimitReached(config: LoopConfig, unpricedInARow: number): boolean {
  return config.maxIterations === 0 && config.maxCost !== undefined && unpricedInARow >= MAX_UNPRICED_ITERATIONS;
}

/**
 * The budget gate said stop (SPEC §9). `canWait`: whether --wait could have waited instead (--parallel refuses
 * --wait, so its hint does not offer it).
 */
export function usageCeilingExit(canWait: boolean): LoopExit {
  return new LoopExit(
    LOOP_EXIT.budget,
    'usage ceiling reached',
    `continue after the reset with --resume-last${canWait ? ', or add --wait' : ''}`,
  );
}

export function noProgressExit(streak: number): LoopExit {
  return new LoopExit(
    LOOP_EXIT.noProgress,
    `no progress: ${streak} iteration${streak === 1 ? '' : 's'} in a row with no claim accepted and no new work committed`,
    'read ralph/progress.txt and the iteration logs in ralph/.runs/, then adjust prompt.md or the plan',
  );
}

export function maxIterationsExit(config: LoopConfig): LoopExit {
  return new LoopExit(
    LOOP_EXIT.maxIterations,
    `max iterations reached (${config.maxIterations}) with stories still open`,
    `raise the limit and continue: ${renderResumeCommand(null, config.maxIterations)}`,
    'max-iterations',
  );
}

/** --max-duration's time is up: no new iteration starts (the same family as the iteration limit: exit 1). */
export function pastDeadline(config: LoopConfig, now: Date): boolean {
  return config.deadline !== undefined && now.getTime() >= config.deadline;
}

export function durationExit(config: LoopConfig): LoopExit {
  const limit = config.maxDurationMs === undefined ? '' : ` (--max-duration ${formatDuration(config.maxDurationMs)})`;
  return new LoopExit(
    LOOP_EXIT.maxIterations,
    `time limit reached${limit} with stories still open`,
    'continue with: ./ralph/ralph.sh --resume-last (it gets the same time again; a new --max-duration replaces it)',
    'max-duration',
  );
}

export function overCost(state: LoopState, config: LoopConfig): boolean {
  return config.maxCost !== undefined && state.costUsd >= config.maxCost;
}

export function costExit(state: LoopState, config: LoopConfig): LoopExit {
  return new LoopExit(
    LOOP_EXIT.budget,
    `cost limit reached: ${renderCostSplit(state.costUsd, state.reviewCostUsd)} of $${config.maxCost}`,
    'raise --max-cost and continue with --resume-last',
  );
}

/**
 * With no iteration cap, --max-cost is the loop's only sure end; an iteration whose agent (or reviewer) reported no
 * cost (killed at the timeout, crashed, a result line too long to read) still cost money. This many in a row end the run.
 */
export const MAX_UNPRICED_ITERATIONS = 3;

export function unpricedExit(state: LoopState): LoopExit {
  return new LoopExit(
    LOOP_EXIT.budget,
    `no cost reported for ${MAX_UNPRICED_ITERATIONS} iterations in a row (${renderUsd(state.costUsd)} counted so far): with no iteration cap, --max-cost cannot bound this run`,
    'read the last iteration logs in ralph/.runs/, then continue with a number of iterations: ./ralph/ralph.sh --resume-last 10',
  );
}
