// Stories set aside (SPEC §13): only the plan's author sets a story aside or takes it back. Whatever an agent does to
// `skip` or to the `passes` spellings during an iteration is undone, and none of it is a claim.
import { describe, expect, it } from 'vitest';
import { planPrdRepair, planUnmetDependencies } from '../../../../src/engine/verify/prd-diff.js';
import { isSettled } from '../../../../src/prd/skip.js';
import type { Prd, Story } from '../../../../src/prd/types.js';
import { story as baseStory } from '../../../support/plan.js';

const story = (id: string, extra: Partial<Story> = {}): Story =>
  baseStory(id, { title: id, acceptanceCriteria: ['works'], notes: '', ...extra });

// US-1 open, US-2 set aside with skip, US-3 set aside with a passes spelling, US-4 waits on US-2.
const BEFORE: Prd = {
  branchName: 'ralph/demo',
  checks: ['npm test'],
  userStories: [
    story('US-1'),
    story('US-2', { skip: true }),
    story('US-3', { passes: 'cancelled' }),
    story('US-4', { dependsOn: ['US-2'] }),
  ],
};
const before = JSON.stringify(BEFORE, null, 2);
const edit = (f: (p: Prd) => unknown): string => {
  const p = structuredClone(BEFORE);
  f(p);
  return JSON.stringify(p, null, 2);
};
const s = (p: Prd, id: string) => p.userStories.find((x) => x.id === id)!;

describe('planPrdRepair and stories set aside', () => {
  it.each<[string, (p: Prd) => unknown, string]>([
    ['sets skip on an open story', (p) => (s(p, 'US-1').skip = true), 'story US-1: field "skip" was added; restored'],
    [
      'sets passes "cancelled" on an open story',
      (p) => (s(p, 'US-1').passes = 'cancelled'),
      'story US-1: "passes" was set to a non-boolean; restored',
    ],
    [
      'sets passes "skipped" on an open story',
      (p) => (s(p, 'US-1').passes = 'skipped'),
      'story US-1: "passes" was set to a non-boolean; restored',
    ],
    [
      'takes skip off a story set aside',
      (p) => delete s(p, 'US-2').skip,
      'story US-2: field "skip" was removed; restored',
    ],
    ['sets skip to false', (p) => (s(p, 'US-2').skip = false), 'story US-2: field "skip" was changed; restored'],
    [
      'claims a story set aside',
      (p) => (s(p, 'US-2').passes = true),
      'story US-2: "passes" was changed on a story the plan sets aside; restored',
    ],
    [
      'turns passes "cancelled" into false',
      (p) => (s(p, 'US-3').passes = false),
      'story US-3: "passes" was changed on a story the plan sets aside; restored',
    ],
    [
      'turns passes "cancelled" into true',
      (p) => (s(p, 'US-3').passes = true),
      'story US-3: "passes" was changed on a story the plan sets aside; restored',
    ],
    ['deletes a story set aside', (p) => p.userStories.splice(1, 1), 'story US-2 was deleted; restored'],
  ])('an agent that %s is undone, and it is no claim', (_name, f, message) => {
    const plan = planPrdRepair(before, edit(f));
    expect(plan.restored).toContain(message);
    expect(plan.claims).toEqual([]);
    expect(plan.changed).toBe(true);
    // The repaired plan is the baseline's, story for story, in what sets a story aside.
    expect(plan.prd.userStories.map((x) => [x.id, x.passes, x.skip])).toEqual(
      BEFORE.userStories.map((x) => [x.id, x.passes, x.skip]),
    );
  });

  it('a claim on an open story beside them is still a claim, and the stories set aside count as settled', () => {
    const plan = planPrdRepair(
      before,
      edit((p) => {
        s(p, 'US-1').passes = true;
        s(p, 'US-4').passes = true;
      }),
    );
    expect(plan.claims).toEqual(['US-1', 'US-4']);
    expect(plan.restored).toEqual([]);
    expect(plan.prd.userStories.every(isSettled)).toBe(true);
  });

  it('a story waiting on one set aside waits on nothing', () => {
    expect(planUnmetDependencies(BEFORE, 'US-4', ['US-4'], new Set())).toEqual([]);
  });
});
