// What the final gate decides (verify/gate-verdict.ts): the rejection reason, and the plan and commit that undo claims.
import { describe, expect, it } from 'vitest';
import { planGateRejection, renderGateReason } from '../../../../src/engine/verify/gate-verdict.js';
import type { Prd } from '../../../../src/prd/types.js';
import type { StoryVerdict } from '../../../../src/engine/verify/types.js';
import { story } from '../../../support/plan.js';

const HEAD = 'aaaaaaa1111111111111111111111111111111111';
const EARLIER = 'bbbbbbb2222222222222222222222222222222222';
const PINS = 'ccccccc3333333333333333333333333333333333';

describe('renderGateReason', () => {
  const reason = (over: object) =>
    renderGateReason({
      commit: HEAD,
      why: 'check `npm test` failed (exit 1)',
      pinnedChanges: [],
      pinCommit: PINS,
      ...over,
    });

  it('names the short commit and why, nothing more when the claim was not verified in this run', () => {
    expect(reason({})).toBe('the final gate at aaaaaaa: check `npm test` failed (exit 1)');
  });

  it('a claim verified at an earlier commit gives the range that broke it', () => {
    expect(reason({ verifiedAt: EARLIER })).toBe(
      'the final gate at aaaaaaa: check `npm test` failed (exit 1); it passed at bbbbbbb, so a commit since broke it (git log --oneline bbbbbbb..aaaaaaa)',
    );
  });

  it("a claim verified at the gate's own commit has no range (the checks are flaky or depend on the machine)", () => {
    expect(reason({ verifiedAt: HEAD })).toBe('the final gate at aaaaaaa: check `npm test` failed (exit 1)');
  });

  it('no commit at all: said so, and no range', () => {
    expect(reason({ commit: null, verifiedAt: EARLIER })).toBe(
      'the final gate at (no commit): check `npm test` failed (exit 1)',
    );
  });

  it('pinned files the commit changed are named in parentheses, with the plan commit', () => {
    const r = reason({ pinnedChanges: ['test/a.test.js'], verifiedAt: EARLIER });
    expect(r).toBe(
      'the final gate at aaaaaaa: check `npm test` failed (exit 1) (the agent changed pinned test input test/a.test.js: the checks ran with the version from the plan commit ccccccc (a story meant to change it lists it in its "mayChange", which the plan\'s owner adds)); it passed at bbbbbbb, so a commit since broke it (git log --oneline bbbbbbb..aaaaaaa)',
    );
  });
});

describe('planGateRejection', () => {
  const prd = (): Prd => ({
    branchName: 'ralph/x',
    userStories: [
      story('S1', {
        title: 'one',
        acceptanceCriteria: ['a'],
        passes: true,
        notes: 'my own note\n[ralph] rejected: earlier',
      }),
      story('S2', { title: 'two', acceptanceCriteria: ['a'], priority: 2, passes: true }),
      story('S3', { title: 'three', acceptanceCriteria: ['a'], priority: 3, passes: true }),
    ],
  });
  const verdicts = (...v: StoryVerdict[]) => v;

  it('no rejection: the gate passed, nothing to write', () => {
    expect(
      planGateRejection(
        prd(),
        verdicts({ id: 'S1', status: 'verified' }, { id: 'S2', status: 'unverified', reason: 'no checks' }),
      ),
    ).toBeNull();
    expect(planGateRejection(prd(), [])).toBeNull();
  });

  it("each rejected story is undone with the reason as the runner's note; the others, and the input plan, stay", () => {
    const before = prd();
    const r = planGateRejection(
      before,
      verdicts(
        { id: 'S1', status: 'rejected', reason: 'the final gate at aaaaaaa: x' },
        { id: 'S2', status: 'verified' },
        { id: 'S3', status: 'rejected', reason: 'y' },
      ),
    )!;
    expect(r.ids).toEqual(['S1', 'S3']);
    expect(r.message).toBe('chore(ralph): final gate rejects S1 (check failed), S3 (check failed)');
    expect(r.prd.userStories.map((s) => [s.id, s.passes, s.notes])).toEqual([
      ['S1', false, 'my own note\n[ralph] rejected: the final gate at aaaaaaa: x'],
      ['S2', true, undefined],
      ['S3', false, '[ralph] rejected: y'],
    ]);
    expect(before).toEqual(prd());
  });

  it("names the rejections by the kind it is given (the checks changed the runner's files)", () => {
    const r = planGateRejection(
      prd(),
      verdicts({ id: 'S1', status: 'rejected', reason: 'r' }, { id: 'S3', status: 'rejected', reason: 'r' }),
      'runner files changed by the checks',
    )!;
    expect(r.message).toBe(
      'chore(ralph): final gate rejects S1 (runner files changed by the checks), S3 (runner files changed by the checks)',
    );
  });

  it('a verdict for a story the plan does not have changes nothing but is still named', () => {
    const r = planGateRejection(prd(), verdicts({ id: 'GONE', status: 'rejected', reason: 'z' }))!;
    expect(r.prd).toEqual(prd());
    expect(r.ids).toEqual(['GONE']);
  });
});
