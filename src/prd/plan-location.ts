// Where the plan is when nobody names it: ralphkit's `ralph/prd.json`, else the original Ralph layout's
// `scripts/ralph/prd.json` (SPEC §13). The original is also taken when `ralph/prd.json` is still the example
// install wrote, which is what a repository that had the original layout before `install` holds. What follows the
// plan: its progress.txt and archive/ beside it (as in the original); the prompt stays `ralph/prompt.md` (ralphkit's
// instructions, which know about verification; the runner's note names the plan's real path) and runs stay in
// `ralph/.runs/`.
// Built-ins only: `validate`, the dashboard and the loop engine all call it.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isExamplePlan } from './example-plan.js';

/** ralphkit's plan, relative to the repository root (forward slashes, as printed). */
export const DEFAULT_PLAN = 'ralph/prd.json';
/** The original Ralph loop's plan (snarktank/ralph: scripts/ralph/ with prd.json, progress.txt, prompt.md). */
export const ORIGINAL_PLAN = 'scripts/ralph/prd.json';

export interface PlanChoice {
  /** The plan to use, relative to the root, forward slashes. */
  rel: string;
  /** Why the original layout was taken, to print as one info line; null for ralphkit's own plan. */
  note: string | null;
}

export function choosePlanFile(root: string): PlanChoice {
  if (!isFile(path.join(root, ORIGINAL_PLAN))) return { rel: DEFAULT_PLAN, note: null };
  const own = path.join(root, DEFAULT_PLAN);
  if (!isFile(own))
    return {
      rel: ORIGINAL_PLAN,
      note: `using ${ORIGINAL_PLAN} (the original Ralph layout): there is no ${DEFAULT_PLAN}`,
    };
  if (isExampleFile(own))
    return {
      rel: ORIGINAL_PLAN,
      note: `using ${ORIGINAL_PLAN} (the original Ralph layout): ${DEFAULT_PLAN} is still the example install wrote`,
    };
  return { rel: DEFAULT_PLAN, note: null };
}

function isExampleFile(file: string): boolean {
  try {
    return isExamplePlan(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return false; // unreadable or not JSON: the user's plan, whatever its state; validate says what is wrong
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The plan's log: progress.txt beside a plan named prd.json (either layout), else `<plan>.progress.txt`, so two
 * plans in one folder (a loop each, --worktree) never write, archive or merge each other's log.
 */
export function progressPathFor(prd: string): string {
  const name = path.basename(prd);
  if (name === 'prd.json') return path.join(path.dirname(prd), 'progress.txt');
  return path.join(path.dirname(prd), `${name.replace(/\.json$/i, '')}.progress.txt`);
}
