// What the --parallel coordinator (run.ts) does with what settles: an attempt verified on its story branch joins the
// merge queue; one that was not is tried again on a stale base (stale-base.ts) or counts an attempt, and too many in
// a row (or STUCK) give the story up; a re-judge on the new tip likewise; a merge pass marks its stories merged and
// its sent-back ones failed or stale. An accepted claim made while another worker's guard found a change to what the
// workers share is rejected first (ending.ts).
import type { RunContext } from '../../types.js';
import type { ParallelState, QueuedMerge } from '../../store/state-types.js';
import { storyGivenUp } from '../../core/limits.js';
import { findOverlap, rejectOverlapping, STUCK, type FoundChange } from './ending.js';
import type { PlanBranch } from './plan-branch.js';
import type { BatchOutcome } from './types.js';
import { firstLine, type AttemptBase, type StaleBases } from './stale-base.js';
import type { ParallelInput, Settled } from './types.js';
import type { AttemptOutcome } from './types.js';

export interface OutcomesContext {
  input: ParallelInput;
  par: ParallelState;
  stale: StaleBases;
  /** The workers' guard findings (launch.ts adds them). */
  violations: readonly FoundChange[];
  /** The plan branch, once the coordinator has it. */
  branch: () => PlanBranch;
  /** Another story is being worked on, verified, queued or merged: the plan's tip may yet move. */
  inFlight: () => boolean;
  onError: (error: unknown) => void;
}

export class Outcomes {
  private readonly run: RunContext;

  constructor(private readonly c: OutcomesContext) {
    this.run = c.input.run;
  }

  private inFlight(): boolean {
    return this.c.inFlight();
  }

  /** An accepted claim of an attempt during which another worker's guard found a change to what they all share: rejected. */
  overlapping(o: AttemptOutcome, startedAt: number): AttemptOutcome {
    const judged = rejectOverlapping(o, startedAt, this.c.violations);
    if (judged !== o)
      this.run.emit({
        type: 'warn',
        worker: o.worker,
        iteration: o.iteration,
        message: `${o.story} rejected: ${judged.verdict?.reason}`,
      });
    return judged;
  }

  /** A claim accepted on its story branch joins the merge queue; false when it was not accepted. */
  private queueAccepted(o: AttemptOutcome): boolean {
    if (!o.verdict || o.verdict.status === 'rejected' || !o.head) return false;
    this.c.par.queue.push({ story: o.story, head: o.head, worker: o.worker });
    this.run.emit({
      type: 'info',
      worker: o.worker,
      iteration: o.iteration,
      message: `${o.story} ${o.verdict.status} on ${o.branch}; waiting in the merge queue (${this.c.par.queue.length} in line)`,
    });
    return true;
  }

  /**
   * Judged again on the new tip: queued when it passes there. When its checks fail there too, the stale-base rule
   * applies again to the same work (stale-base.ts): with stories still in flight it waits for the next merge; with
   * none, its failure counts and its agent goes again. Work that does not merge onto the tip goes back to its agent.
   */
  afterRejudge(s: Extract<Settled, { kind: 'rejudge' }>): void {
    // Judged as the work's own attempt (the outcome carries its iteration): any guard finding since its agent started
    // but that attempt's own voids it, found by any worker, the one judging it now and the one that did it included.
    const o = s.outcome && this.overlapping(s.outcome, s.again.agentStartedAt);
    if (o && this.queueAccepted(o)) return;
    const worker = s.worker;
    if (!o?.verdict?.failedCheck) {
      const why = o ? firstLine(o.verdict?.reason ?? 'it was not claimed') : 'it does not merge onto it';
      this.run.emit({
        type: 'warn',
        worker,
        message: `${s.story}: its work judged again on the new tip was not accepted (${why}); its agent goes again, not counted toward --no-progress-limit`,
      });
      return;
    }
    const why = firstLine(o.verdict.reason ?? 'rejected');
    const message = `${s.story}: the work of iteration ${o.iteration}, judged again on the new tip, was not accepted: ${why}`;
    const stale = this.c.stale.onFailure(s.story, s.base, this.c.par.merged, this.inFlight(), {
      message,
      worker,
      why,
      rejudge: s.again,
    });
    if (stale.kind === 'count') return this.failedAttempt(s.story, null, `${message}; its agent goes again`, worker);
    this.run.emit({
      type: 'warn',
      worker,
      message: `${message}; judged again ${stale.kind === 'retry' ? `at once (merged meanwhile: ${stale.mergedSince.join(', ')})` : 'after the next merge (other stories are in flight)'}, not counted toward --no-progress-limit`,
    });
  }

  async afterAttempt(o: AttemptOutcome, base: AttemptBase, startedAt: number): Promise<void> {
    if (this.queueAccepted(o)) return;
    const why = o.verdict?.reason ?? 'it was not claimed (passes stayed false)';
    const message = `${o.story} not accepted in iteration ${o.iteration}: ${why}`;
    if (o.head)
      await this.c
        .branch()
        .recordAttempt(o.story, o.head)
        .catch((err: unknown) => this.c.onError(err));
    if (o.tag === 'stuck') return this.failedAttempt(o.story, STUCK, message, o.worker);
    // Work only its checks failed may pass on the new tip as it is: judged again there before an agent redoes it.
    // Not work done while another worker's guard found a change to what they share: no claim made then counts.
    const rejudge =
      o.verdict?.failedCheck && o.head && !findOverlap(o.iteration, startedAt, this.c.violations)
        ? { head: o.head, iteration: o.iteration, agentStartedAt: startedAt }
        : undefined;
    const stale = this.c.stale.onFailure(o.story, base, this.c.par.merged, this.inFlight(), {
      message,
      worker: o.worker,
      why: firstLine(why),
      ...(rejudge ? { rejudge } : {}),
    });
    if (stale.kind === 'count') return this.failedAttempt(o.story, null, message, o.worker);
    const where =
      stale.kind === 'retry'
        ? `on the new tip (merged since it started: ${stale.mergedSince.join(', ')})`
        : 'on the new tip after the next merge (other stories are in flight)';
    const next = rejudge
      ? `its work judged again as it is ${where}, and tried again if it still fails`
      : `tried again ${where}`;
    this.run.emit({
      type: 'warn',
      worker: o.worker,
      message: `${message}; ${next}, not counted toward --no-progress-limit`,
    });
  }

  /** Stories that waited for a merge go again; with nothing in flight, those with none since count their failure. */
  releaseStale(): void {
    const { retried, counted } = this.c.stale.release(this.c.par.merged, this.inFlight());
    for (const r of retried)
      this.run.emit({
        type: 'info',
        message: `${r.id} goes again on the new tip of ${this.run.branch} (merged since its attempt started: ${r.mergedSince.join(', ')})`,
      });
    for (const c of counted) this.failedAttempt(c.id, null, c.message, c.worker);
  }

  afterMerge(batch: readonly QueuedMerge[], o: BatchOutcome): void {
    const done = new Set([...o.merged, ...o.sentBack.map((b) => b.story)]);
    this.c.par.queue = this.c.par.queue.filter(
      (q) => !(done.has(q.story) && batch.some((b) => b.story === q.story && b.head === q.head)),
    );
    for (const id of o.merged) {
      this.c.par.merged.push(id);
      this.c.par.attempts[id] = 0;
    }
    if (o.merged.length)
      this.run.emit({
        type: 'info',
        message: `merged ${o.merged.join(', ')} onto ${this.run.branch} as ${o.commit!.slice(0, 7)}; verified again after the merge (the checks of ${o.judged} stor${o.judged === 1 ? 'y' : 'ies'}, once for ${o.merged.length === 1 ? 'it' : `these ${o.merged.length}`})`,
      });
    for (const b of o.sentBack) {
      const entry = batch.find((e) => e.story === b.story)!;
      // A conflict with stories merged since the branch left the plan branch: a stale base, not the story's fault.
      if (b.conflictsWith.length) {
        this.c.stale.noteConflict(b.story, b.conflictsWith, b.reason);
        this.run.emit({
          type: 'warn',
          worker: entry.worker,
          message: `${b.story} sent back: ${b.reason}; tried again on the new tip, not counted toward --no-progress-limit`,
        });
      } else {
        this.failedAttempt(b.story, null, `${b.story} sent back: ${b.reason}`, entry.worker);
      }
    }
  }

  /** A story that was not accepted counts an attempt; too many in a row (or STUCK) and the run gives up on it. */
  private failedAttempt(id: string, stuck: string | null, message: string, worker: number): void {
    const n = (this.c.par.attempts[id] ?? 0) + 1;
    this.c.par.attempts[id] = n;
    const limit = this.c.input.config.noProgressLimit;
    const givenUp = stuck ?? storyGivenUp(n, this.c.input.config);
    if (givenUp) this.c.par.givenUp[id] = givenUp;
    this.run.emit({
      type: 'warn',
      worker,
      message: `${message}${givenUp ? `; given up on ${id} (${givenUp})` : `; attempt ${n} of ${limit}`}`,
    });
  }
}
