// A story of a --parallel run that fails on a stale base (issue #29): its attempt started from a plan tip that other
// stories, still being worked on or merged, have moved on from or are about to. Real plans do not declare every
// change a story needs from another, and three quick failures on the old tip would give it up while the change it
// needs waits in the merge queue. Pure (no git, no processes): the coordinator (run.ts, outcomes.ts) asks and acts.
//
// The rule: a failure after which stories were merged since the attempt started is tried again at once, on the new
// tip; a failure while other stories are in flight (a worker on them, or in the merge queue) waits for the next
// merge, then is tried again there. Neither counts toward --no-progress-limit, and the next attempt's agent is told
// what was merged since. Each such retry needs a merge since the last one, so they are bounded by the plan's stories.
// A failure with nothing merged since and nothing in flight counts as before.
//
// Work whose only fault was a failing check may be right on the new tip: the change it was missing has just been
// merged. So such a claim is first judged again there, merged onto the new tip by the runner, with no agent run
// (worker.ts rejudgeAttempt); only if that fails too does an agent redo the story.

/** Where an attempt started: how many stories the run had merged then (an index into ParallelState.merged). */
export interface AttemptBase {
  merged: number;
}

/** What the next attempt's agent is told: the stories merged since its last attempt started, and why that one failed. */
export interface RetryNote {
  mergedSince: string[];
  lastFailure?: string;
}

interface Parked {
  base: AttemptBase;
  /** The warning to give, with the attempt counted, if the story is let go without a merge since. */
  message: string;
  worker: number;
  lastFailure: string;
}

export type FailureOutcome = { kind: 'retry'; mergedSince: string[] } | { kind: 'park' } | { kind: 'count' };

/**
 * A claim rejected only by its checks: the story branch's head after it, the iteration whose work it is, and when
 * that iteration's agent started (epoch ms): a change to what the workers share found by any guard since then voids
 * the work wherever it is judged (ending.ts rejectOverlapping), as it would have voided the first verdict.
 */
export interface Rejudge {
  head: string;
  iteration: number;
  agentStartedAt: number;
}

export class StaleBases {
  private readonly parked = new Map<string, Parked>();
  private readonly notes = new Map<string, RetryNote>();
  private readonly rejudges = new Map<string, Rejudge>();

  /**
   * A failed attempt of `id` (not STUCK) that started at `base`. `merged`: the run's merged stories now, in order;
   * `inFlight`: another story is being worked on, verified or merged.
   */
  onFailure(
    id: string,
    base: AttemptBase,
    merged: readonly string[],
    inFlight: boolean,
    failure: { message: string; worker: number; why: string; rejudge?: Rejudge },
  ): FailureOutcome {
    const since = merged.slice(base.merged);
    const outcome: FailureOutcome = since.length ? { kind: 'retry', mergedSince: since } : { kind: 'park' };
    if (!since.length && !inFlight) return { kind: 'count' };
    if (failure.rejudge) this.rejudges.set(id, failure.rejudge);
    if (since.length) this.notes.set(id, { mergedSince: since, lastFailure: failure.why });
    else this.parked.set(id, { base, message: failure.message, worker: failure.worker, lastFailure: failure.why });
    return outcome;
  }

  /** A story the merge queue sent back for a conflict with stories merged since it started: told of them next time. */
  noteConflict(id: string, conflictsWith: readonly string[], why: string): void {
    this.notes.set(id, { mergedSince: [...conflictsWith], lastFailure: why });
  }

  /** Stories waiting for the next merge: no worker takes them meanwhile. */
  waiting(): string[] {
    return [...this.parked.keys()];
  }

  /**
   * After anything settled: parked stories with a merge since their attempt started go again (uncounted, with a
   * note); with nothing in flight any more, the others go too, their failure counted now (`counted`).
   */
  release(
    merged: readonly string[],
    inFlight: boolean,
  ): { retried: { id: string; mergedSince: string[] }[]; counted: { id: string; message: string; worker: number }[] } {
    const retried: { id: string; mergedSince: string[] }[] = [];
    const counted: { id: string; message: string; worker: number }[] = [];
    for (const [id, p] of this.parked) {
      const since = merged.slice(p.base.merged);
      if (since.length) {
        this.notes.set(id, { mergedSince: since, lastFailure: p.lastFailure });
        retried.push({ id, mergedSince: since });
      } else if (!inFlight) {
        counted.push({ id, message: p.message, worker: p.worker });
        this.rejudges.delete(id);
      } else {
        continue;
      }
      this.parked.delete(id);
    }
    return { retried, counted };
  }

  /** The claim of `id` to judge again on the new tip before its next agent run, once (undefined: none). */
  takeRejudge(id: string): Rejudge | undefined {
    const r = this.rejudges.get(id);
    this.rejudges.delete(id);
    return r;
  }

  /** The note for `id`'s next attempt, once. */
  takeNote(id: string): RetryNote | undefined {
    const note = this.notes.get(id);
    this.notes.delete(id);
    return note;
  }
}

/** A failure's reason in a line, for the next attempt's note. */
export function firstLine(text: string): string {
  const line = text.split('\n')[0];
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
