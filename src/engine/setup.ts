// Everything the runner settles before its first iteration: where the files are, that the plan is valid,
// which loop this is (new or resumed), and that the agent can be started. Refusals are LoopExit(2).
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { validatePrdText, formatPrdProblem } from '../prd/validate.js';
import { branchNameProblem } from '../prd/branch-name.js';
import type { Prd } from '../prd/types.js';
import { LoopExit } from './contracts.js';
import type { RunOptions } from './args.js';
import { isValidBranchName } from './git.js';
import { isAlive, isLive, readAllStates, readState, type LoopState } from './runs.js';
import { signalGroup } from './agent-process.js';

export interface RunPaths {
  repoRoot: string;
  prd: string;
  prompt: string;
  progress: string;
}

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
  if (!prd) throw new LoopExit(2, `invalid plan:\n${problems.map(formatPrdProblem).join('\n')}`, `fix ${rel}, then check it with: npx ralphkit validate ${rel}`);
  // Two opinions on the branch name: our own rules, then git's, called without a shell.
  const problem = branchNameProblem(prd.branchName);
  if (problem || !(await isValidBranchName(paths.repoRoot, prd.branchName))) {
    throw new LoopExit(2, `refusing branchName ${JSON.stringify(prd.branchName)}: ${problem ?? 'git check-ref-format --branch rejects it'}`, `set a plain branch name like "ralph/my-feature" in ${rel}`);
  }
  return prd;
}

export function checkPromptFile(paths: RunPaths): void {
  if (!existsSync(paths.prompt) || !statSync(paths.prompt).isFile()) {
    throw new LoopExit(2, `cannot read the prompt ${path.relative(paths.repoRoot, paths.prompt)}`, 'reinstall it with: npx ralphkit install, or pass --prompt <file>');
  }
}

/**
 * The loop to continue for --resume / --resume-last; refuses a loop that is still running. --resume-last skips
 * loops refused before their first iteration (nothing to continue) and refuses a complete one.
 */
export function findResumable(repoRoot: string, options: RunOptions): LoopState {
  const state = options.resume
    ? readState(repoRoot, options.resume)
    : readAllStates(repoRoot)
        .filter((s) => !(s.status === 'refused' && !s.iteration))
        .sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)))[0] ?? null;
  if (!state) {
    throw new LoopExit(2, options.resume ? `no loop named "${options.resume}" in ralph/.runs/` : 'no loop to resume in ralph/.runs/', 'list loops with: npx ralphkit status');
  }
  if (options.resumeLast && state.status === 'complete') {
    throw new LoopExit(2, `the last loop ${state.id} is complete; start a new one with ./ralph/ralph.sh`, 'to continue an older loop: ./ralph/ralph.sh --resume <id> (npx ralphkit status lists them)');
  }
  if (isLive(state)) throw new LoopExit(2, `loop ${state.id} is still running (pid ${state.pid})`, `stop it first: npx ralphkit cancel ${state.id}`);
  // A runner killed with -9 leaves its agent running in its own process group. A pid now held by a process
  // that started later is not that agent: its group is gone (the kernel never reuses a live group id).
  const reused = state.agentPid !== undefined && isAlive(state.agentPid) && !isAlive(state.agentPid, state.agentPidStart);
  if (state.agentPid && !reused) signalGroup(state.agentPid, 'SIGKILL');
  return state;
}

/** A resumed loop with no iteration left under its max: say how to give it more, rather than start and stop at once. */
export function refuseExhausted(state: LoopState, options: RunOptions): void {
  const next = state.iterationDone ? state.iteration + 1 : Math.max(1, state.iteration);
  if (next <= options.maxIterations) return;
  const ran = next - 1;
  const again = options.resume ? `--resume ${state.id}` : '--resume-last';
  throw new LoopExit(1, `loop ${state.id} already ran its ${ran} iteration${ran === 1 ? '' : 's'}`, `give a higher max: ./ralph/ralph.sh ${again} ${ran + 5}`);
}

/** The stored settings of a resumed loop, overridden by whatever the user typed this time. */
export function mergeResumedOptions(stored: LoopState['options'], options: RunOptions, given: Set<keyof RunOptions>): RunOptions {
  const merged: RunOptions = { ...options, ...stored };
  for (const key of given) (merged as unknown as Record<string, unknown>)[key] = options[key];
  if (given.has('agent')) delete merged.agentCmd;
  if (given.has('agentCmd')) merged.agent = options.agent;
  return merged;
}

/** Finds an executable on PATH the way a shell would, to refuse a missing agent before anything runs. */
export function findExecutable(file: string, env: NodeJS.ProcessEnv): string | null {
  const candidates = file.includes('/') ? [file] : (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, file));
  for (const c of candidates) {
    try {
      if (statSync(c).isFile() && (statSync(c).mode & 0o111) !== 0) return c;
    } catch {
      /* not here */
    }
  }
  return null;
}
