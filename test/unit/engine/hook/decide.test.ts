// The in-session loop's pure decisions: the stop limit against Claude Code's block cap, and what one verified stop
// decides (stop or block) with the words the session is sent back with.
import { describe, expect, it } from 'vitest';
import { decideStop, type StopFacts } from '../../../../src/engine/hook/decide.js';
import { planStopLimit, readBlockCap } from '../../../../src/engine/hook/session.js';
import type { Prd } from '../../../../src/prd/types.js';
import { story } from '../../../support/plan.js';

const plan = (passes: boolean[]): Prd =>
  ({
    project: 'P',
    branchName: 'ralph/p',
    checks: ['true'],
    userStories: passes.map((p, i) =>
      story(`US-${i + 1}`, { title: `S${i + 1}`, acceptanceCriteria: ['x'], priority: i + 1, passes: p }),
    ),
  }) as Prd;

function facts(over: Partial<StopFacts> & { passes?: boolean[] } = {}): StopFacts {
  const { passes = [false, false], ...rest } = over;
  return {
    id: 'sess-1',
    iteration: 1,
    limit: 5,
    tag: null,
    completionPromise: 'COMPLETE',
    outcome: { verdicts: [], prd: plan(passes), allPass: passes.every(Boolean), gateRejected: [], restored: [] },
    ...rest,
  };
}

describe('the stop limit', () => {
  it.each([
    [undefined, 8],
    ['3', 3],
    ['0', 0],
    ['-1', 0],
    ['lots', 8],
    ['', 8],
  ])(
    'reads CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=%s as %i (0: no cap; unreadable: the default, which stops sooner)',
    (value, cap) => {
      expect(readBlockCap(value === undefined ? {} : { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: value })).toBe(cap);
    },
  );

  it('is the smaller of --max-iterations and the cap, or --max-iterations when there is no cap', () => {
    expect([planStopLimit(20, 8), planStopLimit(3, 8), planStopLimit(20, 0)]).toEqual([8, 3, 20]);
    // A state.json edited by hand (or by the agent) never makes the loop endless.
    expect([
      planStopLimit(undefined as unknown as number, 0),
      planStopLimit(-1, 0),
      planStopLimit(Number.NaN, 8),
    ]).toEqual([10, 10, 8]);
  });
});

describe('one stop', () => {
  const EDIT = 'story US-2: field "title" was changed; restored';

  it("a plan edit undone (an owner's commit mid-session too) is said in the block reason, with the in-session way to change the plan", () => {
    const decision = decideStop(
      facts({
        outcome: { verdicts: [], prd: plan([false, false]), allPass: false, gateRejected: [], restored: [EDIT] },
      }),
    );
    expect(decision.allow).toBe(false);
    const reason = (decision as { reason: string }).reason;
    expect(reason).toContain(
      `Undone in ralph/prd.json (only passes and notes may change during the loop; the plan is as the loop started it):\n- ${EDIT}`,
    );
    expect(reason).toMatch(
      /If the user changed the plan, tell them: end this loop \(.* cancel sess-1\), commit the plan, then type \/ralph-loop to start a new one from it\./,
    );
    expect(reason).not.toContain('--resume');
  });

  it('and in the closing message when the stop ends the loop', () => {
    const done = decideStop(
      facts({
        passes: [true, true],
        outcome: { verdicts: [], prd: plan([true, true]), allPass: true, gateRejected: [], restored: [EDIT] },
      }),
    );
    expect(done).toMatchObject({ allow: true, status: 'complete' });
    expect((done as { message: string }).message).toContain(
      `these edits were undone: ${EDIT} (to change the plan yourself: end this loop (`,
    );
    expect((done as { message: string }).message).not.toContain('--resume');
  });

  it('stops when every story is verified', () => {
    expect(decideStop(facts({ passes: [true, true] }))).toMatchObject({ allow: true, status: 'complete', exitCode: 0 });
  });

  it('stops on STUCK, and at the limit, and not before', () => {
    expect(decideStop(facts({ tag: 'stuck' }))).toMatchObject({ allow: true, status: 'stuck' });
    expect(decideStop(facts({ iteration: 5 }))).toMatchObject({
      allow: true,
      status: 'max-iterations',
      message: "stopped at the loop's limit (5 stops) with stories still open: US-1, US-2",
    });
    expect(decideStop(facts({ iteration: 4 })).allow).toBe(false);
  });

  it('blocks with the rejections, what was verified, a completion tag it does not believe, and what is open', () => {
    const decision = decideStop(
      facts({
        passes: [true, false],
        tag: 'complete',
        outcome: {
          verdicts: [
            { id: 'US-1', status: 'verified' },
            { id: 'US-2', status: 'rejected', reason: 'check `npm test` exited 1' },
          ],
          prd: plan([true, false]),
          allPass: false,
          gateRejected: [],
          restored: [],
        },
      }),
    );
    expect(decision).toEqual({
      allow: false,
      reason: [
        'ralph: the in-session loop is not done (iteration 1 of at most 5), so this stop was refused.',
        '',
        "Rejected (set back to passes: false; the reasons are also in each story's notes and at the end of ralph/progress.txt):",
        '- US-2: check `npm test` exited 1',
        '',
        'Verified: US-1.',
        '',
        'You ended with <promise>COMPLETE</promise>, but these stories are not verified: US-2.',
        '',
        "Still open: US-2. Take the next one now, following the loop's instructions below.",
      ].join('\n'),
    });
  });
});
