// The run's limits (core/limits.ts), the one place both loops decide them: before an agent run, after an iteration,
// a story given up with --parallel, the unpriced stop and the usage ceiling's words.
import { describe, expect, it } from 'vitest';
import type { LoopConfig } from '../../../../src/engine/types.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import {
  limitAfterIteration,
  limitBeforeJudging,
  limitBeforeRun,
  storyGivenUp,
  unpricedExit,
  unpricedLimitReached,
  usageCeilingExit,
} from '../../../../src/engine/core/limits.js';
import { makeState } from '../../../support/loop-harness.js';

const config = (over: Partial<LoopConfig> = {}): LoopConfig => ({
  maxIterations: 5,
  completionPromise: 'COMPLETE',
  pauseMs: 0,
  noProgressLimit: 3,
  retryBaseMs: 1,
  rateLimitBackoffMs: 1,
  ...over,
});
const NOW = new Date(10_000);

type Case = [
  string,
  Partial<LoopConfig>,
  Partial<LoopState>,
  number,
  { code: number; status?: string; message: RegExp } | null,
];

describe('limitBeforeRun: another agent run, or the limit it would break', () => {
  const cases: Case[] = [
    ['under every limit', {}, {}, 4, null],
    [
      'the runs counted reach --max-iterations',
      {},
      {},
      5,
      { code: 1, status: 'max-iterations', message: /max iterations reached \(5\)/ },
    ],
    ['no cap (0): any number of runs', { maxIterations: 0 }, {}, 1000, null],
    [
      'the deadline has come',
      { deadline: 10_000, maxDurationMs: 60_000 },
      {},
      0,
      { code: 1, status: 'max-duration', message: /time limit reached \(--max-duration 1m00s\)/ },
    ],
    ['the deadline is still ahead', { deadline: 10_001 }, {}, 0, null],
    ['the cost reached --max-cost', { maxCost: 2 }, { costUsd: 2 }, 0, { code: 5, message: /cost limit reached/ }],
    ['the cost under --max-cost', { maxCost: 2 }, { costUsd: 1.99 }, 0, null],
    [
      'iterations before time before cost',
      { deadline: 0, maxCost: 1 },
      { costUsd: 9 },
      5,
      { code: 1, status: 'max-iterations', message: /max iterations/ },
    ],
    [
      'time before cost',
      { deadline: 0, maxCost: 1 },
      { costUsd: 9 },
      0,
      { code: 1, status: 'max-duration', message: /time limit/ },
    ],
  ];
  it.each(cases)('%s', (_name, over, state, ran, want) => {
    const exit = limitBeforeRun(config(over), makeState(state), ran, NOW);
    if (!want) return expect(exit).toBeNull();
    expect(exit).toMatchObject({ code: want.code, ...(want.status ? { status: want.status } : {}) });
    expect(exit!.message).toMatch(want.message);
    expect(exit!.hint).toBeTruthy();
  });
});

describe('limitBeforeJudging: work judged again with no agent run (--parallel)', () => {
  it('the time and cost limits hold, time first; the iteration limit does not', () => {
    const state = makeState({ iteration: 5 });
    expect(limitBeforeJudging(config(), state, NOW)).toBeNull();
    expect(limitBeforeJudging(config({ deadline: 10_001, maxCost: 2 }), makeState({ costUsd: 1.99 }), NOW)).toBeNull();
    expect(limitBeforeJudging(config({ maxCost: 2 }), makeState({ costUsd: 2 }), NOW)).toMatchObject({ code: 5 });
    expect(
      limitBeforeJudging(
        config({ deadline: 10_000, maxDurationMs: 60_000, maxCost: 1 }),
        makeState({ costUsd: 9 }),
        NOW,
      ),
    ).toMatchObject({ code: 1, status: 'max-duration' });
  });
});

describe('limitAfterIteration: the limit that ends the loop after an iteration', () => {
  const cases: Case[] = [
    ['nothing reached', {}, { iteration: 2, noProgressStreak: 2 }, 0, null],
    [
      'no progress for --no-progress-limit iterations',
      {},
      { iteration: 2, noProgressStreak: 3 },
      0,
      { code: 4, message: /no progress: 3 iterations in a row/ },
    ],
    [
      'one iteration without progress (limit 1)',
      { noProgressLimit: 1 },
      { iteration: 1, noProgressStreak: 1 },
      0,
      { code: 4, message: /no progress: 1 iteration in a row/ },
    ],
    [
      'the last iteration ran',
      {},
      { iteration: 5 },
      0,
      { code: 1, status: 'max-iterations', message: /max iterations reached \(5\)/ },
    ],
    [
      'the deadline has come',
      { deadline: 5_000 },
      { iteration: 1 },
      0,
      { code: 1, status: 'max-duration', message: /time limit reached/ },
    ],
    [
      'cost before no progress',
      { maxCost: 1 },
      { iteration: 5, noProgressStreak: 3, costUsd: 1 },
      0,
      { code: 5, message: /cost limit/ },
    ],
    [
      'no progress before the iteration limit',
      {},
      { iteration: 5, noProgressStreak: 3 },
      0,
      { code: 4, message: /no progress/ },
    ],
    ['no cap (0): iteration 1000 ends nothing', { maxIterations: 0 }, { iteration: 1000 }, 0, null],
    ['no deadline: time never ends it', {}, { iteration: 1 }, 0, null],
    ['no --max-cost: any cost goes on', {}, { iteration: 1, costUsd: 1e9 }, 0, null],
    [
      'a deadline without its --max-duration (a resumed run): no duration named',
      { deadline: 5_000 },
      { iteration: 1 },
      0,
      { code: 1, status: 'max-duration', message: /^time limit reached with stories still open$/ },
    ],
  ];
  it.each(cases)('%s', (_name, over, state, _ran, want) => {
    const exit = limitAfterIteration(config(over), makeState(state), NOW);
    if (!want) return expect(exit).toBeNull();
    expect(exit).toMatchObject({ code: want.code, ...(want.status ? { status: want.status } : {}) });
    expect(exit!.message).toMatch(want.message);
  });

  it.each([
    [
      { noProgressStreak: 3 },
      'read ralph/progress.txt and the iteration logs in ralph/.runs/, then adjust prompt.md or the plan',
    ],
    [
      { iteration: 1 },
      'continue with: ./ralph/ralph.sh --resume-last (it gets the same time again; a new --max-duration replaces it)',
    ],
  ])('each limit has its hint: %j', (state, hint) => {
    expect(limitAfterIteration(config({ deadline: 5_000 }), makeState(state), NOW)?.hint).toBe(hint);
  });
});

describe('the other limits', () => {
  it.each([
    [1, null],
    [2, null],
    [3, 'no progress: 3 attempts in a row without a verified merge'],
    [4, 'no progress: 4 attempts in a row without a verified merge'],
  ])('--parallel gives up on a story after %i failed attempts (limit 3): %s', (attempts, want) => {
    expect(storyGivenUp(attempts, config())).toBe(want);
  });

  it('one failed attempt with a limit of 1 gives up, in the singular', () => {
    expect(storyGivenUp(1, config({ noProgressLimit: 1 }))).toBe(
      'no progress: 1 attempt in a row without a verified merge',
    );
  });

  it.each([
    [{ maxIterations: 0, maxCost: 5 }, 3, true],
    [{ maxIterations: 0, maxCost: 5 }, 2, false],
    [{ maxIterations: 10, maxCost: 5 }, 3, false],
    [{ maxIterations: 0 }, 3, false],
  ])('unpriced iterations: %o, %i in a row → %s', (over, n, want) => {
    expect(unpricedLimitReached(config(over), n)).toBe(want);
  });

  it('the usage ceiling offers --wait only where the loop can wait', () => {
    expect(usageCeilingExit(true)).toMatchObject({
      code: 5,
      message: 'usage ceiling reached',
      hint: 'continue after the reset with --resume-last, or add --wait',
    });
    expect(usageCeilingExit(false).hint).toBe('continue after the reset with --resume-last');
  });
});

describe('unpricedExit', () => {
  it('says how many iterations went unpriced, what was counted, and how to continue with a cap', () => {
    const exit = unpricedExit(makeState({ costUsd: 1.5 }));
    expect(exit.code).toBe(5);
    expect(exit.message).toBe(
      'no cost reported for 3 iterations in a row ($1.50 counted so far): with no iteration cap, --max-cost cannot bound this run',
    );
    expect(exit.hint).toBe(
      'read the last iteration logs in ralph/.runs/, then continue with a number of iterations: ./ralph/ralph.sh --resume-last 10',
    );
  });
});
