// Everything the runner settles before its first iteration besides what `hook start` shares with it (plan-file.ts):
// which plan a new loop takes, stories set aside, the limits that bound a loop. Refusals are LoopExit(2).
import type { RunPaths } from '../types.js';
import type { RunOptions } from '../loop-options.js';
import type { Prd } from '../../prd/types.js';
import { LoopExit, LOOP_EXIT, usageExit } from '../errors.js';
import { isSkipped } from '../../prd/skip.js';
import { choosePlanFile } from '../../prd/plan-location.js';
import { showPlanPath } from '../plan-file.js';
import type { Emit } from '../events.js';

/**
 * Without --prd, a new loop looks for the plan (prd/plan-location.ts): ralph/prd.json, or the original layout's
 * scripts/ralph/prd.json, said in one info line. A resumed loop keeps the plan it was started with.
 */
export function locatePlan(
  repoRoot: string,
  options: RunOptions,
  given: Set<keyof RunOptions>,
  resumed: boolean,
  emit: Emit,
): RunOptions {
  if (resumed || given.has('prd')) return options;
  const choice = choosePlanFile(repoRoot);
  if (choice.note) emit({ type: 'info', message: choice.note });
  return { ...options, prd: choice.rel };
}

/**
 * Stories set aside are not worked on and not checked, so they are named before a run rather than only in its exit
 * line; a plan with nothing but set-aside stories has nothing to run, and exit 0 on it would mean nothing.
 */
export function reportSetAside(prd: Prd, paths: RunPaths, emit: Emit): void {
  const ids = prd.userStories.filter(isSkipped).map((s) => s.id);
  if (!ids.length) return;
  const rel = showPlanPath(paths);
  if (ids.length === prd.userStories.length) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `every story in ${rel} is set aside ("skip"): nothing for the loop to do`,
      `remove "skip" (or a "passes": "cancelled"/"skipped") from the stories to work on in ${rel}, commit, then start again`,
    );
  }
  emit({
    type: 'warn',
    message: `${ids.length} ${ids.length === 1 ? 'story' : 'stories'} set aside in ${rel} ("skip"): not worked on, not checked, not counted: ${ids.join(', ')}`,
  });
}

/** Only Claude Code reports what a run cost; for any other agent --max-cost can never trigger. */
export function reportsCost(options: Pick<RunOptions, 'agent' | 'agentCmd'>): boolean {
  return !options.agentCmd && options.agent === 'claude';
}

/** The reviewer's runs count against --max-cost when it is Claude Code (--review-agent claude); others report none. */
export function reviewerReportsCost(options: Pick<RunOptions, 'reviewAgent' | 'reviewCmd'>): boolean {
  return !options.reviewCmd && options.reviewAgent === 'claude';
}

/** The configured reviewer when it reports no cost, in words (null: none configured, or Claude Code). */
export function renderUnpricedReviewer(options: Pick<RunOptions, 'reviewAgent' | 'reviewCmd'>): string | null {
  if (reviewerReportsCost(options) || !(options.reviewAgent || options.reviewCmd)) return null;
  return options.reviewCmd ? 'a --review-cmd reviewer' : `the reviewer ${options.reviewAgent}`;
}

/**
 * max_iterations 0 means no iteration cap (SPEC §4): only a budget that can end the loop (cost, usage, or
 * --max-duration's time) makes that bounded, so without one the start is refused (exit 2). Checked on the options a
 * resume merged, too.
 */
export function refuseUnboundedLoop(options: RunOptions): void {
  if (options.maxIterations !== 0 || options.maxDurationMs !== undefined) return;
  // With --allow-unknown-usage, a usage that cannot be read lets the loop go on: the ceiling alone bounds nothing.
  if (options.maxUsage !== undefined && !options.allowUnknownUsage) return;
  const reviewer = renderUnpricedReviewer(options);
  if (options.maxCost !== undefined && reportsCost(options) && !reviewer) return;
  const unpriced = reportsCost(options) ? reviewer : options.agentCmd ? 'an --agent-cmd agent' : options.agent;
  const why = [
    options.maxCost === undefined ? '' : `; --max-cost cannot bound it: ${unpriced} reports no cost`,
    options.maxUsage === undefined
      ? ''
      : '; --max-usage with --allow-unknown-usage cannot bound it: while usage cannot be read the loop goes on',
  ].join('');
  throw new LoopExit(
    LOOP_EXIT.refused,
    `max_iterations 0 means no iteration cap: it needs a budget that ends the loop, --max-cost <usd>, --max-usage <pct> or --max-duration <time>${why}`,
    'add one (e.g. ./ralph/ralph.sh --max-cost 20 0, --max-usage 80 0 or --max-duration 8h 0), or give a number of iterations (./ralph/ralph.sh 25)',
  );
}

/**
 * --wait waits for the usage ceiling's reset, so without --max-usage it would do nothing: bad usage (exit 1), like
 * the other flag combinations. --wait-next-session needs no ceiling: it waits for the next 5-hour block on its own.
 */
export function refuseWaitWithoutCeiling(options: RunOptions): void {
  if (options.wait && options.maxUsage === undefined) {
    throw usageExit(
      '--wait waits for a usage reset when --max-usage is reached; it needs --max-usage <pct> (e.g. --max-usage 80 --wait)',
    );
  }
}
