// How a loop ends, in words: every story passing, the iteration and cost limits, an interrupt, and the command that
// continues a stopped loop.
import type { LoopConfig, LoopState } from '../types.js';
import type { Prd } from '../../prd/types.js';
import { activeStories } from '../../prd/skip.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { renderCostSplit, renderUsd } from '../../util/usd.js';
import { formatDuration } from './duration.js';

/**
 * The words for exit 0. A story no check covers was accepted on the agent's word (SPEC §6), so "under verification"
 * would overstate it; how many such stories there are is a property of the plan.
 */
export function renderAllPass(prd: Prd, weak: readonly string[] = []): string {
  return `${renderPassing(prd)}${renderWeak(weak)}`;
}

/** Stories verified only by checks that passed before any work: named, since their checks proved nothing about them. */
function renderWeak(weak: readonly string[]): string {
  if (!weak.length) return '';
  const list = weak.length > 10 ? `${weak.slice(0, 10).join(', ')} and ${weak.length - 10} more` : weak.join(', ');
  return `; ${list} verified (weak check): ${weak.length === 1 ? 'its check' : 'their checks'} passed on the plan commit before any work, so read ${weak.length === 1 ? 'that story' : 'those stories'} yourself`;
}

function renderPassing(prd: Prd): string {
  const planChecks = (prd.checks ?? []).length > 0;
  const stories = activeStories(prd.userStories);
  const skipped = prd.userStories.length - stories.length;
  // Set-aside stories were neither worked on nor checked: said apart, so "all stories" never hides them.
  const aside = skipped ? `; ${skipped} set aside (skip), not worked on` : '';
  const unverified = stories.filter((s) => !planChecks && !(s.checks ?? []).length).length;
  if (!unverified) return `all stories pass under verification${aside}`;
  const verified = stories.length - unverified;
  const word = `${unverified} unverified: accepted on the agent's word`;
  return verified ? `all stories pass (${verified} under verification, ${word})${aside}` : `all stories pass (${word})${aside}`;
}

export function maxIterationsExit(config: LoopConfig): LoopExit {
  return new LoopExit(LOOP_EXIT.maxIterations, `max iterations reached (${config.maxIterations}) with stories still open`, `raise the limit and continue: ${renderResumeCommand(null, config.maxIterations)}`, 'max-iterations');
}

/** --max-duration's time is up: no new iteration starts (the same family as the iteration limit: exit 1). */
export function pastDeadline(config: LoopConfig, now: Date): boolean {
  return config.deadline !== undefined && now.getTime() >= config.deadline;
}

export function durationExit(config: LoopConfig): LoopExit {
  const limit = config.maxDurationMs === undefined ? '' : ` (--max-duration ${formatDuration(config.maxDurationMs)})`;
  return new LoopExit(LOOP_EXIT.maxIterations, `time limit reached${limit} with stories still open`, 'continue with: ./ralph/ralph.sh --resume-last (it gets the same time again; a new --max-duration replaces it)', 'max-duration');
}

export function overCost(state: LoopState, config: LoopConfig): boolean {
  return config.maxCost !== undefined && state.costUsd >= config.maxCost;
}

export function costExit(state: LoopState, config: LoopConfig): LoopExit {
  return new LoopExit(LOOP_EXIT.budget, `cost limit reached: ${renderCostSplit(state.costUsd, state.reviewCostUsd)} of $${config.maxCost}`, 'raise --max-cost and continue with --resume-last');
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

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new LoopExit(LOOP_EXIT.interrupted, 'interrupted; state saved', 'continue with: ./ralph/ralph.sh --resume-last');
}

/** The command that continues a loop stopped at `ran` iterations, with a concrete higher max (never a placeholder). */
export function renderResumeCommand(id: string | null, ran: number): string {
  // Half as many again, at least 5: 10 → 15, 3 → 8, 100 → 150.
  const more = ran + Math.max(5, Math.ceil(ran / 2));
  return `./ralph/ralph.sh ${id ? `--resume ${id}` : '--resume-last'} ${more}`;
}
