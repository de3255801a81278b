// A free worker of a --parallel run set to work, once the coordinator (run.ts) chose its story: the worker takes the
// story (saved at once, for status), then an agent's attempt (worker.ts runAttempt) or, for work judged again on a
// new tip, a re-judge with no agent run (rejudgeAttempt) starts; each settles into what the coordinator handles next.
// A rate limit one worker hits holds every new start until its wait is over.
import type { RunContext } from '../../types.js';
import type { LoopState, ParallelState, WorkerState } from '../../store/state-types.js';
import { writeState } from '../../store/state-file.js';
import type { FoundChange } from './ending.js';
import type { PlanBranch } from './plan-branch.js';
import type { AttemptBase, Rejudge, StaleBases } from './stale-base.js';
import type { ParallelInput, Settled } from './types.js';
import { rejudgeAttempt, runAttempt } from './worker.js';
import { storyBranch } from './worker-trees.js';

export interface LaunchContext {
  input: ParallelInput;
  par: ParallelState;
  mainRoot: string;
  /** What the next attempt's agent is told about a stale base (stale-base.ts takeNote). */
  stale: StaleBases;
  /** Where the workers' guard findings go (ending.ts rejectOverlapping reads them). */
  violations: FoundChange[];
  /** The plan branch, once the coordinator has it. */
  branch: () => PlanBranch;
}

export class Launcher {
  /** Until when no agent starts: a worker hit a rate limit, which the others would hit too (epoch ms). */
  pausedUntil = 0;
  private readonly input: ParallelInput;
  private readonly run: RunContext;
  private readonly state: LoopState;
  private readonly par: ParallelState;

  constructor(private readonly c: LaunchContext) {
    this.input = c.input;
    this.run = c.input.run;
    this.state = c.input.state;
    this.par = c.par;
  }

  private get branch(): PlanBranch {
    return this.c.branch();
  }

  private save(): void {
    writeState(this.run.paths.repoRoot, this.state);
  }

  /** Epoch ms by the injected clock. */
  private now(): number {
    return this.input.clock.now().getTime();
  }

  /** Worker `ws` runs an agent on story `id`: one agent run, counted toward --max-iterations. */
  attempt(ws: WorkerState, id: string): Promise<Settled> {
    const story = this.branch.plan.userStories.find((s) => s.id === id)!;
    this.state.iteration += 1;
    this.state.iterationDone = true;
    const iteration = this.state.iteration;
    this.occupy(ws, id, 'agent', iteration);
    const startedAt = this.now();
    const base: AttemptBase = { merged: this.par.merged.length };
    const note = this.c.stale.takeNote(id);
    const mergedSince = note?.mergedSince.map((m) => ({
      id: m,
      title: this.branch.plan.userStories.find((s) => s.id === m)?.title ?? '',
    }));
    const attempt = runAttempt({
      ...this.input,
      run: { ...this.run, emit: (e) => this.noteRateLimit(e) },
      mainRoot: this.c.mainRoot,
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
      onViolation: (reason) => this.c.violations.push({ at: this.now(), worker: ws.worker, iteration, reason }),
    });
    return attempt.then(
      (outcome): Settled => ({ kind: 'attempt', worker: ws.worker, startedAt, base, outcome }),
      (error): Settled => ({ kind: 'attempt-failed', worker: ws.worker, story: id, error }),
    );
  }

  /** A claim its checks failed on an older tip, judged again on the new one by worker `ws`, with no agent run. */
  rejudge(ws: WorkerState, id: string, again: Rejudge): Promise<Settled> {
    const story = this.branch.plan.userStories.find((s) => s.id === id)!;
    this.occupy(ws, id, 'verifying', again.iteration);
    const base: AttemptBase = { merged: this.par.merged.length };
    const attempt = rejudgeAttempt({
      ...this.input,
      run: this.run,
      mainRoot: this.c.mainRoot,
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
        this.c.violations.push({ at: this.now(), worker: ws.worker, iteration: again.iteration, reason }),
    });
    return attempt.then(
      (outcome): Settled => ({ kind: 'rejudge', worker: ws.worker, story: id, base, again, outcome }),
      (error): Settled => ({ kind: 'attempt-failed', worker: ws.worker, story: id, error }),
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
}
