// The loop's state machine driven with fake edges: no processes, no git, no real time.
import { describe, expect, it } from 'vitest';
import { harness, verdictFor, type Step } from '../../../support/loop-harness.js';
import { renderAllPass } from '../../../../src/engine/core/exits.js';
import { planRateLimitWait } from '../../../../src/engine/core/retries.js';
import type { Prd } from '../../../../src/prd/types.js';
import type { RateLimitHit } from '../../../../src/engine/budget/types.js';
import type { StoryVerdict } from '../../../../src/engine/verify/types.js';
import { WorkProtected } from '../../../../src/engine/errors.js';
import { story as baseStory } from '../../../support/plan.js';

const work = { commit: true };
const rejected = (id = 'US-1'): StoryVerdict => ({ id, status: 'rejected', reason: 'check `npm test` exited 1' });
const verified = (id = 'US-1'): StoryVerdict => ({ id, status: 'verified' });
/** A liar's iteration: flips passes, commits only the plan, and the claim is rejected. */
const lie: Step = { commit: true, planOnly: true, verdicts: [rejected()] };

describe('runLoop exit codes', () => {
  it.each<[string, Step[], Parameters<typeof harness>[1], number, number]>([
    ['all stories pass under verification → 0', [work, work, { commit: true, allPass: true }], {}, 0, 3],
    ['all pass without COMPLETE, after one iteration → 0', [{ commit: true, allPass: true }], {}, 0, 1],
    [
      'COMPLETE with stories open is ignored; max iterations → 1',
      [{ say: '<promise>COMPLETE</promise>', commit: true }],
      { config: { maxIterations: 2 } },
      1,
      2,
    ],
    [
      'COMPLETE inside a sentence does not count → 1',
      [{ say: 'say <promise>COMPLETE</promise> when done', commit: true }],
      { config: { maxIterations: 2 } },
      1,
      2,
    ],
    ['STUCK on its own line → 3', [work, { say: 'blocked\n<promise>STUCK</promise>' }], {}, 3, 2],
    ['three iterations without a commit → 4', [{}], {}, 4, 3],
    ['a commit resets the no-progress streak', [{}, {}, work, {}, {}, {}], {}, 4, 6],
    ['--no-progress-limit 1 → 4 after one silent iteration', [{}], { config: { noProgressLimit: 1 } }, 4, 1],
    ['cost over --max-cost → 5', [{ commit: true, cost: 0.6 }], { config: { maxCost: 1 } }, 5, 2],
    ['budget says stop before an iteration → 5', [work], { budget: ['continue', 'stop'] }, 5, 1],
    [
      'a timed-out iteration counts and the loop goes on',
      [{ timedOut: true }, work, { commit: true, allPass: true }],
      {},
      0,
      3,
    ],
    ['SIGINT during the agent → 130', [work], { abortAt: 2 }, 130, 2],
    ['a liar whose every commit only flips passes → 4', [lie], {}, 4, 3],
    ['commits of real work whose claims are all rejected → 4', [{ commit: true, verdicts: [rejected()] }], {}, 4, 3],
    ['commits that only touch the plan, without claims → 4', [{ commit: true, planOnly: true }], {}, 4, 3],
    [
      'an accepted claim is progress even without a commit',
      [lie, lie, { verdicts: [verified()] }, lie, lie, lie],
      {},
      4,
      6,
    ],
    [
      'one accepted claim among rejected ones is progress',
      [lie, lie, { commit: true, planOnly: true, verdicts: [rejected('US-2'), verified()] }, lie, lie, lie],
      {},
      4,
      6,
    ],
    ['a commit of work without claims is progress', [lie, lie, work, lie, lie, lie], {}, 4, 6],
    [
      'max iterations 0: no cap, past ten iterations until the plan is done → 0',
      [...Array(14).fill({ ...work, cost: 0.01 }), { commit: true, allPass: true }],
      { config: { maxIterations: 0, maxCost: 100 } },
      0,
      15,
    ],
    [
      'max iterations 0 bounded by cost: three iterations in a row with no cost reported end it → 5',
      [{ ...work, cost: 0.01 }, work, work, { ...work, cost: 0.01 }, work, work, work, work],
      { config: { maxIterations: 0, maxCost: 100 } },
      5,
      7,
    ],
    [
      'max iterations 0 bounded by cost: an iteration whose reviewer reported no cost is unpriced too; three in a row end it → 5',
      [
        { ...work, cost: 0.01 },
        { ...work, cost: 0.01, reviewCost: null },
        { ...work, cost: 0.01, reviewCost: 0.02 },
        { ...work, cost: 0.01, reviewCost: null },
        { ...work, cost: 0.01, reviewCost: null },
        { ...work, cost: 0.01, reviewCost: null },
        work,
      ],
      { config: { maxIterations: 0, maxCost: 100 } },
      5,
      6,
    ],
    [
      'with an iteration cap, iterations without a cost are no reason to stop',
      [work, work, work, work, { commit: true, allPass: true }],
      { config: { maxIterations: 10, maxCost: 100 } },
      0,
      5,
    ],
    [
      'max iterations 0: no cap, until the cost budget ends it → 5',
      [{ commit: true, cost: 0.1 }],
      { config: { maxIterations: 0, maxCost: 1.5 } },
      5,
      15,
    ],
    [
      'a loop with its own completion word: the default tag is not it; STUCK still is → 3',
      [{ say: '<promise>COMPLETE</promise>', commit: true }, { say: '<promise>STUCK</promise>' }],
      { config: { completionPromise: 'WORK_COMPLETE' } },
      3,
      2,
    ],
  ])('%s', async (_name, steps, opts, code, iterations) => {
    const h = harness(steps, opts);
    const exit = await h.run();
    expect(exit.code).toBe(code);
    expect(h.ran.at(-1)).toBe(iterations);
  });
});

describe('the completion word (--completion-promise)', () => {
  it.each([
    [
      "the loop's own word is the completion tag: with stories open, it is named in the warning",
      'WORK_COMPLETE',
      '<promise>WORK_COMPLETE</promise>',
      'complete',
    ],
    [
      'the default tag, in a loop with its own word, is no tag at all',
      'WORK_COMPLETE',
      '<promise>COMPLETE</promise>',
      null,
    ],
    ['the default word by default', 'COMPLETE', '<promise>COMPLETE</promise>', 'complete'],
  ])('%s', async (_name, word, say, tag) => {
    const h = harness([{ say, commit: true }], { config: { maxIterations: 1, completionPromise: word } });
    await h.run();
    expect(h.events).toContainEqual(expect.objectContaining({ type: 'agent-exit', tag }));
    const ignored = h.events.find((e) => e.type === 'warn' && e.message.includes('ignored'));
    expect(ignored && 'message' in ignored ? ignored.message : null).toBe(
      tag ? `${word} ignored: 1 story not passing under verification (US-1)` : null,
    );
  });
});

describe('runLoop bookkeeping', () => {
  it('records each iteration as started before the agent runs, once more when the agent has exited, and done after verification', async () => {
    const h = harness([work, { commit: true, allPass: true }]);
    await h.run();
    expect(h.saved.map((s) => [s.iteration, s.iterationDone])).toEqual([
      [1, false],
      [1, false],
      [1, true],
      [2, false],
      [2, false],
      [2, true],
    ]);
  });

  it('resumes at an unfinished iteration, and after a finished one', async () => {
    const unfinished = harness([{ commit: true, allPass: true }], { state: { iteration: 4, iterationDone: false } });
    await unfinished.run();
    expect(unfinished.ran).toEqual([4]);
    const finished = harness([{ commit: true, allPass: true }], { state: { iteration: 4, iterationDone: true } });
    await finished.run();
    expect(finished.ran).toEqual([5]);
  });

  it('an interrupted verification leaves the iteration not done, so a resume repeats it', async () => {
    const h = harness([work, { commit: true, interrupted: true }]);
    const exit = await h.run();
    expect(exit.code).toBe(130);
    expect(h.state).toMatchObject({ iteration: 2, iterationDone: false, noProgressStreak: 0 });
    expect(
      h.events.filter((e) => e.type === 'iteration-end').map((e) => e.type === 'iteration-end' && e.iteration),
    ).toEqual([1]);
  });

  it('says why an iteration with a commit was not progress', async () => {
    const h = harness([lie], { config: { maxIterations: 1 } });
    await h.run();
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'info',
        message: 'iteration 1 made a commit but no progress: every claim was rejected (US-1)',
      }),
    );
    expect(h.state.noProgressStreak).toBe(1);
  });

  it('sums the cost the agent reports', async () => {
    const h = harness([
      { commit: true, cost: 0.25 },
      { commit: true, cost: 0.5, allPass: true },
    ]);
    await h.run();
    expect(h.state.costUsd).toBeCloseTo(0.75);
  });

  it('repeats a rate-limited iteration without counting it', async () => {
    const h = harness([{ rateLimit: true }, { rateLimit: true }, { commit: true, allPass: true }], {
      config: { maxIterations: 1 },
    });
    const exit = await h.run();
    expect(exit.code).toBe(0);
    expect(h.ran).toEqual([1, 1, 1]);
    expect(h.sleeps).toEqual([1000, 2000]);
    expect(h.events.filter((e) => e.type === 'rate-limit')).toHaveLength(2);
  });

  it('retries a transient failure at most 3 times, then counts the iteration as failed', async () => {
    const h = harness([{ exitCode: 1, stderr: 'Error: No messages returned from query' }], {
      config: { maxIterations: 2, noProgressLimit: 5 },
    });
    const exit = await h.run();
    expect(exit.code).toBe(1);
    expect(h.ran).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    expect(h.sleeps).toEqual([100, 200, 400, 100, 200, 400]);
  });

  it.each([
    [
      'an overloaded API (529)',
      { exitCode: 1, say: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}' },
      /overloaded \(529\)/,
    ],
    [
      'an API error with a failing exit',
      { exitCode: 1, say: 'API Error: Unable to connect to API' },
      /API call failed/,
    ],
    ['no output and a failing exit', { exitCode: 1 }, /exited 1 with no output/],
  ])('repeats the run after %s, with the reason', async (_name, first, reason) => {
    const h = harness([first, { commit: true, allPass: true }], { config: { maxIterations: 1 } });
    const exit = await h.run();
    expect(exit.code).toBe(0);
    expect(h.ran).toEqual([1, 1]);
    expect(h.events).toContainEqual(
      expect.objectContaining({ type: 'retry', iteration: 1, attempt: 1, reason: expect.stringMatching(reason) }),
    );
  });

  it('does not repeat a failed run whose summary merely mentions "No messages returned"', async () => {
    const h = harness([{ exitCode: 1, say: 'Fixed the handler that printed No messages returned; tests still fail' }], {
      config: { maxIterations: 1 },
    });
    await h.run();
    expect(h.ran).toEqual([1]);
    expect(h.events.filter((e) => e.type === 'retry')).toEqual([]);
  });

  it('logs an ignored COMPLETE with the stories still open', async () => {
    const h = harness([{ say: '<promise>COMPLETE</promise>', commit: true }], { config: { maxIterations: 1 } });
    await h.run();
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'warn',
        message: expect.stringMatching(/COMPLETE ignored: 1 story not passing.*US-1/),
      }),
    );
  });
});

describe('planRateLimitWait', () => {
  const now = new Date('2026-01-01T10:00:00Z');
  it.each<[string, RateLimitHit, number, number]>([
    [
      'until the named reset plus slack',
      { resetAt: new Date('2026-01-01T10:05:00Z'), message: '' },
      1,
      300_000 + 30_000,
    ],
    ['a doubling back-off when no time is named', { resetAt: null, message: '' }, 3, 240_000],
    ['never more than 12 hours', { resetAt: new Date('2026-01-03T10:00:00Z'), message: '' }, 1, 12 * 3_600_000],
    [
      'at least a second when the reset has passed',
      { resetAt: new Date('2026-01-01T09:00:00Z'), message: '' },
      1,
      1000,
    ],
  ])('%s', (_name, hit, attempt, expected) => {
    expect(planRateLimitWait(hit, now, 60_000, attempt)).toBe(expected);
  });
});

describe('runLoop after the agent: git safety and timeouts', () => {
  it('verifies at the HEAD the git inspection returns, and hands on the claims of an agent that left the branch', async () => {
    const offBranch = {
      prdAfter: '{"userStories":[]}',
      reason: 'the work is not on ralph/x: the agent committed it on main',
    };
    const seen: unknown[] = [];
    const h = harness([{ commit: true }], {
      config: { maxIterations: 1 },
      extra: {
        readBranchTips: async () => ['tip'],
        inspectAgentGit: async (_i, before, tips) => (seen.push([before, tips]), { headAfter: before, offBranch }),
        verify: async (_i, _p, head, off) => (seen.push([head, off]), verdictFor({})),
      },
    });
    const exit = await h.run();
    expect(seen).toEqual([
      ['sha0', ['tip']],
      ['sha0', offBranch],
    ]);
    // The agent's commit went elsewhere, so on the loop's branch there is no new commit and no progress.
    expect(h.events).toContainEqual(
      expect.objectContaining({ type: 'iteration-end', newCommit: false, noProgressStreak: 1 }),
    );
    expect(exit.code).toBe(1);
  });

  it('ends the loop with the failure the git inspection throws, before verification, the iteration not done', async () => {
    let verified = false;
    const h = harness([work], {
      extra: {
        inspectAgentGit: async () => Promise.reject(new WorkProtected('history rewritten', 'git reset --hard abc')),
        verify: async () => ((verified = true), verdictFor({})),
      },
    });
    const exit = await h.run();
    expect(exit).toBeInstanceOf(WorkProtected);
    expect(exit).toMatchObject({ code: 6, message: 'history rewritten' });
    expect(verified).toBe(false);
    expect(h.state.iterationDone).toBe(false);
  });

  it.each([
    ['a timed-out run', true, [1]],
    ['a run that ends in time', false, []],
  ])('records the timeout for %s', async (_name, timedOut, expected) => {
    const noted: number[] = [];
    const h = harness([{ timedOut, commit: true, allPass: true }], {
      extra: { recordTimeout: (i) => void noted.push(i) },
    });
    await h.run();
    expect(noted).toEqual(expected);
  });

  it.each([
    ['1 iteration in a row', 1],
    ['2 iterations in a row', 2],
  ])('says "%s" in the no-progress stop', async (words, limit) => {
    const exit = await harness([{}], { config: { noProgressLimit: limit } }).run();
    expect(exit.message).toBe(`no progress: ${words} with no claim accepted and no new work committed`);
  });
});

describe('renderAllPass', () => {
  const story = (id: string, checks?: string[]) =>
    baseStory(id, { title: id, acceptanceCriteria: [], passes: true, ...(checks ? { checks } : {}) });
  it.each<[string, Prd, string]>([
    [
      'plan checks cover every story',
      { branchName: 'b', checks: ['npm test'], userStories: [story('A'), story('B')] },
      'all stories pass under verification',
    ],
    [
      'no checks at all',
      { branchName: 'b', userStories: [story('A'), story('B')] },
      "all stories pass (2 unverified: accepted on the agent's word)",
    ],
    [
      'some stories have their own checks',
      { branchName: 'b', userStories: [story('A', ['x']), story('B')] },
      "all stories pass (1 under verification, 1 unverified: accepted on the agent's word)",
    ],
    [
      'stories set aside are said apart, not counted as unverified',
      {
        branchName: 'b',
        userStories: [
          story('A', ['x']),
          { ...story('B'), passes: false, skip: true },
          { ...story('C'), passes: 'skipped' },
        ],
      },
      'all stories pass under verification; 2 set aside (skip), not worked on',
    ],
  ])('%s', (_name, prd, expected) => {
    expect(renderAllPass(prd)).toBe(expected);
  });

  it('names the stories verified only by weak checks', () => {
    const prd: Prd = { branchName: 'b', userStories: [story('A', ['x']), story('B', ['y']), story('C', ['z'])] };
    expect(renderAllPass(prd, ['A'])).toBe(
      'all stories pass under verification; A verified (weak check): its check passed on the plan commit before any work, so read that story yourself',
    );
    expect(renderAllPass(prd, ['A', 'C'])).toBe(
      'all stories pass under verification; A, C verified (weak check): their checks passed on the plan commit before any work, so read those stories yourself',
    );
  });
});
