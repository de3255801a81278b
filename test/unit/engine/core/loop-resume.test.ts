// A loop resumed after its checks were interrupted finishes that iteration without running the agent again
// (finishInterruptedIteration in loop.ts), driven with fake edges.
import { fakeLoopDeps } from '../../../support/fake-loop-deps.js';
import { describe, expect, it } from 'vitest';
import { runLoop } from '../../../../src/engine/core/loop.js';
import type { StoryVerdict, VerifyResult } from '../../../../src/engine/verify/types.js';
import type { LoopEvent } from '../../../../src/engine/events.js';
import { DEFAULT_OPTIONS } from '../../../../src/engine/cli/args.js';
import type { AgentRunRecord, LoopState } from '../../../../src/engine/store/state-types.js';
import type { LoopDeps, LoopConfig } from '../../../../src/engine/types.js';
import { LoopExit } from '../../../../src/engine/errors.js';

interface Script {
  /** What the pending verification decides (the first verify call); later calls pass everything. */
  verdicts?: StoryVerdict[];
  allPass?: boolean;
  interrupted?: boolean;
}

function harness(state: Partial<LoopState>, script: Script, config: Partial<LoopConfig> = {}) {
  const events: LoopEvent[] = [];
  const saved: LoopState[] = [];
  const ran: number[] = [];
  const verified: Array<{ iteration: number; head: string | null }> = [];
  const deps: LoopDeps = fakeLoopDeps({
    clock: { now: () => new Date(0), sleep: async () => {} },
    emit: (e) => events.push(e),
    signal: new AbortController().signal,
    runAgent: async (iteration) => {
      ran.push(iteration);
      return { exitCode: 0, signal: null, timedOut: false, stdout: '', stderr: '', finalMessage: '', durationMs: 1 };
    },
    prdBefore: (iteration) => `{"iteration":${iteration}}`,
    headSha: async () => 'sha-now',
    committedWork: async () => true,
    verify: async (iteration, _before, head): Promise<VerifyResult> => {
      const first = verified.length === 0;
      verified.push({ iteration, head });
      if (first && script.interrupted) throw new LoopExit(130, 'interrupted while verifying');
      const prd = { branchName: 'b', userStories: [] };
      return first
        ? { verdicts: script.verdicts ?? [], restored: [], allPass: script.allPass ?? false, prd }
        : { verdicts: [], restored: [], allPass: true, prd };
    },
    detectRateLimit: () => null,
    transientReason: () => null,
    budget: { beforeIteration: async () => 'continue' },
    saveState: (s) => void saved.push(structuredClone(s)),
    finalGate: async () => ({
      passed: true,
      interrupted: false,
      prd: { branchName: 'b', userStories: [] },
      verdicts: [],
    }),
  });

  const full: LoopState = {
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
    ...state,
  };
  const cfg: LoopConfig = {
    maxIterations: 10,
    completionPromise: 'COMPLETE',
    pauseMs: 0,
    noProgressLimit: 3,
    retryBaseMs: 1,
    rateLimitBackoffMs: 1,
    ...config,
  };
  return { run: () => runLoop(full, cfg, deps), state: full, events, saved, ran, verified };
}

const ran = (tag: AgentRunRecord['tag'] = null): AgentRunRecord => ({ headBefore: 'sha-a', headAfter: 'sha-b', tag });
const interrupted = (over: Partial<LoopState> = {}): Partial<LoopState> => ({
  iteration: 2,
  iterationDone: false,
  verifying: ran(),
  ...over,
});
const verified: StoryVerdict = { id: 'US-1', status: 'verified' };
const rejected: StoryVerdict = { id: 'US-1', status: 'rejected', reason: 'check `npm test` exited 1' };

describe('runLoop after an interrupted verification', () => {
  it.each<[string, Partial<LoopState>, Script, Partial<LoopConfig>, number, number[]]>([
    [
      'the claim passes and every story passes → 0, the agent never runs',
      interrupted(),
      { verdicts: [verified], allPass: true },
      {},
      0,
      [],
    ],
    [
      'the claim passes, stories remain → the agent runs next as iteration 3',
      interrupted(),
      { verdicts: [verified] },
      {},
      0,
      [3],
    ],
    [
      'the claim fails → rejected first, then the agent runs as iteration 3',
      interrupted(),
      { verdicts: [rejected] },
      {},
      0,
      [3],
    ],
    [
      'a rejection that completes the no-progress streak → 4 without the agent',
      interrupted({ noProgressStreak: 2 }),
      { verdicts: [rejected] },
      {},
      4,
      [],
    ],
    [
      'the agent had said STUCK → 3 without the agent',
      interrupted({ verifying: ran('stuck') }),
      { verdicts: [rejected] },
      {},
      3,
      [],
    ],
    [
      'it was the last iteration → 1 without the agent',
      interrupted(),
      { verdicts: [rejected] },
      { maxIterations: 2 },
      1,
      [],
    ],
    ['interrupted again → 130, nothing else runs', interrupted(), { interrupted: true }, {}, 130, []],
    [
      'the agent itself was interrupted (no record) → the iteration runs again',
      { iteration: 2, iterationDone: false },
      { allPass: true },
      {},
      0,
      [2],
    ],
  ])('%s', async (_name, state, script, config, code, agentRuns) => {
    const h = harness(state, script, config);
    expect((await h.run()).code).toBe(code);
    expect(h.ran).toEqual(agentRuns);
  });

  it('verifies as the interrupted iteration, at HEAD as it is now, and marks it done before the next one', async () => {
    const h = harness(interrupted(), { verdicts: [verified] });
    await h.run();
    expect(h.verified).toEqual([
      { iteration: 2, head: 'sha-now' },
      { iteration: 3, head: 'sha-now' },
    ]);
    expect(h.saved[0]).toMatchObject({ iteration: 2, iterationDone: true, noProgressStreak: 0 });
    expect(h.saved[0].verifying).toBeUndefined();
    expect(
      h.events
        .filter((e) => e.type === 'iteration-end')
        .map((e) => e.type === 'iteration-end' && [e.iteration, e.newCommit]),
    ).toEqual([
      [2, true],
      [3, false],
    ]);
  });

  it('a second interrupt leaves the record, so the next resume finishes the same iteration', async () => {
    const h = harness(interrupted(), { interrupted: true });
    await h.run();
    expect(h.state).toMatchObject({ iteration: 2, iterationDone: false, verifying: ran() });
    expect(h.saved).toEqual([]);
  });

  it('a normal iteration saves the record once the agent has exited, and removes it when the iteration is done', async () => {
    const h = harness({}, { verdicts: [verified], allPass: true });
    await h.run();
    expect(h.saved.map((s) => [s.iteration, s.iterationDone, s.verifying ? 'record' : null])).toEqual([
      [1, false, null],
      [1, false, 'record'],
      [1, true, null],
    ]);
    expect(h.saved[1].verifying).toEqual({ headBefore: 'sha-now', headAfter: 'sha-now', tag: null });
  });
});
