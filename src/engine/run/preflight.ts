// Everything the runner settles before its first iteration: where the files are, that the plan is valid,
// which loop this is (new or resumed), and that the agent can be started. Refusals are LoopExit(2).
import type { RunPaths, RunOptions, LoopState } from '../types.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { validatePrdText, formatPrdProblem } from '../../prd/validate.js';
import { branchNameProblem } from '../../prd/branch-name.js';
import type { Prd } from '../../prd/types.js';
import { isValidBranchName } from '../git/git.js';
import { groupHasLiveMember, isAlive, signalGroup } from '../processes.js';
import { isRunning, readAllStates, readState } from '../store/state-file.js';
import { renderResumeCommand } from '../core/loop.js';
import { LoopExit, usageExit } from '../errors.js';

export { renderResumeCommand };
// Inlined into ralph.mjs by the bundler (a JSON import, no file read at run time), so the runner knows the example
// plan of the ralphkit it was built with.
import examplePlan from '../../../templates/ralph/prd.json';

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

/**
 * The plan install writes is an example (task tags for some other app): run as is, the agent would build that
 * feature in the user's repository. Compared as JSON with sorted keys, so reformatting still counts as the
 * example, and any edit at all (a story, the project, the branch) makes it the user's plan.
 */
export function refuseExamplePlan(prd: Prd, paths: RunPaths): void {
  if (renderCanonical(prd) !== EXAMPLE) return;
  const rel = showPlanPath(paths);
  throw new LoopExit(2, `${rel} is still the example plan ralphkit installed (task tags for an example app); the agent would build that feature in this repository`, `write your own plan with the ralph skill (in your agent: "use the ralph skill to turn tasks/prd-<feature>.md into ${rel}"), or edit ${rel} by hand; check it with: npx ralphkit validate ${rel}`);
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
  if (isRunning(state)) throw new LoopExit(2, `loop ${state.id} is still running (pid ${state.pid})`, `stop it first: npx ralphkit cancel ${state.id}`);
  // A runner killed with -9 leaves its agent running in its own process group. A pid now held by a process
  // that started later is not that agent: its group is gone (the kernel never reuses a live group id).
  const reused = state.agentPid !== undefined && isAlive(state.agentPid) && !isAlive(state.agentPid, state.agentPidStart);
  if (state.agentPid && !reused) signalGroup(state.agentPid, 'SIGKILL');
  return state;
}

/** An agent still running for a loop whose runner was killed (kill -9): nobody verifies or records its work. */
export interface OrphanAgent {
  loopId: string;
  agentPid: number;
}

/**
 * Kills the agent groups that loops with a dead runner left behind, as `cancel` and `--resume` do. Called by a
 * start that holds the working-tree lock: one loop per tree, and such an agent would keep committing under the new
 * loop's agent. Waits (bounded) until they are gone, so the new loop's first iteration never meets them.
 */
export async function stopOrphanAgents(repoRoot: string, ownId: string): Promise<OrphanAgent[]> {
  const orphans = readAllStates(repoRoot)
    .filter((s) => s.id !== ownId && s.status === 'running' && !isAlive(s.pid, s.pidStart) && hasOrphanGroup(s))
    .map((s) => ({ loopId: s.id, agentPid: s.agentPid as number }));
  for (const o of orphans) signalGroup(o.agentPid, 'SIGKILL');
  for (let waited = 0; waited < 2000 && orphans.some((o) => groupHasLiveMember(o.agentPid)); waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return orphans;
}

// The group outlives its leader when the agent's children are still at work, so the group is checked, not the pid;
// a pid now held by a process that started later is no sign of it (the kernel never reuses a live group id).
function hasOrphanGroup(s: LoopState): boolean {
  if (!s.agentPid || !Number.isInteger(s.agentPid) || s.agentPid <= 1) return false;
  if (isAlive(s.agentPid) && !isAlive(s.agentPid, s.agentPidStart)) return false;
  return groupHasLiveMember(s.agentPid);
}

/**
 * A resumed loop with no iteration left under its max: refused (exit 2, SPEC §4: nothing ran, nothing changed),
 * with the command that gives it more.
 */
export function refuseExhausted(state: LoopState, options: RunOptions): void {
  const next = state.iterationDone ? state.iteration + 1 : Math.max(1, state.iteration);
  if (next <= options.maxIterations) return;
  const ran = next - 1;
  throw new LoopExit(2, `loop ${state.id} already ran its ${ran} iteration${ran === 1 ? '' : 's'}`, `give a higher max: ${renderResumeCommand(options.resume ? state.id : null, ran)}`);
}

/** The stored settings of a resumed loop, overridden by whatever the user typed this time. */
export function mergeResumedOptions(stored: LoopState['options'], options: RunOptions, given: Set<keyof RunOptions>): RunOptions {
  const merged: RunOptions = { ...options, ...stored };
  for (const key of given) (merged as unknown as Record<string, unknown>)[key] = options[key];
  if (given.has('agent')) delete merged.agentCmd;
  if (given.has('agentCmd')) merged.agent = options.agent;
  return merged;
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
