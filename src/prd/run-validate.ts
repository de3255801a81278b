// `ralphkit validate` without the printing: reads the plan from disk and validates it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isExamplePlan } from './example-plan.js';
import { isSkipped } from './skip.js';
import { choosePlanFile, DEFAULT_PLAN, ORIGINAL_PLAN } from './plan-location.js';
import type { PrdProblem } from './types.js';
import { validatePrdText } from './validate.js';

/** Options of `ralphkit validate`. */
export interface ValidateOptions {
  /** The directory `file` is resolved against (default: the current directory). */
  cwd?: string;
  /**
   * The plan to check (default `ralph/prd.json`, else the original layout's `scripts/ralph/prd.json`); a directory
   * means its `ralph/prd.json`, `scripts/ralph/prd.json` or `prd.json`.
   */
  file?: string;
}

export interface ValidateResult {
  /** The plan's path as shown in messages: relative to the current directory when inside it, else absolute. */
  file: string;
  valid: boolean;
  /** True when the file could not be read at all (missing, a folder without prd.json, no permission). */
  unreadable: boolean;
  problems: PrdProblem[];
  /** What does not make the plan invalid but is probably not meant (the exit code stays 0). */
  warnings: PrdProblem[];
  /** Why the original layout's plan was checked rather than ralph/prd.json, or null. */
  note: string | null;
  /** Story counts, present when the plan is valid. */
  stories?: number;
  passing?: number;
  /** Stories set aside (`skip`), present when the plan is valid. */
  skipped?: number;
  /** Whether any check command exists; without one the runner takes every story on the agent's word. */
  hasChecks?: boolean;
}

export function runValidate(options: ValidateOptions = {}): ValidateResult {
  const cwd = path.resolve(options.cwd ?? '.');
  const choice = options.file === undefined ? choosePlanFile(cwd) : { rel: options.file, note: null };
  const { absolute, folder } = resolvePlanPath(cwd, choice.rel);
  const file = displayPath(absolute);
  const none = { warnings: [], note: choice.note };
  if (folder) {
    const message = `a folder with none of ${PLANS_IN_FOLDER.join(', ')} in it; validate wants the plan file (a prd.json)`;
    return { file, valid: false, unreadable: true, problems: [{ file, message, code: 'unreadable' }], ...none };
  }
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    return {
      file,
      valid: false,
      unreadable: true,
      problems: [{ file, message: `cannot read the plan: ${reason}`, code: 'unreadable' }],
      ...none,
    };
  }
  const { prd, problems, warnings } = validatePrdText(text, file);
  if (!prd) return { file, valid: false, unreadable: false, problems, warnings, note: choice.note };
  // The loop refuses the example (engine run/preflight.ts); validate only warns, as the plan itself is fine.
  if (isExamplePlan(prd))
    warnings.unshift({
      file,
      message:
        'this is still the example plan ralphkit installed (task tags for an example app), and the loop refuses to run it: write your own with the ralph skill, or edit this one',
      code: 'example-plan',
    });
  const hasChecks =
    (prd.checks?.length ?? 0) > 0 || prd.userStories.some((s) => !isSkipped(s) && (s.checks?.length ?? 0) > 0);
  const passing = prd.userStories.filter((s) => s.passes === true && !isSkipped(s)).length;
  const skipped = prd.userStories.filter(isSkipped).length;
  return {
    file,
    valid: true,
    unreadable: false,
    problems,
    warnings,
    note: choice.note,
    stories: prd.userStories.length,
    passing,
    skipped,
    hasChecks,
  };
}

// A folder is where a plan lives, not a plan: ralphkit's layout first, then the original Ralph's, then a prd.json beside it.
const PLANS_IN_FOLDER = [DEFAULT_PLAN, ORIGINAL_PLAN, 'prd.json'];

function resolvePlanPath(cwd: string, file: string): { absolute: string; folder: boolean } {
  const absolute = path.resolve(cwd, file);
  if (!isDirectory(absolute)) return { absolute, folder: false };
  const found = PLANS_IN_FOLDER.map((name) => path.join(absolute, name)).find(
    (candidate) => !isDirectory(candidate) && existsSync(candidate),
  );
  return found ? { absolute: found, folder: false } : { absolute, folder: true };
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false; // Missing: reading it reports that.
  }
}

// Relative to where the user stands, so `file:line:col` is clickable in the terminal that printed it.
function displayPath(absolute: string): string {
  const relative = path.relative(process.cwd(), absolute);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : absolute;
}
