// Resuming a loop: finding the one to continue, stopping the agent a killed runner left behind, refusing
// a loop with no iterations left, and merging the options typed now over the stored ones.
import type { RunOptions } from '../loop-options.js';
import type { LoopState } from '../store/state-types.js';
import { storedOptions } from '../store/state-file.js';
import { isAlive, signalGroup } from '../processes.js';
import { isRunning, listRecordedAgents, readAllStates, readState } from '../store/state-file.js';
import { renderResumeCommand } from '../core/exits.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { loopCommand } from '../../util/invocation.js';
import { LOOP_ID } from '../store/layout.js';

/**
 * The loop to continue for --resume / --resume-last; refuses a loop that is still running. --resume-last skips
 * loops refused before their first iteration (nothing to continue) and refuses a complete one.
 */
export function findResumable(repoRoot: string, options: RunOptions): LoopState {
  const state = options.resume
    ? readState(repoRoot, options.resume)
    : (readAllStates(repoRoot)
        .filter((s) => !(s.status === 'refused' && !s.iteration))
        .sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)))[0] ?? null);
  if (!state) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      options.resume ? `no loop named "${options.resume}" in ralph/.runs/` : 'no loop to resume in ralph/.runs/',
      `list loops with: ${loopCommand('status')}`,
    );
  }
  // The id names folders and the loop's worktree (store/layout.ts, git/worktree.ts); state.json is a file the agent
  // can write, so an id that is not a loop id, or not the one of the folder it was found in, is not followed.
  if (typeof state.id !== 'string' || !LOOP_ID.test(state.id) || readState(repoRoot, state.id)?.id !== state.id) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `ralph/.runs/ holds a loop state whose id (${JSON.stringify(state.id)}) is not the name of its folder; it was not resumed`,
      `resume a loop by its name: ./ralph/ralph.sh --resume <id> (${loopCommand('status')} lists them), or remove that folder`,
    );
  }
  if (options.resumeLast && state.status === 'complete') {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `the last loop ${state.id} is complete; start a new one with ./ralph/ralph.sh`,
      `to continue an older loop: ./ralph/ralph.sh --resume <id> (${loopCommand('status')} lists them)`,
    );
  }
  if (isRunning(state))
    throw new LoopExit(
      LOOP_EXIT.refused,
      `loop ${state.id} is still running (pid ${state.pid})`,
      `stop it first: ${loopCommand(`cancel ${state.id}`)}`,
    );
  // A runner killed with -9 leaves its agents (one per --parallel worker) running in their own process groups. A pid
  // now held by a process that started later is not that agent: its group is gone (the kernel never reuses a live group id).
  for (const agent of listRecordedAgents(state)) {
    const reused = isAlive(agent.pid) && !isAlive(agent.pid, agent.start);
    if (!reused) signalGroup(agent.pid, 'SIGKILL');
  }
  return state;
}

/**
 * A resumed loop with no iteration left under its max: refused (exit 2, SPEC §4: nothing ran, nothing changed),
 * with the command that gives it more.
 */
export function refuseExhausted(state: LoopState, options: RunOptions): void {
  const next = state.iterationDone ? state.iteration + 1 : Math.max(1, state.iteration);
  // A loop that is done but not merged (or was interrupted while waiting for the merge) runs no agent on resume: its
  // final gate runs again, then the merge.
  const merging = state.status === 'not-merged' || (state.status === 'interrupted' && state.mergePending === true);
  if (options.maxIterations === 0 || next <= options.maxIterations || merging) return;
  const ran = next - 1;
  throw new LoopExit(
    LOOP_EXIT.refused,
    `loop ${state.id} already ran its ${ran} iteration${ran === 1 ? '' : 's'}`,
    `give a higher max: ${renderResumeCommand(options.resume ? state.id : null, ran)}`,
  );
}

/** The stored settings of a resumed loop, overridden by whatever the user typed this time. */
export function mergeResumedOptions(
  stored: LoopState['options'],
  options: RunOptions,
  given: Set<keyof RunOptions>,
): RunOptions {
  // Never stored: a state.json that carries them was written by someone else (a hook command, a webhook to call).
  const kept = storedOptions(stored);
  // A merge is only ever what the user typed: state.json is the agent's to write too.
  if (stored.deliver === 'pr-merge' && !given.has('deliver')) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      'this loop delivers with --deliver pr-merge, which a resume never takes from state.json: it merges only when you type it',
      'add --deliver pr-merge to merge once CI passes, or --deliver pr to only update the pull request',
    );
  }
  const merged: RunOptions = { ...options, ...kept };
  for (const key of given) (merged as unknown as Record<string, unknown>)[key] = options[key];
  if (given.has('agent')) delete merged.agentCmd;
  if (given.has('agentCmd')) merged.agent = options.agent;
  // One reviewer: the one typed now replaces the stored one of the other kind.
  if (given.has('reviewAgent')) delete merged.reviewCmd;
  if (given.has('reviewCmd')) delete merged.reviewAgent;
  return merged;
}
