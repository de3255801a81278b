// The --parallel coordinator's shapes (run.ts, launch.ts, outcomes.ts, end.ts): what it is handed, and what each
// thing it waits for settles into. Types only.
import type { BudgetGate } from '../../budget/types.js';
import type { Clock, LoopConfig, RunContext } from '../../types.js';
import type { LoopState, QueuedMerge } from '../../store/state-types.js';
import type { RunTrust } from '../../verify/trust.js';
import type { AttemptOutcome } from './worker.js';
import type { BatchOutcome } from './plan-branch.js';
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
