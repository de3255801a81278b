// The --parallel coordinator's shapes (run.ts, launch.ts, outcomes.ts, end.ts): what it is handed, and what each
// thing it waits for settles into. Types only.
import type { BudgetGate } from '../../budget/types.js';
import type { Clock, LoopConfig, RunContext } from '../../types.js';
import type { LoopState, QueuedMerge } from '../../store/state-types.js';
import type { RunTrust } from '../../verify/trust.js';
import type { StoryVerdict } from '../../verify/types.js';
import type { Tag } from '../../core/tags.js';
import type { AttemptBase, Rejudge } from './stale-base.js';

export interface ParallelInput {
  run: RunContext;
  state: LoopState;
  trust: RunTrust;
  budget: BudgetGate;
  controller: AbortController;
  config: LoopConfig;
  /** The injected clock: the run's limits, rate-limit pauses and the guard findings' times read it. */
  clock: Clock;
}

/** A worker's attempt, a re-judge or a merge pass, as the coordinator's loop takes it when it is over. */
export type Settled =
  | { kind: 'attempt'; worker: number; startedAt: number; base: AttemptBase; outcome: AttemptOutcome }
  | { kind: 'attempt-failed'; worker: number; story: string; error: unknown }
  | {
      kind: 'rejudge';
      worker: number;
      story: string;
      base: AttemptBase;
      again: Rejudge;
      /** Null: the work did not merge onto the new tip. */
      outcome: AttemptOutcome | null;
    }
  | { kind: 'merge'; batch: QueuedMerge[]; outcome: BatchOutcome }
  | { kind: 'merge-failed'; error: unknown };

/** What one worker's attempt (worker.ts) comes to, for the coordinator to act on. */
export interface AttemptOutcome {
  story: string;
  worker: number;
  iteration: number;
  branch: string;
  /** The story's verdict on its branch; null when the agent did not claim it. */
  verdict: StoryVerdict | null;
  /** The story branch's head after verification (the runner's own commit of the verdict included). */
  head: string | null;
  tag: Tag | null;
  /** The story's notes as the worker's plan has them after verification. */
  notes: string | undefined;
}

/**
 * What one pass of the merge queue came to: the stories merged and published (as one commit, checked once), those
 * sent back, and those stories merged before that failed on the branch by itself (set back there: the batch goes
 * again). A queued story named in none of them waits for the next pass.
 */
export interface BatchOutcome {
  merged: string[];
  /** The published tip, when stories were merged. */
  commit?: string;
  /** How many stories the published merge's gate judged. */
  judged: number;
  sentBack: SentBack[];
  broken?: string[];
  interrupted?: boolean;
}

export interface SentBack {
  story: string;
  reason: string;
  /** Stories merged since the story's branch left the plan branch that its branch conflicts with (a stale base). */
  conflictsWith: string[];
}
