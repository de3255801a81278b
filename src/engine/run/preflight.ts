// Everything the runner settles before its first iteration: where the files are, that the plan is valid,
// which loop this is (new or resumed), and that the agent can be started. Refusals are LoopExit(2).
// Inlined into ralph.mjs by the bundler (a JSON import, no file read at run time), so the runner knows the example
// plan of the ralphkit it was built with.
import type { RunPaths, RunOptions } from '../types.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { validatePrdText, formatPrdProblem } from '../../prd/validate.js';
import { branchNameProblem } from '../../prd/branch-name.js';
import type { Prd } from '../../prd/types.js';
import { isValidBranchName } from '../git/git.js';
import { LoopExit, usageExit } from '../errors.js';

import examplePlan from '../../../templates/ralph/prd.json';
import { ralphkitCommand } from '../../util/invocation.js';

/** A path the user typed is relative to where they stand; a default one to the repository root. */
export function resolvePaths(repoRoot: string, cwd: string, options: RunOptions, given: Set<keyof RunOptions>): RunPaths {
  const at = (key: 'prd' | 'prompt') => path.resolve(given.has(key) ? cwd : repoRoot, options[key]);
  const prd = at('prd');
  return { repoRoot, prd, prompt: at('prompt'), progress: path.join(path.dirname(prd), 'progress.txt') };
}

/** Reads and validates the plan; every problem is listed, and any problem refuses the start. */
export async function readPlan(paths: RunPaths): Promise<Prd> {
  const rel = path.relative(paths.repoRoot, paths.prd) || paths.prd;
  let text: string;
  try {
    text = readFileSync(paths.prd, 'utf8');
  } catch {
    throw new LoopExit(2, `cannot read the plan ${rel}`, 'write one with the ralph skill, or pass --prd <file>');
  }
  const { prd, problems } = validatePrdText(text, rel);
  if (!prd) throw new LoopExit(2, `invalid plan:\n${problems.map(formatPrdProblem).join('\n')}`, `fix ${rel}, then check it with: ${ralphkitCommand(`validate ${rel}`)}`);
  // Two opinions on the branch name: our own rules, then git's, called without a shell.
  const problem = branchNameProblem(prd.branchName);
  if (problem || !(await isValidBranchName(paths.repoRoot, prd.branchName))) {
    throw new LoopExit(2, `refusing branchName ${JSON.stringify(prd.branchName)}: ${problem ?? 'git check-ref-format --branch rejects it'}`, `set a plain branch name like "ralph/my-feature" in ${rel}`);
  }
  return prd;
}

/**
 * The plan install writes is an example (task tags for some other app): run as is, the agent would build that
 * feature in the user's repository. Compared as JSON with sorted keys, so reformatting still counts as the
 * example, and any edit at all (a story, the project, the branch) makes it the user's plan.
 */
export function refuseExamplePlan(prd: Prd, paths: RunPaths): void {
  if (renderCanonical(prd) !== EXAMPLE) return;
  const rel = showPlanPath(paths);
  throw new LoopExit(2, `${rel} is still the example plan ralphkit installed (task tags for an example app); the agent would build that feature in this repository`, `write your own plan with the ralph skill (in your agent: "use the ralph skill to turn tasks/prd-<feature>.md into ${rel}"), or edit ${rel} by hand; check it with: ${ralphkitCommand(`validate ${rel}`)}`);
}

const EXAMPLE = renderCanonical(examplePlan);

function renderCanonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

function showPlanPath(paths: RunPaths): string {
  return (path.relative(paths.repoRoot, paths.prd) || paths.prd).split(path.sep).join('/');
}

export function checkPromptFile(paths: RunPaths): void {
  if (!existsSync(paths.prompt) || !statSync(paths.prompt).isFile()) {
    throw new LoopExit(2, `cannot read the prompt ${path.relative(paths.repoRoot, paths.prompt)}`, `reinstall it with: ${ralphkitCommand('install')}, or pass --prompt <file>`);
  }
}

/**
 * --wait waits for the usage ceiling's reset, so without --max-usage it would do nothing: bad usage (exit 1), like
 * the other flag combinations. --wait-next-session needs no ceiling: it waits for the next 5-hour block on its own.
 */
export function refuseWaitWithoutCeiling(options: RunOptions): void {
  if (options.wait && options.maxUsage === undefined) {
    throw usageExit('--wait waits for a usage reset when --max-usage is reached; it needs --max-usage <pct> (e.g. --max-usage 80 --wait)');
  }
}
