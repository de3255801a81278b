// --parallel <n>: one plan, n workers (SPEC §12, issues #14, #29). The coordinator hands each ready story (its
// dependsOn merged) to a free worker (launch.ts, worker.ts), queues every story verified on its branch, and merges the
// queue onto the plan branch in batches: every story waiting when the queue is free goes in one pass, checked once
// after the merge (merge-queue.ts). What each attempt and merge comes to is outcomes.ts's; a story that fails on a
// stale base goes again on the new tip (stale-base.ts); how the run ends is end.ts's. Limits count for the whole run
// (core/limits.ts): max_iterations counts agent runs over all workers, the cost is one sum, Ctrl-C and cancel stop
// every worker.
import type { RunContext } from '../../types.js';
import type { LoopState, ParallelState, QueuedMerge, WorkerState } from '../../store/state-types.js';
import type { Prd } from '../../../prd/types.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';
import { limitBeforeJudging, limitBeforeRun, usageCeilingExit } from '../../core/limits.js';
import { headSha } from '../../git/head.js';
import { writeState } from '../../store/state-file.js';
import { recordsRoot } from '../../store/layout.js';
import { planSchedule } from './schedule.js';
import {
  closeWorkerTrees,
  deleteMergedStoryBranches,
  formerWorkers,
  releaseStoryBranches,
  workerTreePath,
} from './worker-trees.js';
import { ProtectedStop, type FoundChange } from './ending.js';
import { PlanBranch } from './plan-branch.js';
import { mergeBatch } from './merge-queue.js';
import { StaleBases } from './stale-base.js';
import { restoreIntegrationTree } from './merge.js';
import { Launcher } from './launch.js';
import { Outcomes } from './outcomes.js';
import { settleEnd } from './end.js';
import type { ParallelInput, Settled } from './types.js';
import { isObjectId } from '../../git/parse.js';
import { isSettled } from '../../../prd/skip.js';

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
  /** No agent ran during the merge under way (or the last one). */
  private quietMerge = false;
  /** Stories that failed on a stale base: waiting for the next merge, and what their next agent is told. */
  private readonly stale = new StaleBases();
  /** Workers whose verification the next merge pass waits for (their stories join the batch); null: not waiting. */
  private holdFor: Set<number> | null = null;
  /** A run of this loop ran before (state.json has its workers): its sealed plan tip is held to. */
  private readonly resumed: boolean;
  /** Sets free workers to work (launch.ts), and acts on what their work and the merges come to (outcomes.ts). */
  private readonly launcher: Launcher;
  private readonly outcomes: Outcomes;

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
    // Changes to what the workers share that a guard found and undid (ending.ts rejectOverlapping).
    const violations: FoundChange[] = [];
    const shared = { input, par: this.par, stale: this.stale, violations, branch: () => this.branch };
    this.launcher = new Launcher({ ...shared, mainRoot: this.mainRoot });
    this.outcomes = new Outcomes({ ...shared, inFlight: () => this.inFlight(), onError: (e) => this.onError(e) });
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
    if (this.now() < this.launcher.pausedUntil) return;
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
        this.running.set(ws.worker, this.launcher.rejudge(ws, id, again));
        continue;
      }
      const limit = await this.limitReached();
      if (limit) {
        this.stop = limit;
        return;
      }
      this.quietMerge = false;
      this.running.set(ws.worker, this.launcher.attempt(ws, id));
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
    return mergeBatch(this.branch, batch, this.signal).then(
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
      if (s.kind === 'attempt')
        await this.outcomes.afterAttempt(this.outcomes.overlapping(s.outcome, s.startedAt), s.base, s.startedAt);
      else if (s.kind === 'rejudge') this.outcomes.afterRejudge(s);
      else this.onError(s.error);
    } else {
      this.merging = null;
      if (s.kind === 'merge') this.outcomes.afterMerge(s.batch, s.outcome);
      else this.onError(s.error);
    }
    this.outcomes.releaseStale();
    this.save();
  }

  /** Another story is being worked on, verified, queued or merged: the plan's tip may yet move. */
  private inFlight(): boolean {
    return this.running.size > 0 || this.par.queue.length > 0 || this.merging !== null;
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

  /** Nothing runs and nothing waits to merge: the run is done, or ends with why it cannot go on (end.ts). */
  private settleEnd(): Promise<LoopExit | null> {
    return settleEnd({
      input: this.input,
      par: this.par,
      branch: this.branch,
      stop: this.stop,
      quietMerge: this.quietMerge,
      pausedUntil: this.launcher.pausedUntil,
      releaseStale: () => this.outcomes.releaseStale(),
    });
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
