// The plan and prompt files as a start reads them, the runner's (run/run.ts) and `hook start`'s alike: where they
// are, the plan read and validated, the example plan install wrote refused, the prompt file there. Refusals are
// LoopExit(2) with a hint.
import { lstatOrNull, readFileNoWait } from '../util/read.js';
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { isWithin } from '../util/repo-path.js';
import path from 'node:path';
import type { RunOptions } from './loop-options.js';
import type { RunPaths } from './types.js';
import type { Prd } from '../prd/types.js';
import type { Emit } from './events.js';
import { validatePrdText, formatPrdProblem } from '../prd/validate.js';
import { branchNameProblem } from '../prd/branch-name.js';
import { isExamplePlan } from '../prd/example-plan.js';
import { progressPathFor } from '../prd/plan-location.js';
import { LoopExit, LOOP_EXIT } from './errors.js';
import { loopCommand, ralphkitCommand } from '../util/invocation.js';
import { shellQuote } from '../util/shell-quote.js';

/** A path the user typed is relative to where they stand; a default one to the repository root. */
export function resolvePaths(
  repoRoot: string,
  cwd: string,
  options: RunOptions,
  given: Set<keyof RunOptions>,
): RunPaths {
  const at = (key: 'prd' | 'prompt') => path.resolve(given.has(key) ? cwd : repoRoot, options[key]);
  const prd = at('prd');
  return { repoRoot, prd, prompt: at('prompt'), progress: progressPathFor(prd) };
}

/** Reads and validates the plan; every problem is listed, and any problem refuses the start. Warnings are said. */
export async function readPlan(paths: RunPaths, emit: Emit): Promise<Prd> {
  const rel = path.relative(paths.repoRoot, paths.prd) || paths.prd;
  let text: string;
  try {
    text = readFileNoWait(paths.prd).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkedPlan(paths.prd, rel);
    throw new LoopExit(
      LOOP_EXIT.refused,
      `cannot read the plan ${rel}`,
      'write one with the ralph skill, or pass --prd <file>',
    );
  }
  const { prd, problems, warnings } = validatePrdText(text, rel);
  if (!prd)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `invalid plan:\n${problems.map(formatPrdProblem).join('\n')}`,
      `fix ${rel}, then check it with: ${loopCommand(`validate ${shellQuote(rel)}`)}`,
    );
  // git check-ref-format --branch's rules in pure code (prd/branch-name.ts, held against git's own verdicts by a
  // test): no git process, and a name never reaches git unchecked.
  const problem = branchNameProblem(prd.branchName);
  if (problem) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `refusing branchName ${JSON.stringify(prd.branchName)}: ${problem}`,
      `set a plain branch name like "ralph/my-feature" in ${rel}`,
    );
  }
  for (const warning of warnings) emit({ type: 'warn', message: formatPrdProblem(warning) });
  return prd;
}

/** The plan install writes is an example (prd/example-plan.ts): run as is, the agent would build that feature here. */
export function refuseExamplePlan(prd: Prd, paths: RunPaths): void {
  if (!isExamplePlan(prd)) return;
  const rel = showPlanPath(paths);
  throw new LoopExit(
    LOOP_EXIT.refused,
    `${rel} is still the example plan ralphkit installed (task tags for an example app); the agent would build that feature in this repository`,
    `write your own plan with the ralph skill (in your agent: "use the ralph skill to turn tasks/prd-<feature>.md into ${rel}"), or edit ${rel} by hand; check it with: ${loopCommand(`validate ${shellQuote(rel)}`)}`,
  );
}

export function showPlanPath(paths: RunPaths): string {
  return (path.relative(paths.repoRoot, paths.prd) || paths.prd).split(path.sep).join('/');
}

export function checkPromptFile(paths: RunPaths): void {
  const rel = path.relative(paths.repoRoot, paths.prompt);
  // In the repository the agent can put a link there (to a file hidden from it), and the runner would commit the link
  // as a prompt edit and hand it what it leads to: a link is refused, as for the plan.
  if (isWithin(paths.prompt, paths.repoRoot) && lstatOrNull(paths.prompt)?.isSymbolicLink())
    throw new LoopExit(
      LOOP_EXIT.refused,
      `the prompt ${rel} is a symbolic link (to ${readlinkSync(paths.prompt)}): the runner reads its prompt in the repository only as a file, never through a link`,
      `restore the file: git checkout -- ${shellQuote(rel)} (if you made the link yourself, copy what it leads to in its place; never when it leads outside the repository and you did not make it), or pass --prompt <a file outside the repository>`,
    );
  if (!existsSync(paths.prompt) || !statSync(paths.prompt).isFile()) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `cannot read the prompt ${path.relative(paths.repoRoot, paths.prompt)}`,
      `reinstall it with: ${ralphkitCommand('install')}, or pass --prompt <file>`,
    );
  }
}

/**
 * The prompt's bytes. One in the repository is read without following a link there (readFileNoWait): the agent can
 * replace it with a link to a file the sandbox hides from it (the verdict record's key), which the runner would then
 * hand it on stdin. A prompt outside the repository (--prompt) is read as it is.
 */
export function readPromptBytes(paths: Pick<RunPaths, 'prompt' | 'repoRoot'>): Buffer {
  return isWithin(paths.prompt, paths.repoRoot) ? readFileNoWait(paths.prompt) : readFileSync(paths.prompt);
}

/**
 * A plan that is a link: the runner reads and writes its plan as a file of the repository (never through a link,
 * which the agent could point at a file hidden from it), so it asks for the file itself.
 */
function linkedPlan(file: string, rel: string): LoopExit {
  let target = '?';
  try {
    target = readlinkSync(file);
  } catch {
    /* gone or replaced meanwhile: the message still names the plan */
  }
  return new LoopExit(
    LOOP_EXIT.refused,
    `the plan ${rel} is a symbolic link (to ${target}): the runner reads and rewrites its plan only as a file of the repository, never through a link`,
    `restore the file: git checkout -- ${shellQuote(rel)} (if you made the link yourself, copy what it leads to in its place; never when it leads outside the repository and you did not make it), or pass --prd <the file>`,
  );
}
