// `ralph.mjs run`: settles the start (setup.ts), takes the lock, puts the repo on the plan's branch, then
// hands the iterations to the loop (loop.ts) with the real edges wired in, and records how it ended.
import { readFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LoopExit, LOOP_EXIT, type BudgetGate } from './contracts.js';
import type { Prd } from '../prd/types.js';
import { atomicWriteFileSync } from '../util/atomic.js';
import { parseRunArgs, type RunOptions } from './args.js';
import { renderRunHelp } from './help.js';
import { createEmitter, type Emit } from './events.js';
import { realClock } from './clock.js';
import { resolveRepoRoot } from './git.js';
import { acquireLock, loopDir, newLoopId, writeState, isCancelRequested, cancelMarker, runsDir, type LoopState, type LoopStatus } from './runs.js';
import { readPlan, checkPromptFile, findResumable, mergeResumedOptions, resolvePaths, findExecutable } from './setup.js';
import { planAgent, renderAgentCommand, renderMissingAgent } from './agents/index.js';
import { runLoop } from './loop.js';
import { createBudget, renderUncheckedWarning } from './edges.js';
import { printDryRun } from './dry-run.js';
import { buildDeps, loopConfig, type LockedRun } from './run-deps.js';
import { prepareBranch } from './run-branch.js';

export interface RunIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

// Stands in for the prompt when the command line is shown before any prompt is read.
const PROMPT_PLACEHOLDER = '\0prompt';
const STATUS_BY_CODE: Record<number, LoopStatus> = { 0: 'complete', 1: 'max-iterations', 2: 'refused', 3: 'stuck', 4: 'no-progress', 5: 'budget', 130: 'interrupted' };

/** Runs the loop for `argv` (everything after `run`) and returns the exit code (SPEC §4). */
export async function runRalph(argv: string[], io: RunIo): Promise<number> {
  let json = argv.includes('--json');
  let emit = createEmitter(json, io.stdout, io.stderr);
  try {
    const { options, given } = parseRunArgs(argv);
    json = options.json;
    emit = createEmitter(json, io.stdout, io.stderr);
    if (options.help) {
      io.stdout(renderRunHelp());
      return 0;
    }
    return await startRun(options, given, io, emit);
  } catch (err) {
    if (!(err instanceof LoopExit)) throw err;
    emit({ type: 'exit', loop: '', code: err.code, status: err.code === 2 ? 'refused' : 'usage', message: err.message, hint: err.hint, iteration: 0, costUsd: 0 });
    return err.code;
  }
}

async function startRun(parsed: RunOptions, given: Set<keyof RunOptions>, io: RunIo, emit: Emit): Promise<number> {
  const repoRoot = await resolveRepoRoot(io.cwd);
  const resumed = parsed.resume || parsed.resumeLast ? findResumable(repoRoot, parsed) : null;
  const options = resumed ? mergeResumedOptions(resumed.options, parsed, given) : parsed;
  const paths = resolvePaths(repoRoot, io.cwd, options, given);
  const prd = await readPlan(paths);
  checkPromptFile(paths);
  const id = resumed?.id ?? options.name ?? newLoopId(new Date());
  const probe = planAgent({ agent: options.agent, agentCmd: options.agentCmd, prompt: PROMPT_PLACEHOLDER, runDir: loopDir(repoRoot, id), iteration: 1, env: io.env });
  if (options.dryRun) return printDryRun({ options, paths, command: renderAgentCommand(probe, PROMPT_PLACEHOLDER), io, emit, json: options.json });
  if (!options.agentCmd && !findExecutable(probe.file, io.env)) {
    const missing = renderMissingAgent(options.agent, io.env);
    throw new LoopExit(2, missing.message, missing.hint);
  }
  if (!options.agentCmd && options.agent === 'claude' && process.getuid?.() === 0 && !io.env.IS_SANDBOX) {
    emit({ type: 'warn', message: 'running as root: Claude Code refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1 is set (only do that in a sandbox)' });
  }
  if (options.maxCost !== undefined && (options.agentCmd || options.agent !== 'claude')) {
    emit({ type: 'warn', message: `--max-cost: ${options.agentCmd ? 'an --agent-cmd agent' : options.agent} reports no cost, so this limit cannot trigger` });
  }
  if (!resumed && existsSync(path.join(loopDir(repoRoot, id), 'state.json'))) {
    throw new LoopExit(2, `a loop named "${id}" already exists`, `continue it with --resume ${id}, or pick another --name`);
  }
  const release = acquireLock(repoRoot, paths.prd, id);
  try {
    return await runLocked({ id, options, paths, resumed, io, emit, command: renderAgentCommand(probe, PROMPT_PLACEHOLDER), branch: prd.branchName, base: prd.baseBranch });
  } finally {
    release();
  }
}

async function runLocked(run: LockedRun): Promise<number> {
  const { id, options, paths, io, emit } = run;
  const state = initialState(run);
  rmSync(cancelMarker(paths.repoRoot, id), { force: true });
  writeState(paths.repoRoot, state);
  const controller = new AbortController();
  const stopSignals = onSignals(() => controller.abort());
  let exit: LoopExit;
  try {
    await prepareBranch(run);
    emit({ type: 'start', loop: id, agent: options.agentCmd ? 'agent-cmd' : options.agent, command: run.command, prd: path.relative(paths.repoRoot, paths.prd), maxIterations: options.maxIterations, resumed: run.resumed !== null, firstIteration: state.iterationDone ? state.iteration + 1 : Math.max(1, state.iteration) });
    const budget = createBudget({ options, clock: realClock, env: io.env, emit, signal: controller.signal });
    exit = await startIterations(run, state, budget, controller);
  } catch (err) {
    if (!(err instanceof LoopExit)) {
      finish(run, state, new LoopExit(1, `unexpected error: ${(err as Error).message}`), 'failed');
      throw err;
    }
    exit = err;
  } finally {
    stopSignals();
  }
  const status: LoopStatus = exit.code === LOOP_EXIT.interrupted && isCancelRequested(paths.repoRoot, id) ? 'cancelled' : STATUS_BY_CODE[exit.code] ?? 'failed';
  finish(run, state, exit, status);
  return exit.code;
}

async function startIterations(run: LockedRun, state: LoopState, budget: BudgetGate, controller: AbortController): Promise<LoopExit> {
  await budget.beforeStart();
  const prdNow = JSON.parse(readFileSync(run.paths.prd, 'utf8')) as Prd;
  if (prdNow.userStories.every((s) => s.passes === true)) return new LoopExit(0, 'nothing to do: every story already passes');
  const unchecked = renderUncheckedWarning(prdNow);
  if (unchecked) run.emit({ type: 'warn', message: unchecked });
  return runLoop(state, loopConfig(run.options, run.io.env), buildDeps(run, state, budget, controller));
}

function initialState(run: LockedRun): LoopState {
  const now = new Date().toISOString();
  const { resume: _r, resumeLast: _l, name: _n, dryRun: _d, help: _h, json: _j, ...stored } = run.options;
  const rel = (p: string) => path.relative(run.paths.repoRoot, p);
  const options = { ...stored, prd: rel(run.paths.prd), prompt: rel(run.paths.prompt) };
  const agent = run.options.agentCmd ? `cmd: ${run.options.agentCmd}` : run.options.agent;
  if (run.resumed) {
    return { ...run.resumed, agent, status: 'running', pid: process.pid, agentPid: undefined, updatedAt: now, exitCode: null, message: undefined, maxIterations: options.maxIterations, options };
  }
  return {
    id: run.id, agent, prd: options.prd,
    iteration: 0, iterationDone: true, maxIterations: options.maxIterations, status: 'running', pid: process.pid,
    startedAt: now, updatedAt: now, costUsd: 0, exitCode: null, noProgressStreak: 0, options,
  };
}

function finish(run: LockedRun, state: LoopState, exit: LoopExit, status: LoopStatus): void {
  Object.assign(state, { status, exitCode: exit.code, message: exit.message, agentPid: undefined, updatedAt: new Date().toISOString() });
  writeState(run.paths.repoRoot, state);
  try {
    atomicWriteFileSync(path.join(runsDir(run.paths.repoRoot), 'last-plan.json'), readFileSync(run.paths.prd, 'utf8'));
  } catch {
    /* the plan vanished; the archive will fall back to git */
  }
  run.emit({ type: 'exit', loop: state.id, code: exit.code, status, message: exit.message, hint: exit.hint, iteration: state.iteration, costUsd: state.costUsd });
}

/** SIGINT/SIGTERM stop the agent and end the loop with 130; returns the function that removes the handlers. */
function onSignals(stop: () => void): () => void {
  const handler = () => stop();
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  process.on('SIGHUP', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
    process.off('SIGHUP', handler);
  };
}
