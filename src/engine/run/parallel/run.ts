// --parallel <n>: one plan, n workers (SPEC §12, issues #14, #29). The coordinator hands each ready story (its
// dependsOn merged) to a free worker (worker.ts), queues every story verified on its branch, and merges the queue onto
// the plan branch in batches: every story waiting when the queue is free goes in one pass, checked once after the
// merge (plan-branch.ts). A story that fails on a stale base goes again on the new tip (stale-base.ts). Limits count
// for the whole run: max_iterations counts agent runs over all workers, the cost is one sum, Ctrl-C and cancel stop
// every worker.
import { loopSetupCache } from '../../verify/setup-cache.js';
import type { BudgetGate } from '../../budget/types.js';
import type { Clock, LoopConfig, RunContext } from '../../types.js';
import type { LoopState, ParallelState, QueuedMerge, WorkerState } from '../../store/state-types.js';
import type { Prd } from '../../../prd/types.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';
import { renderAllPass } from '../../core/exits.js';
import { limitBeforeJudging, limitBeforeRun, storyGivenUp, usageCeilingExit } from '../../core/limits.js';
import { headSha } from '../../git/head.js';
import { writeState } from '../../store/state-file.js';
import { recordsRoot } from '../../store/layout.js';
import { finalGate } from '../deps.js';
import type { RunTrust } from '../../verify/trust.js';
import { planSchedule } from './schedule.js';
import {
  closeWorkerTrees,
  deleteMergedStoryBranches,
  formerWorkers,
  rejudgeAttempt,
  releaseStoryBranches,
  runAttempt,
  storyBranch,
  workerTreePath,
  type AttemptOutcome,
} from './worker.js';
import { findOverlap, rejectOverlapping, renderNoWayOn, STUCK, type FoundChange } from './ending.js';
import { PlanBranch, type BatchOutcome } from './plan-branch.js';
import { firstLine, StaleBases, type AttemptBase, type Rejudge } from './stale-base.js';
import { restoreIntegrationTree } from './merge.js';
import { isObjectId } from '../../git/parse.js';
import { activeStories, isSettled } from '../../../prd/skip.js';

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

type Settled =
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

const INTERRUPTED = () =>
  new LoopExit(
    LOOP_EXIT.interrupted,
    'interrupted; every worker stopped, state saved',
    'continue with: ./ralph/ralph.sh --resume-last',
  );

export async function runParallel(input: ParallelInput): Promise<LoopExit> {
  const coordinator = new Coordinator(input);
  try {
    return await coordinator.loop();
  } finally {
    await coordinator.close();
  }
}

class Coordinator {
  private readonly run: RunContext;
  private readonly state: LoopState;
  private readonly par: ParallelState;
  private readonly mainRoot: string;
  private readonly running = new Map<number, Promise<Settled>>();
  private merging: Promise<Settled> | null = null;
  /** Why no new agent starts (a limit, a protected stop); the run ends with it once the workers are done. */
  private stop: LoopExit | null = null;
  private failure: unknown = null;
  private branch!: PlanBranch;
  /** Until when no agent starts: a worker hit a rate limit, which the others would hit too (epoch ms). */
  private pausedUntil = 0;
  /** No agent ran during the merge under way (or the last one). */
  private quietMerge = false;
  /** Changes to what the workers share that a guard found and undid (ending.ts rejectOverlapping). */
  private readonly violations: FoundChange[] = [];
  /** Stories that failed on a stale base: waiting for the next merge, and what their next agent is told. */
  private readonly stale = new StaleBases();
  /** Workers whose verification the next merge pass waits for (their stories join the batch); null: not waiting. */
  private holdFor: Set<number> | null = null;
  /** A run of this loop ran before (state.json has its workers): its sealed plan tip is held to. */
  private readonly resumed: boolean;

  constructor(private readonly input: ParallelInput) {
    this.run = input.run;
    this.state = input.state;
    this.mainRoot = recordsRoot(input.run.paths.repoRoot);
    const n = input.run.options.parallel ?? 1;
    const old = input.state.parallel;
    this.resumed = old !== undefined;
    // A resumed run's agents are gone: every worker starts idle, and the queue (verified heads) carries on. Stories
    // given up are tried again: the hint that ended the run said to fix the cause, then resume.
    this.par = {
      workers: n,
      states: Array.from({ length: n }, (_, i) => this.idle(i + 1)),
      queue: old?.queue ?? [],
      merged: old?.merged ?? [],
      attempts: {},
      givenUp: {},
    };
    this.state.parallel = this.par;
  }

  private idle(k: number): WorkerState {
    return { worker: k, path: workerTreePath(this.mainRoot, this.state.id, k), phase: 'idle' };
  }

  private save(): void {
    writeState(this.run.paths.repoRoot, this.state);
  }

  /** Epoch ms by the injected clock. */
  private now(): number {
    return this.input.clock.now().getTime();
  }

  private get signal(): AbortSignal {
    return this.input.controller.signal;
  }

  async loop(): Promise<LoopExit> {
    const tree = this.run.paths.repoRoot;
    await restoreIntegrationTree(tree, this.run.branch);
    await releaseStoryBranches(this.mainRoot, [
      ...this.par.states,
      ...formerWorkers(this.mainRoot, this.state.id, this.par.workers),
    ]);
    await deleteMergedStoryBranches(tree, this.run.branch, this.par.merged);
    const plan = JSON.parse(this.input.trust.baseline as string) as Prd;
    this.branch = new PlanBranch(this.run, this.state, this.input.trust, (await headSha(tree)) as string, plan);
    // A resume holds the branch to the tip its runner sealed; from here on this run's own tip is sealed.
    if (this.resumed) await this.branch.holdSeal();
    this.branch.sealTip();
    // A kill after a merge was published but before the state was saved leaves its story queued: it is merged.
    // And state.json is the agents' to write: only entries this run could have queued are kept (keepQueue); the
    // others' stories are scheduled again.
    this.par.queue = keepQueue(this.par.queue, plan);
    const max = this.input.config.maxIterations;
    this.run.emit({
      type: 'info',
      message: `${this.par.workers} worker${this.par.workers === 1 ? '' : 's'} on ${this.run.branch}; each story is verified on its own branch, then merged with the stories queued with it and verified again; ${max === 0 ? 'no iteration cap' : `at most ${max} agent runs over all workers`}`,
    });
    this.save();
    for (;;) {
      if (this.failure) throw this.failure;
      if (!this.signal.aborted) await this.startWorkers();
      if (
        !this.merging &&
        this.par.queue.length &&
        !this.signal.aborted &&
        !(this.stop instanceof ProtectedStop) &&
        !this.holdMerge()
      )
        this.merging = this.mergeNext();
      if (!this.running.size && !this.merging) {
        const end = await this.settleEnd();
        if (end) return end;
        continue;
      }
      const settled = await Promise.race([...this.running.values(), ...(this.merging ? [this.merging] : [])]);
      await this.handle(settled);
    }
  }

  /** Free workers take ready stories while the run's limits allow another agent run. */
  private async startWorkers(): Promise<void> {
    // The waiting worker wakes the loop when its wait is over (its attempt settles or goes on).
    if (this.now() < this.pausedUntil) return;
    for (const ws of this.par.states) {
      if (this.stop || ws.phase !== 'idle') continue;
      const schedule = planSchedule(this.branch.plan, this.busy(), new Set(Object.keys(this.par.givenUp)));
      const id = schedule.ready[0];
      if (!id) return;
      // Judging work again costs no agent run: only the time and cost limits hold it back (a reviewer is paid for).
      const again = this.stale.takeRejudge(id);
      if (again) {
        const limit = limitBeforeJudging(this.input.config, this.state, this.input.clock.now());
        if (limit) {
          this.stop = limit;
          return;
        }
        this.launchRejudge(ws, id, again);
        continue;
      }
      const limit = await this.limitReached();
      if (limit) {
        this.stop = limit;
        return;
      }
      this.launch(ws, id);
    }
  }

  private async limitReached(): Promise<LoopExit | null> {
    const { config, budget, clock } = this.input;
    const limit = limitBeforeRun(config, this.state, this.state.iteration, clock.now());
    if (limit) return limit;
    // --parallel refuses --wait (run/options.ts), so the hint does not offer it.
    if ((await budget.beforeIteration()) === 'stop') return usageCeilingExit(false);
    return null;
  }

  private busy(): Set<string> {
    const held = this.par.states.flatMap((w) => (w.story ? [w.story] : []));
    return new Set([...held, ...this.par.queue.map((q) => q.story), ...this.stale.waiting()]);
  }

  private launch(ws: WorkerState, id: string): void {
    this.quietMerge = false;
    const story = this.branch.plan.userStories.find((s) => s.id === id)!;
    this.state.iteration += 1;
    this.state.iterationDone = true;
    const iteration = this.state.iteration;
    this.occupy(ws, id, 'agent', iteration);
    const startedAt = this.now();
    const base: AttemptBase = { merged: this.par.merged.length };
    const note = this.stale.takeNote(id);
    const mergedSince = note?.mergedSince.map((m) => ({
      id: m,
      title: this.branch.plan.userStories.find((s) => s.id === m)?.title ?? '',
    }));
    const attempt = runAttempt({
      ...this.input,
      run: { ...this.run, emit: (e) => this.noteRateLimit(e) },
      mainRoot: this.mainRoot,
      worker: ws.worker,
      workers: this.par.workers,
      story,
      iteration,
      planTip: this.branch.tip,
      planText: this.input.trust.baseline as string,
      ...(mergedSince?.length ? { mergedSince, lastFailure: note?.lastFailure } : {}),
      onPid: (pid) => {
        ws.agentPid = pid;
        if (pid !== undefined) this.save();
      },
      onPhase: (phase) => {
        ws.phase = phase;
        this.save();
      },
      onViolation: (reason) => this.violations.push({ at: this.now(), worker: ws.worker, iteration, reason }),
    });
    this.running.set(
      ws.worker,
      attempt.then(
        (outcome): Settled => ({ kind: 'attempt', worker: ws.worker, startedAt, base, outcome }),
        (error): Settled => ({ kind: 'attempt-failed', worker: ws.worker, story: id, error }),
      ),
    );
  }

  /** Worker `ws` takes story `id` on its story branch, for the work of `iteration`; saved at once, for status. */
  private occupy(ws: WorkerState, id: string, phase: 'agent' | 'verifying', iteration: number): void {
    Object.assign(ws, {
      phase,
      story: id,
      branch: storyBranch(this.run.branch, id),
      iteration,
      startedAt: this.input.clock.now().toISOString(),
      agentPid: undefined,
    });
    this.save();
  }

  /** A claim its checks failed on an older tip, judged again on the new one by worker `ws`, with no agent run. */
  private launchRejudge(ws: WorkerState, id: string, again: Rejudge): void {
    const story = this.branch.plan.userStories.find((s) => s.id === id)!;
    this.occupy(ws, id, 'verifying', again.iteration);
    const base: AttemptBase = { merged: this.par.merged.length };
    const attempt = rejudgeAttempt({
      ...this.input,
      run: this.run,
      mainRoot: this.mainRoot,
      worker: ws.worker,
      workers: this.par.workers,
      story,
      iteration: again.iteration,
      planTip: this.branch.tip,
      planText: this.input.trust.baseline as string,
      head: again.head,
      onPid: () => undefined,
      onPhase: () => undefined,
      onViolation: (reason) =>
        this.violations.push({ at: this.now(), worker: ws.worker, iteration: again.iteration, reason }),
    });
    this.running.set(
      ws.worker,
      attempt.then(
        (outcome): Settled => ({ kind: 'rejudge', worker: ws.worker, story: id, base, again, outcome }),
        (error): Settled => ({ kind: 'attempt-failed', worker: ws.worker, story: id, error }),
      ),
    );
  }

  /** Passes each event on; a rate limit one worker hit holds every new start until its wait is over. */
  private noteRateLimit(e: Parameters<RunContext['emit']>[0]): void {
    this.run.emit(e);
    if (e.type !== 'rate-limit') return;
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + e.waitMs);
    this.run.emit({
      type: 'info',
      worker: e.worker,
      message: "no worker starts another agent until this rate limit's wait is over",
    });
  }

  /**
   * The queue waits for the verifications under way when it became free (at most one each): their stories, verified,
   * join the batch, which then costs one run of the merged stories' checks instead of two.
   */
  private holdMerge(): boolean {
    const verifying = this.par.states.filter((w) => w.phase === 'verifying').map((w) => w.worker);
    this.holdFor ??= new Set(verifying);
    if (verifying.some((w) => this.holdFor!.has(w))) return true;
    this.holdFor = null;
    return false;
  }

  private mergeNext(): Promise<Settled> {
    const batch = [...this.par.queue];
    // A gate that ran while no agent was alive can stand as the final gate; an agent running meanwhile could have
    // written into its checkout (same user, no sandbox), so then the final gate runs again at the end.
    this.quietMerge = this.running.size === 0;
    const names = batch.map((e) => `${e.story} (verified at ${e.head.slice(0, 7)})`).join(', ');
    this.run.emit({
      type: 'info',
      message: `merge queue: merging ${names} onto ${this.run.branch}${batch.length > 1 ? ` as one batch of ${batch.length}` : ''}`,
    });
    return this.branch.mergeBatch(batch, this.signal).then(
      (outcome): Settled => ({ kind: 'merge', batch, outcome }),
      (error): Settled => ({ kind: 'merge-failed', error }),
    );
  }

  private async handle(s: Settled): Promise<void> {
    if (s.kind === 'attempt' || s.kind === 'attempt-failed' || s.kind === 'rejudge') {
      this.running.delete(s.worker);
      // Its verification is over (or never came): the queue no longer waits for this worker's next one.
      this.holdFor?.delete(s.worker);
      const ws = this.par.states[s.worker - 1];
      Object.assign(ws, { phase: 'idle', story: undefined, branch: undefined, agentPid: undefined });
      if (s.kind === 'attempt') await this.afterAttempt(this.overlapping(s.outcome, s.startedAt), s.base, s.startedAt);
      else if (s.kind === 'rejudge') this.afterRejudge(s);
      else this.onError(s.error);
    } else {
      this.merging = null;
      if (s.kind === 'merge') this.afterMerge(s.batch, s.outcome);
      else this.onError(s.error);
    }
    this.releaseStale();
    this.save();
  }

  /** An accepted claim of an attempt during which another worker's guard found a change to what they all share: rejected. */
  private overlapping(o: AttemptOutcome, startedAt: number): AttemptOutcome {
    const judged = rejectOverlapping(o, startedAt, this.violations);
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
    this.par.queue.push({ story: o.story, head: o.head, worker: o.worker });
    this.run.emit({
      type: 'info',
      worker: o.worker,
      iteration: o.iteration,
      message: `${o.story} ${o.verdict.status} on ${o.branch}; waiting in the merge queue (${this.par.queue.length} in line)`,
    });
    return true;
  }

  /**
   * Judged again on the new tip: queued when it passes there. When its checks fail there too, the stale-base rule
   * applies again to the same work (stale-base.ts): with stories still in flight it waits for the next merge; with
   * none, its failure counts and its agent goes again. Work that does not merge onto the tip goes back to its agent.
   */
  private afterRejudge(s: Extract<Settled, { kind: 'rejudge' }>): void {
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
    const stale = this.stale.onFailure(s.story, s.base, this.par.merged, this.inFlight(), {
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

  private async afterAttempt(o: AttemptOutcome, base: AttemptBase, startedAt: number): Promise<void> {
    if (this.queueAccepted(o)) return;
    const why = o.verdict?.reason ?? 'it was not claimed (passes stayed false)';
    const message = `${o.story} not accepted in iteration ${o.iteration}: ${why}`;
    if (o.head) await this.branch.recordAttempt(o.story, o.head).catch((err: unknown) => this.onError(err));
    if (o.tag === 'stuck') return this.failedAttempt(o.story, STUCK, message, o.worker);
    // Work only its checks failed may pass on the new tip as it is: judged again there before an agent redoes it.
    // Not work done while another worker's guard found a change to what they share: no claim made then counts.
    const rejudge =
      o.verdict?.failedCheck && o.head && !findOverlap(o.iteration, startedAt, this.violations)
        ? { head: o.head, iteration: o.iteration, agentStartedAt: startedAt }
        : undefined;
    const stale = this.stale.onFailure(o.story, base, this.par.merged, this.inFlight(), {
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

  /** Another story is being worked on, verified, queued or merged: the plan's tip may yet move. */
  private inFlight(): boolean {
    return this.running.size > 0 || this.par.queue.length > 0 || this.merging !== null;
  }

  /** Stories that waited for a merge go again; with nothing in flight, those with none since count their failure. */
  private releaseStale(): void {
    const { retried, counted } = this.stale.release(this.par.merged, this.inFlight());
    for (const r of retried)
      this.run.emit({
        type: 'info',
        message: `${r.id} goes again on the new tip of ${this.run.branch} (merged since its attempt started: ${r.mergedSince.join(', ')})`,
      });
    for (const c of counted) this.failedAttempt(c.id, null, c.message, c.worker);
  }

  private afterMerge(batch: readonly QueuedMerge[], o: BatchOutcome): void {
    const done = new Set([...o.merged, ...o.sentBack.map((b) => b.story)]);
    this.par.queue = this.par.queue.filter(
      (q) => !(done.has(q.story) && batch.some((b) => b.story === q.story && b.head === q.head)),
    );
    for (const id of o.merged) {
      this.par.merged.push(id);
      this.par.attempts[id] = 0;
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
        this.stale.noteConflict(b.story, b.conflictsWith, b.reason);
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
    const n = (this.par.attempts[id] ?? 0) + 1;
    this.par.attempts[id] = n;
    const limit = this.input.config.noProgressLimit;
    const givenUp = stuck ?? storyGivenUp(n, this.input.config);
    if (givenUp) this.par.givenUp[id] = givenUp;
    this.run.emit({
      type: 'warn',
      worker,
      message: `${message}${givenUp ? `; given up on ${id} (${givenUp})` : `; attempt ${n} of ${limit}`}`,
    });
  }

  private onError(error: unknown): void {
    if (error instanceof LoopExit) {
      if (error.code === LOOP_EXIT.interrupted) return;
      // The first reason to stop wins; a protected stop (exit 6) also stops the merge queue.
      if (!this.stop || error.code === LOOP_EXIT.protected)
        this.stop = error.code === LOOP_EXIT.protected ? new ProtectedStop(error) : error;
      return;
    }
    this.failure ??= error;
    this.input.controller.abort();
  }

  /** Nothing runs and nothing waits to merge: the run is done, or ends with why it cannot go on. */
  private async settleEnd(): Promise<LoopExit | null> {
    const end = await this.settle();
    // The run ends with every agent gone and the branch where it left it: from now on the branch is yours.
    if (end && end.code !== LOOP_EXIT.protected) this.branch.sealTip({ ended: true });
    return end;
  }

  private async settle(): Promise<LoopExit | null> {
    // A protected stop outranks an interrupt: a plan branch moved behind the runner's back must not end as a
    // resumable 130, whose resume would build on the moved tip.
    if (this.stop instanceof ProtectedStop) return this.stop.exit;
    // Every agent is gone now: one that moved the plan branch before the run ended (Ctrl-C, a limit) without a merge
    // after it is found here (exit 6), not adopted by the next run as the runner's own tip.
    await this.branch.refuseMoved();
    if (this.signal.aborted) return INTERRUPTED();
    this.releaseStale();
    const schedule = planSchedule(this.branch.plan, new Set(), new Set(Object.keys(this.par.givenUp)));
    if (schedule.done) {
      // A setup built while an agent ran is not what exit 0 rests on: an agent that served a dependency (a tarball
      // from a server on 127.0.0.1) is gone now. Dropped, so the final gate installs again; its merge gate is no
      // final gate then.
      const rebuilt = loopSetupCache(this.run.paths.repoRoot, this.state.id).dropBuiltWhileAgentsRan();
      // The last merge was verified with every story's checks on this very commit: that was the final gate.
      const last = this.branch.lastGate;
      const active = activeStories(this.branch.plan.userStories).map((s) => s.id);
      if (
        !rebuilt &&
        this.quietMerge &&
        last &&
        last.commit === this.branch.tip &&
        active.every((id) => last.judged.includes(id))
      )
        // Its weak stories are named as the final gate names them (its sealed record lists them already).
        return new LoopExit(
          LOOP_EXIT.complete,
          renderAllPass(this.branch.plan, active.filter((id) => this.input.trust.weak.has(id)).sort()),
        );
      // The gate writes its verdicts on the plan branch when they fail: a commit of the runner's own.
      const gate = await this.branch.ownCommit(() =>
        finalGate(this.run, this.state, this.input.trust, this.state.iteration, this.signal),
      );
      if (gate.interrupted) return INTERRUPTED();
      if (gate.passed) return new LoopExit(LOOP_EXIT.complete, renderAllPass(gate.prd, gate.weak));
      // The final gate set the broken stories back (and committed that on the plan branch): they go round again.
      this.branch.plan = gate.prd;
      return this.stop;
    }
    if (this.stop) return this.stop;
    if (schedule.ready.length) {
      // Held by a rate limit with nothing else running: wait it out here rather than spin.
      const wait = this.pausedUntil - this.now();
      if (wait > 0) await this.input.clock.sleep(wait, this.signal);
      return null;
    }
    return renderNoWayOn(this.par.givenUp, schedule.blocked);
  }

  /** At the end, whatever it is: the workers' trees go (kept and named when they hold uncommitted work). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running.values(), ...(this.merging ? [this.merging] : [])]);
    for (const ws of this.par.states) Object.assign(ws, { phase: 'idle', story: undefined, agentPid: undefined });
    await closeWorkerTrees(
      this.mainRoot,
      [...this.par.states, ...formerWorkers(this.mainRoot, this.state.id, this.par.workers)],
      this.state.id,
      this.run.emit,
    );
    try {
      this.save();
    } catch {
      /* run.ts saves the end */
    }
  }
}

/** A stop that must not merge anything more: the plan branch moved, or an agent rewrote history. */
class ProtectedStop extends LoopExit {
  constructor(readonly exit: LoopExit) {
    super(exit.code, exit.message, exit.hint);
  }
}

/**
 * A resumed run's merge queue, read back from state.json (the agents' to write): only entries this run could have
 * queued are kept: an open story of the plan, not set aside, once, every story it depends on merged or set aside,
 * and a whole sha1 or sha256 id for its head.
 */
export function keepQueue(queue: readonly QueuedMerge[], plan: Prd): QueuedMerge[] {
  const byId = new Map(plan.userStories.map((s) => [s.id, s]));
  const seen = new Set<string>();
  return queue.filter((q) => {
    const story = byId.get(q?.story);
    // A story set aside is never worked: an entry for it would merge a head no check of its own ever judged.
    if (!story || isSettled(story) || seen.has(story.id) || !isObjectId(q.head)) return false;
    if (!(story.dependsOn ?? []).every((d) => !byId.has(d) || isSettled(byId.get(d)!))) return false;
    seen.add(story.id);
    return true;
  });
}
