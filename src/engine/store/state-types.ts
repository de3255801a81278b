// A loop's state.json (SPEC §4) and its --parallel workers, as written and read by store/state-file.ts, and how a
// loop ended.
import type { Tag } from '../core/tags.js';
import type { PerInvocation, RunOptions } from '../loop-options.js';
import type { Violation } from '../verify/types.js';

export type LoopStatus =
  | 'running'
  | 'complete'
  | 'not-merged'
  | 'max-iterations'
  | 'max-duration'
  | 'stuck'
  | 'no-progress'
  | 'budget'
  | 'protected'
  | 'interrupted'
  | 'cancelled'
  | 'refused'
  | 'failed';

/** ralph/.runs/<id>/state.json (SPEC §4). */
export interface LoopState {
  id: string;
  agent: string;
  prd: string;
  /** The iteration in progress, or the last one started. */
  iteration: number;
  /** False while `iteration` is still running: a resumed loop repeats it. */
  iterationDone: boolean;
  maxIterations: number;
  status: LoopStatus;
  pid: number;
  /** When `pid` started (Linux: clock ticks since boot), so a pid the OS gave to another process is not taken for the runner. */
  pidStart?: number;
  /** The agent's process group while it runs, so a resumed loop can clean up after a killed runner. */
  agentPid?: number;
  /** When `agentPid` started; written by writeState, never set by hand. */
  agentPidStart?: number;
  startedAt: string;
  updatedAt: string;
  costUsd: number;
  /** The part of `costUsd` the reviewer's runs reported (--review-agent claude); absent until a reviewer reports one. */
  reviewCostUsd?: number;
  /**
   * Reviewer runs that reported no cost. Written by the review gate while an iteration's claims are verified, so the
   * loop can count an iteration whose reviewer reported no cost as unpriced, as one whose agent reported none.
   */
  reviewRunsUnpriced?: number;
  exitCode: number | null;
  message?: string;
  /** Iterations in a row that ended without progress (see docs/engine.md, "No progress"). */
  noProgressStreak: number;
  /**
   * Set when the agent of `iteration` has exited and its claims are being verified; removed when the iteration
   * is done. A resumed loop that finds it finishes the verification instead of running the agent again.
   */
  verifying?: AgentRunRecord;
  // Output format and one-shot flags belong to each invocation, not to the loop. `agent` is left out when
  // `agentCmd` is set, so the file never names an agent that is not the one running.
  options: Omit<RunOptions, PerInvocation | 'agent'> & { agent?: RunOptions['agent'] };
  /**
   * Set for a loop inside a Claude Code session (`/ralph-loop`, SPEC §12): its id is the session's, `pid` is Claude
   * Code's, and each stop of the session is one iteration, counted by the Stop hook (engine/hook/).
   */
  inSession?: true;
  /** Set when the loop was interrupted while --deliver pr-merge waited for CI: every story passed its final gate. */
  mergePending?: true;
  /** Set for a --worktree loop (git/worktree.ts): the tree it works in, beside the repository, and its branch. */
  worktree?: { path: string; branch: string };
  /** The plan's branch (`branchName`): where `status` and the dashboard read the loop's stories when the tree is elsewhere. */
  branch?: string;
  /** Set for a --parallel run: its workers, its merge queue and the stories merged so far (run/parallel/). */
  parallel?: ParallelState;
}

/** Where one worker of a --parallel run is. */
export type WorkerPhase = 'idle' | 'agent' | 'verifying' | 'queued' | 'merging';

/** One worker of a --parallel run: its worktree, and the story it works on (none while idle). */
export interface WorkerState {
  /** 1..n. */
  worker: number;
  /** Its worktree, beside the repository (`<repo>.ralph-worktrees/<loop id>--w<n>`). */
  path: string;
  phase: WorkerPhase;
  /** The story it works on; absent while idle. */
  story?: string;
  /** Its story branch, `<branchName>--<story id>`. */
  branch?: string;
  /** The run-wide number of its current (or last) agent run: iterations count agent runs over all workers. */
  iteration?: number;
  /** When its current story attempt started (ISO). */
  startedAt?: string;
  /** The agent's process group while it runs (as LoopState.agentPid), so a resume can stop it after a kill -9. */
  agentPid?: number;
  /** When `agentPid` started; written by writeState, never set by hand. */
  agentPidStart?: number;
}

/** A story verified on its branch, waiting for its turn in the merge queue (and verified again after the merge). */
export interface QueuedMerge {
  story: string;
  /** The story branch's verified head. */
  head: string;
  worker: number;
}

export interface ParallelState {
  /** How many workers (--parallel n). */
  workers: number;
  /** One entry per worker, in worker order. */
  states: WorkerState[];
  /** Stories waiting to be merged, first in line first. */
  queue: QueuedMerge[];
  /** Stories merged onto the plan's branch by this run, in merge order. */
  merged: string[];
  /** Failed attempts in a row per story; a story that reaches --no-progress-limit is given up. */
  attempts: Record<string, number>;
  /** Stories given up on (the agent said STUCK, or too many failed attempts) with the reason. */
  givenUp: Record<string, string>;
}

/** What the loop knows of an agent run once it has exited: all that is needed to finish its iteration without it. */
export interface AgentRunRecord {
  headBefore: string | null;
  headAfter: string | null;
  tag: Tag | null;
  /** Set when the agent committed on another branch: its claims, read before the runner switched back, are all rejected. */
  offBranch?: { prdAfter: string; reason: string };
  /** Set when the agent changed the runner's files or git's configuration: put back, and every claim rejected. */
  violation?: Violation;
}

/** How a loop ended, as its notifications report it (deliver/announce.ts). */
export interface LoopEnding {
  id: string;
  code: number;
  status: LoopStatus;
  /** The last iteration started. */
  iterations: number;
  /** Stories not set aside, and those of them that pass in the plan as the runner last settled it; null: unreadable. */
  storiesPassed: number | null;
  storiesTotal: number | null;
  /** null when the agent reports no cost (any agent but Claude Code, or --agent-cmd). Includes the reviewer's. */
  costUsd: number | null;
  /** The reviewer's part of `costUsd`, when a reviewer reported one. */
  reviewCostUsd?: number;
}
