// A scripted run of the loop's state machine (core/loop.ts) over fake edges: each Step says what one agent run
// does, and the harness records the events, saved states, sleeps and iterations the loop produced.
import { fakeLoopDeps } from './fake-loop-deps.js';
import { transientReason } from '../../src/engine/budget/ratelimit.js';
import { runLoop } from '../../src/engine/core/loop.js';
import { DEFAULT_OPTIONS } from '../../src/engine/cli/args.js';
import { LoopExit } from '../../src/engine/errors.js';
import type { LoopEvent } from '../../src/engine/events.js';
import type { AgentResult, LoopConfig, LoopDeps } from '../../src/engine/types.js';
import type { LoopState } from '../../src/engine/store/state-types.js';
import type { RateLimitHit } from '../../src/engine/budget/types.js';
import type { StoryVerdict, VerifyResult } from '../../src/engine/verify/types.js';
import { story } from './plan.js';

/** One scripted agent run: what it says, whether it commits, whether the plan is then all done. */
export interface Step {
  say?: string;
  commit?: boolean;
  allPass?: boolean;
  cost?: number;
  exitCode?: number;
  timedOut?: boolean;
  rateLimit?: boolean;
  stderr?: string;
  /** Verdicts verification returns for this run's claims. */
  verdicts?: StoryVerdict[];
  /** The run's commit changes only prd.json/progress.txt (a flipped `passes`, a note). */
  planOnly?: boolean;
  /** Verification is interrupted (Ctrl-C during a check): it throws LoopExit(130). */
  interrupted?: boolean;
  /** A reviewer ran during verification, reporting this cost (null: none), as ReviewSetup.spend records it. */
  reviewCost?: number | null;
}

export function makeState(over: Partial<LoopState> = {}): LoopState {
  return {
    id: 'test',
    agent: 'fake',
    prd: 'ralph/prd.json',
    iteration: 0,
    iterationDone: true,
    maxIterations: 10,
    status: 'running',
    pid: 1,
    startedAt: '',
    updatedAt: '',
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: { ...DEFAULT_OPTIONS },
    ...over,
  };
}

export function harness(
  steps: Step[],
  opts: {
    config?: Partial<LoopConfig>;
    state?: Partial<LoopState>;
    budget?: Array<'continue' | 'stop'>;
    abortAt?: number;
    extra?: Partial<LoopDeps>;
  } = {},
) {
  const events: LoopEvent[] = [];
  const saved: LoopState[] = [];
  const sleeps: number[] = [];
  const ran: number[] = [];
  let head = 0;
  let step = 0;
  let current: Step = {};
  const controller = new AbortController();
  const budget = [...(opts.budget ?? [])];
  const deps: LoopDeps = fakeLoopDeps({
    clock: { now: () => new Date(0), sleep: async (ms) => void sleeps.push(ms) },
    emit: (e) => events.push(e),
    signal: controller.signal,
    async runAgent(iteration) {
      ran.push(iteration);
      current = steps[Math.min(step++, steps.length - 1)];
      if (opts.abortAt === iteration) controller.abort();
      if (current.commit) head++;
      const result: AgentResult = {
        exitCode: current.exitCode ?? 0,
        signal: current.timedOut ? 'SIGTERM' : null,
        timedOut: current.timedOut ?? false,
        stdout: current.say ?? '',
        stderr: current.stderr ?? '',
        finalMessage: current.say ?? '',
        durationMs: 1,
        costUsd: current.cost,
      };
      return result;
    },
    prdBefore: () => '{}',
    headSha: async () => `sha${head}`,
    committedWork: async () => !current.planOnly,
    verify: async (): Promise<VerifyResult> => {
      if (current.interrupted) throw new LoopExit(130, 'interrupted while verifying');
      if (current.reviewCost === null) state.reviewRunsUnpriced = (state.reviewRunsUnpriced ?? 0) + 1;
      else if (current.reviewCost !== undefined) state.costUsd += current.reviewCost;
      return verdictFor(current);
    },
    detectRateLimit: (): RateLimitHit | null => (current.rateLimit ? { resetAt: null, message: 'limit hit' } : null),
    transientReason,
    budget: { beforeIteration: async () => budget.shift() ?? 'continue' },
    saveState: (s) => void saved.push(structuredClone(s)),
    finalGate: async () => ({ passed: true, interrupted: false, prd: verdictFor(current).prd, verdicts: [] }),
    ...opts.extra,
  });

  const config: LoopConfig = {
    maxIterations: 10,
    completionPromise: 'COMPLETE',
    pauseMs: 0,
    noProgressLimit: 3,
    retryBaseMs: 100,
    rateLimitBackoffMs: 1000,
    ...opts.config,
  };
  const state = makeState(opts.state);
  return { run: () => runLoop(state, config, deps), events, saved, sleeps, ran, state };
}

export function verdictFor(step: Step): VerifyResult {
  const prd = { branchName: 'b', userStories: [story('US-1', { title: 't', acceptanceCriteria: [] })] };
  return { verdicts: step.verdicts ?? [], restored: [], allPass: step.allPass ?? false, prd };
}
