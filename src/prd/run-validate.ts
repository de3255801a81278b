// `ralphkit validate` without the printing: reads the plan from disk and validates it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PrdProblem } from './types.js';
import { validatePrdText } from './validate.js';

export const DEFAULT_PRD = path.join('ralph', 'prd.json');

/** Options of `ralphkit validate`. */
export interface ValidateOptions {
  /** The directory `file` is resolved against (default: the current directory). */
  cwd?: string;
  /** The plan to check (default `ralph/prd.json`); a directory means its `ralph/prd.json`, else its `prd.json`. */
  file?: string;
}

export interface ValidateResult {
  /** The plan's path as shown in messages: relative to the current directory when inside it, else absolute. */
  file: string;
  valid: boolean;
  /** True when the file could not be read at all (missing, a folder without prd.json, no permission). */
  unreadable: boolean;
  problems: PrdProblem[];
  /** Story counts, present when the plan is valid. */
  stories?: number;
  passing?: number;
  /** Whether any check command exists; without one the runner takes every story on the agent's word. */
  hasChecks?: boolean;
}

export function runValidate(options: ValidateOptions = {}): ValidateResult {
  const { absolute, folder } = resolvePlanPath(path.resolve(options.cwd ?? '.'), options.file ?? DEFAULT_PRD);
  const file = displayPath(absolute);
  if (folder) {
    const message = `a folder with neither ${DEFAULT_PRD} nor prd.json in it; validate wants the plan file (a prd.json)`;
    return { file, valid: false, unreadable: true, problems: [{ file, message, code: 'unreadable' }] };
  }
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    return { file, valid: false, unreadable: true, problems: [{ file, message: `cannot read the plan: ${reason}`, code: 'unreadable' }] };
  }
  const { prd, problems } = validatePrdText(text, file);
  if (!prd) return { file, valid: false, unreadable: false, problems };
  const hasChecks = (prd.checks?.length ?? 0) > 0 || prd.userStories.some((s) => (s.checks?.length ?? 0) > 0);
  const passing = prd.userStories.filter((s) => s.passes).length;
  return { file, valid: true, unreadable: false, problems, stories: prd.userStories.length, passing, hasChecks };
}

// A folder is where a plan lives, not a plan: ralphkit's layout first, then the original Ralph's prd.json beside it.
const PLANS_IN_FOLDER = [DEFAULT_PRD, 'prd.json'];

function resolvePlanPath(cwd: string, file: string): { absolute: string; folder: boolean } {
  const absolute = path.resolve(cwd, file);
  if (!isDirectory(absolute)) return { absolute, folder: false };
  const found = PLANS_IN_FOLDER.map((name) => path.join(absolute, name)).find((candidate) => !isDirectory(candidate) && existsSync(candidate));
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
