// What the loop tells its log and its status line (the events it emits), the pause between iterations, and the
// limits at exactly their value: driven through the scripted harness, no processes, no git, no real time.
import { describe, expect, it } from 'vitest';
import { harness, verdictFor, type Step } from '../../../support/loop-harness.js';
import type { StoryVerdict } from '../../../../src/engine/verify/types.js';
import { story } from '../../../support/plan.js';

const work: Step = { commit: true };
const done: Step = { commit: true, allPass: true };
const rejected = (id: string): StoryVerdict => ({ id, status: 'rejected', reason: 'check `npm test` exited 1' });

describe('the events of one iteration', () => {
  it('emits start, agent exit, verification and end, in that order and with their fields', async () => {
    const h = harness(
      [
        {
          commit: true,
          cost: 0.5,
          say: 'done\n<promise>COMPLETE</promise>',
          verdicts: [{ id: 'US-1', status: 'verified' }],
        },
      ],
      { config: { maxIterations: 1 } },
    );
    await h.run();
    expect(h.events).toEqual([
      { type: 'iteration-start', iteration: 1, maxIterations: 1 },
      {
        type: 'agent-exit',
        iteration: 1,
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 1,
        costUsd: 0.5,
        tag: 'complete',
      },
      { type: 'verify', iteration: 1, verdicts: [{ id: 'US-1', status: 'verified' }], restored: [], allPass: false },
      { type: 'iteration-end', iteration: 1, newCommit: true, noProgressStreak: 0, costUsd: 0.5 },
      { type: 'warn', iteration: 1, message: 'COMPLETE ignored: 1 story not passing under verification (US-1)' },
    ]);
  });

  it('counts the no-progress streak and the iteration in its events', async () => {
    const h = harness([{}, {}], { config: { maxIterations: 2, noProgressLimit: 5 } });
    await h.run();
    expect(h.events.filter((e) => e.type === 'iteration-end')).toEqual([
      { type: 'iteration-end', iteration: 1, newCommit: false, noProgressStreak: 1, costUsd: 0 },
      { type: 'iteration-end', iteration: 2, newCommit: false, noProgressStreak: 2, costUsd: 0 },
    ]);
    expect(h.events.filter((e) => e.type === 'info')).toEqual([]);
  });

  it('warns about a timed-out run, and records it once', async () => {
    const h = harness([{ timedOut: true }], { config: { maxIterations: 1 } });
    await h.run();
    expect(h.events).toContainEqual({
      type: 'warn',
      iteration: 1,
      message: 'iteration 1 failed: the agent outlived the iteration timeout and was killed',
    });
    expect(h.events).toContainEqual(expect.objectContaining({ type: 'agent-exit', signal: 'SIGTERM', timedOut: true }));
  });

  it('does not wait for a rate limit a timed-out run merely mentions: the iteration counts', async () => {
    const h = harness([{ timedOut: true, rateLimit: true }, done], { config: { maxIterations: 2 } });
    const exit = await h.run();
    expect(exit.code).toBe(0);
    expect(h.ran).toEqual([1, 2]);
    expect(h.sleeps).toEqual([]);
    expect(h.events.filter((e) => e.type === 'rate-limit')).toEqual([]);
  });

  it('says why commits that only touch the plan are not progress', async () => {
    const h = harness([{ commit: true, planOnly: true }], { config: { maxIterations: 1 } });
    await h.run();
    expect(h.events).toContainEqual({
      type: 'info',
      iteration: 1,
      message:
        'iteration 1 made a commit but no progress: its commits change only the plan, progress.txt and the prompt',
    });
  });

  it('names every open story, in the plural, when COMPLETE is ignored', async () => {
    const prd = {
      branchName: 'b',
      userStories: ['US-1', 'US-2', 'US-3'].map((id, i) =>
        story(id, { title: id, acceptanceCriteria: [], passes: i === 1 }),
      ),
    };
    const h = harness([{ say: '<promise>COMPLETE</promise>', commit: true }], {
      config: { maxIterations: 1 },
      extra: { verify: async () => ({ verdicts: [], restored: [], allPass: false, prd }) },
    });
    await h.run();
    expect(h.events).toContainEqual({
      type: 'warn',
      iteration: 1,
      message: 'COMPLETE ignored: 2 stories not passing under verification (US-1, US-3)',
    });
  });
});

describe('the final gate', () => {
  const gate = (ids: string[]) => ({
    passed: false,
    interrupted: false,
    prd: { branchName: 'b', userStories: [] },
    verdicts: [...ids.map(rejected), { id: 'OK', status: 'verified' as const }],
  });

  it.each([
    [['US-1'], 'the final gate rejected US-1: it no longer passes on the final commit; the loop goes on'],
    [['US-1', 'US-2'], 'the final gate rejected US-1, US-2: they no longer pass on the final commit; the loop goes on'],
  ])('rejecting %j keeps the loop going, and says so', async (ids, message) => {
    const h = harness([done], { config: { maxIterations: 1 }, extra: { finalGate: async () => gate(ids) } });
    const exit = await h.run();
    expect(exit.code).toBe(1);
    expect(h.events).toContainEqual({ type: 'warn', iteration: 1, message });
  });

  it('interrupted, decides nothing and exits 130', async () => {
    const h = harness([done], { extra: { finalGate: async () => ({ ...gate([]), interrupted: true }) } });
    const exit = await h.run();
    expect(exit).toMatchObject({
      code: 130,
      message: 'interrupted during the final gate; nothing decided, state saved',
      hint: 'continue with: ./ralph/ralph.sh --resume-last',
    });
    expect(h.state.iterationDone).toBe(false);
  });
});

describe('--pause', () => {
  it('sleeps the pause between iterations, not after the last', async () => {
    const h = harness([work, work, done], { config: { pauseMs: 900 } });
    expect((await h.run()).code).toBe(0);
    expect(h.sleeps).toEqual([900, 900]);
  });

  it('does not sleep at all with a pause of 0', async () => {
    const h = harness([work, work, done], { config: { pauseMs: 0 } });
    await h.run();
    expect(h.sleeps).toEqual([]);
  });
});

describe('limits at exactly their value', () => {
  it('runs exactly --max-iterations iterations', async () => {
    const h = harness([work], { config: { maxIterations: 3 } });
    const exit = await h.run();
    expect(h.ran).toEqual([1, 2, 3]);
    expect(exit).toMatchObject({ code: 1, message: 'max iterations reached (3) with stories still open' });
  });

  it('stops a resumed loop that already ran its last iteration before running the agent', async () => {
    const h = harness([done], { config: { maxIterations: 3 }, state: { iteration: 3, iterationDone: true } });
    expect((await h.run()).code).toBe(1);
    expect(h.ran).toEqual([]);
  });

  it('stops once the cost reaches --max-cost exactly, after the iteration that spent it', async () => {
    const h = harness([{ commit: true, cost: 0.5 }], { config: { maxCost: 1 } });
    const exit = await h.run();
    expect(h.ran).toEqual([1, 2]);
    expect(exit).toMatchObject({ code: 5, message: 'cost limit reached: $1.00 of $1' });
  });

  it('does not start an iteration when a resumed loop has already spent --max-cost', async () => {
    const h = harness([done], { config: { maxCost: 1 }, state: { costUsd: 1 } });
    expect((await h.run()).code).toBe(5);
    expect(h.ran).toEqual([]);
  });

  it('stops after exactly --no-progress-limit silent iterations, not before', async () => {
    const h = harness([{}], { config: { noProgressLimit: 2 } });
    const exit = await h.run();
    expect(h.ran).toEqual([1, 2]);
    expect(exit.code).toBe(4);
  });

  it('says what to do when the usage ceiling stops it', async () => {
    const exit = await harness([work], { budget: ['stop'] }).run();
    expect(exit).toMatchObject({
      code: 5,
      message: 'usage ceiling reached',
      hint: 'continue after the reset with --resume-last, or add --wait',
    });
  });

  it('says what to do when the agent is stuck', async () => {
    const exit = await harness([{ say: '<promise>STUCK</promise>' }]).run();
    expect(exit).toMatchObject({
      code: 3,
      message: 'the agent said it is STUCK',
      hint: 'read ralph/progress.txt and the last iteration log, fix the blocker, then --resume-last',
    });
  });
});

describe('state, resumes and errors', () => {
  it('saves the state at each step of an iteration, saying which', async () => {
    const reasons: string[] = [];
    const h = harness([done], { extra: { saveState: (_s, why) => void reasons.push(why) } });
    await h.run();
    expect(reasons).toEqual(['iteration-start', 'verifying', 'iteration-end']);
  });

  it('starts at iteration 1 from a fresh state, done or not', async () => {
    const h = harness([done], { state: { iteration: 0, iterationDone: false } });
    await h.run();
    expect(h.ran).toEqual([1]);
  });

  it('finishes nothing for a state with no iteration, or one already done, even with a run recorded', async () => {
    const ran = { headBefore: 'sha0', headAfter: 'sha0', tag: null };
    for (const state of [
      { iteration: 0, iterationDone: false, verifying: ran },
      { iteration: 2, iterationDone: true, verifying: ran },
    ]) {
      let verified = 0;
      const h = harness([done], { state, extra: { verify: async () => (verified++, verdictFor(done)) } });
      await h.run();
      expect(h.ran).toEqual([state.iteration + 1]);
      expect(verified).toBe(1);
    }
  });

  it('finishes an interrupted first iteration without running the agent again', async () => {
    const ran = { headBefore: 'sha0', headAfter: 'sha0', tag: null };
    const h = harness([done], {
      state: { iteration: 1, iterationDone: false, verifying: ran },
      extra: { verify: async () => verdictFor(done) },
    });
    expect((await h.run()).code).toBe(0);
    expect(h.ran).toEqual([]);
  });

  it('lets an error that is not a loop exit through', async () => {
    const h = harness([work], { extra: { headSha: async () => Promise.reject(new Error('disk gone')) } });
    await expect(h.run()).rejects.toThrow('disk gone');
  });

  it('hands verification the violation the git inspection found', async () => {
    const violation = { kind: 'hooks', detail: 'x' } as never;
    const seen: unknown[] = [];
    const h = harness([work], {
      config: { maxIterations: 1 },
      extra: {
        inspectAgentGit: async (_i, before) => ({ headAfter: before, violation }),
        verify: async (...args) => (seen.push(args[4]), verdictFor({})),
      },
    });
    await h.run();
    expect(seen).toEqual([violation]);
  });

  it('names every rejected claim when commits were no progress', async () => {
    const h = harness([{ commit: true, verdicts: [rejected('US-1'), rejected('US-2')] }], {
      config: { maxIterations: 1 },
    });
    await h.run();
    expect(h.events).toContainEqual({
      type: 'info',
      iteration: 1,
      message: 'iteration 1 made a commit but no progress: every claim was rejected (US-1, US-2)',
    });
  });

  it('says what to do after no progress', async () => {
    const exit = await harness([{}], { config: { noProgressLimit: 1 } }).run();
    expect(exit.hint).toBe(
      'read ralph/progress.txt and the iteration logs in ralph/.runs/, then adjust prompt.md or the plan',
    );
  });

  it('ends on the cost limit before the iteration limit when the last iteration spends it', async () => {
    const exit = await harness([{ commit: true, cost: 1 }], { config: { maxIterations: 1, maxCost: 1 } }).run();
    expect(exit.code).toBe(5);
  });

  it('ends after the last iteration without pausing or asking the budget again', async () => {
    let asked = 0;
    const h = harness([work], {
      config: { maxIterations: 2, pauseMs: 900 },
      extra: { budget: { beforeIteration: async () => (asked++, 'continue') } },
    });
    expect((await h.run()).code).toBe(1);
    expect(h.sleeps).toEqual([900]);
    expect(asked).toBe(2);
  });
});
