// What a loop's notifications say (SPEC §10): one line about how it ended (loop id, status, exit code, stories, cost,
// iterations) and the environment of the --on-exit command. Pure; built-ins only.
import type { LoopEnding, LoopState, LoopStatus } from '../store/state-types.js';
import type { Prd } from '../../prd/types.js';
import { activeStories } from '../../prd/skip.js';
import { renderCostSplit } from '../../util/usd.js';
import { sanitizeForTerminal } from '../../util/ansi.js';

/**
 * The ending of a loop. `planText`: the plan as the runner last settled it (its baseline; else the file), so a
 * claim the agent made but nobody verified yet is not counted. Set-aside stories are counted in neither number.
 */
export function planEnding(
  state: LoopState,
  code: number,
  status: LoopStatus,
  planText: string | null,
  costKnown: boolean,
): LoopEnding {
  const stories = countStories(planText);
  return {
    id: state.id,
    code,
    status,
    iterations: state.iteration,
    storiesPassed: stories?.passed ?? null,
    storiesTotal: stories?.total ?? null,
    costUsd: costKnown || state.costUsd > 0 ? state.costUsd : null,
    ...(state.reviewCostUsd !== undefined ? { reviewCostUsd: state.reviewCostUsd } : {}),
  };
}

function countStories(planText: string | null): { passed: number; total: number } | null {
  try {
    const prd = JSON.parse(planText ?? '') as Prd;
    const stories = activeStories(prd.userStories);
    return { passed: stories.filter((s) => s.passes === true).length, total: stories.length };
  } catch {
    return null;
  }
}

/** The summary: one line, no control characters (the loop id is [A-Za-z0-9._-], the rest is the runner's words). */
export function renderSummary(e: LoopEnding): string {
  const parts = [`loop ${e.id}: ${e.status} (exit ${e.code})`];
  if (e.storiesTotal !== null) parts.push(`${e.storiesPassed}/${e.storiesTotal} stories pass`);
  parts.push(`${e.iterations} iteration${e.iterations === 1 ? '' : 's'}`);
  if (e.costUsd !== null) parts.push(renderCostSplit(e.costUsd, e.reviewCostUsd));
  return sanitizeForTerminal(parts.join(' · ')).replace(/\s+/g, ' ');
}

/** The desktop notification's title: short, since some desktops cut it. */
export function renderTitle(e: LoopEnding): string {
  return `ralph: ${e.status === 'complete' ? 'done' : e.status}`;
}

/** The variables the --on-exit command gets, on top of the runner's environment. An unknown number is empty. */
export function renderOnExitEnv(e: LoopEnding): Record<string, string> {
  return {
    RALPH_EXIT_CODE: String(e.code),
    RALPH_STATUS: e.status,
    RALPH_LOOP_ID: e.id,
    RALPH_STORIES_PASSED: e.storiesPassed === null ? '' : String(e.storiesPassed),
    RALPH_STORIES_TOTAL: e.storiesTotal === null ? '' : String(e.storiesTotal),
    // Dollars as a plain number (12.5, 0.0123), at most six decimals: for scripts, not for people.
    RALPH_COST_USD: e.costUsd === null ? '' : String(Number(e.costUsd.toFixed(6))),
  };
}

/** The first non-empty line of a program's message, at most `max` characters, for a one-line warning. */
export function firstLine(text: string, max = 300): string {
  const line =
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find(Boolean) ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
