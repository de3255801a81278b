// How a run is recorded: its first state (a new loop's, or a resumed one's carried on), and its end, written to
// state.json and reported, with pr-merge's outcome folded in before it.
import path from 'node:path';
import type { LoopEnding, LoopState, LoopStatus } from '../store/state-types.js';
import type { RunContext } from '../types.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { lastPlanPath } from '../store/layout.js';
import { storedOptions, writeState } from '../store/state-file.js';
import { ownProcessStart } from '../processes.js';
import { reportsCost, reviewerReportsCost } from './preflight.js';
import { LoopExit, LOOP_EXIT, RunnerFileError } from '../errors.js';
import { showPath } from '../../util/repo-path.js';
import { readOwnTextOrNull } from '../../util/read.js';
import { planEnding } from '../deliver/summary.js';
import { deliverMerged } from '../deliver/deliver-merge.js';
import type { RunTrust } from '../verify/trust.js';
import { shellQuote } from '../../util/shell-quote.js';
import { quoteArg } from '../../util/invocation.js';

export function initialState(run: RunContext): LoopState {
  const now = new Date().toISOString();
  // No per-invocation options (store/state-file.ts): the webhook URL is a secret, the rest is this command's own.
  const stored = storedOptions(run.options);
  const rel = (p: string) => path.relative(run.paths.repoRoot, p);
  const { agent: agentName, ...rest } = stored;
  const options: LoopState['options'] = {
    ...rest,
    ...(rest.agentCmd ? {} : { agent: agentName }),
    prd: rel(run.paths.prd),
    prompt: rel(run.paths.prompt),
  };
  const agent = run.options.agentCmd ? `cmd: ${run.options.agentCmd}` : run.options.agent;
  if (run.resumed) {
    return {
      ...run.resumed,
      ...(run.worktree ? { worktree: run.worktree } : {}),
      branch: run.branch,
      agent,
      status: 'running',
      pid: process.pid,
      pidStart: ownProcessStart(),
      agentPid: undefined,
      updatedAt: now,
      exitCode: null,
      message: undefined,
      maxIterations: options.maxIterations,
      options,
    };
  }
  return {
    id: run.id,
    agent,
    prd: options.prd,
    ...(run.worktree ? { worktree: run.worktree } : {}),
    branch: run.branch,
    iteration: 0,
    iterationDone: true,
    maxIterations: options.maxIterations,
    status: 'running',
    pid: process.pid,
    pidStart: ownProcessStart(),
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options,
  };
}

/** pr-merge's end (deliver-merge.ts); an unexpected error while merging still ends the loop as recorded (not-merged). */
export async function deliverOrNotMerged(
  run: RunContext,
  trust: RunTrust | undefined,
  done: LoopExit,
  signal: AbortSignal,
): Promise<LoopExit> {
  try {
    return await deliverMerged(run, trust, done, signal);
  } catch (err) {
    return new LoopExit(
      LOOP_EXIT.notMerged,
      `the loop is done, but the pull request was not merged: unexpected error: ${(err as Error).message}`,
      `merge it on GitHub by hand; your commits are on ${run.branch}; to verify and try again: ./ralph/ralph.sh --resume ${run.id}`,
    );
  }
}

/**
 * What the end of a run leaves for the steps after its locks are released (run.ts): how it ended (set once recorded),
 * the run's verification state for the last push, and whether --deliver pr-merge already delivered the end.
 */
export interface RunEnd {
  ending?: LoopEnding;
  trust?: RunTrust;
  delivered: boolean;
}

/**
 * Records how the loop ended, in state.json and in `end` for what follows (`end.trust`: the run's verification state,
 * when it got that far), and reports it. A final state.json that cannot be saved does not change the exit code: the
 * outcome (stories verified, STUCK, budget, ...) is already true in the plan and in git, and scripts branch on it;
 * the exit event carries the save error as `stateError`, and `status` shows the loop as dead. `mergePending`: Ctrl-C
 * (or cancel) stopped pr-merge's wait for CI: the work is done, so the hinted --resume-last is no new iteration.
 */
export function finish(
  run: RunContext,
  state: LoopState,
  exit: LoopExit,
  status: LoopStatus,
  end: RunEnd,
  mergePending = false,
): void {
  const { trust } = end;
  Object.assign(state, {
    status,
    exitCode: exit.code,
    message: exit.message,
    agentPid: undefined,
    mergePending: mergePending || undefined,
    updatedAt: new Date().toISOString(),
  });
  const plan = readOwnTextOrNull(run.paths.prd);
  // Set first: from here a Ctrl-C stops only the announcements of the end (run/interrupt.ts).
  end.ending = planEnding(
    state,
    exit.code,
    status,
    trust?.baseline ?? plan,
    reportsCost(run.options) || reviewerReportsCost(run.options),
  );
  let stateError: RunnerFileError | undefined;
  try {
    writeState(run.paths.repoRoot, state);
  } catch (err) {
    if (!(err instanceof RunnerFileError)) throw err;
    stateError = err;
  }
  // null: the plan vanished; the archive will fall back to git
  if (plan !== null) {
    try {
      atomicWriteFileSync(lastPlanPath(run.paths.repoRoot, path.relative(run.paths.repoRoot, run.paths.prd)), plan);
    } catch {
      /* the archive will fall back to git */
    }
  }
  // A loop that ended on a full disk cannot record that either: one line says both, state.json keeps its last step.
  if (stateError?.diskFull && exit instanceof RunnerFileError && exit.diskFull) {
    run.emit({
      type: 'exit',
      loop: state.id,
      code: exit.code,
      status,
      message: `${exit.message}; state.json keeps the last step it saved`,
      hint: exit.hint,
      iteration: state.iteration,
      costUsd: state.costUsd,
    });
    return;
  }
  const hint = stateError ? renderLostStateHint(run, exit, stateError) : withWorkWhere(run, exit);
  run.emit({
    type: 'exit',
    loop: state.id,
    code: exit.code,
    status,
    message: exit.message,
    hint,
    iteration: state.iteration,
    costUsd: state.costUsd,
    ...(stateError
      ? { stateError: `${stateError.message}, so how the loop ended (${status}, exit ${exit.code}) is not recorded` }
      : {}),
  });
}

function renderLostStateHint(run: RunContext, exit: LoopExit, err: RunnerFileError): string {
  // The loop already ended on this very file: its hint says how to fix it.
  if (exit instanceof RunnerFileError && exit.file === err.file && exit.hint) return exit.hint;
  const folder = showPath(run.paths.repoRoot, path.dirname(err.file));
  const cause = err.diskFull
    ? `free some space on the disk that holds ${folder}/`
    : `make ${folder}/ a folder this user can write (chmod u+w ${shellQuote(folder)}) with nothing in the way of state.json`;
  const fix = `${cause}; the work is in the plan and in git, only the loop's record is stale`;
  return exit.hint ? `${exit.hint}; ${fix}` : fix;
}

/**
 * A --worktree or --parallel loop leaves the user's tree as it was, where the plan still shows nothing passed: the
 * closing hint says where the work is and what to type. Done: switch to it; stopped: look at it without switching
 * (a tree on the plan's branch would keep --resume from checking it out in the loop's worktree).
 */
export function withWorkWhere(
  run: Pick<RunContext, 'worktree' | 'branch'>,
  exit: Pick<LoopExit, 'code' | 'hint'>,
): string | undefined {
  if (!run.worktree) return exit.hint;
  const branch = quoteArg(run.branch, process.platform);
  const where =
    exit.code === LOOP_EXIT.complete
      ? `the work is on ${branch}, not in your working tree (left as it was): see it with git switch ${branch}`
      : `the work so far is on ${branch}, not in your working tree: look at it with git log ${branch}`;
  return exit.hint ? `${exit.hint}; ${where}` : where;
}
