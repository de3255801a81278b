// renderAcceptedBaseline: the owner's plan edits, accepted on resume, become the baseline with each story's passes as
// the runner last settled it, so a flip stays a claim; a story the owner set aside stays set aside.
import { describe, expect, it } from 'vitest';
import { renderAcceptedBaseline } from '../../../../src/engine/verify/trust.js';
import type { Prd, Story } from '../../../../src/prd/types.js';
import { plan as basePlan, story as baseStory } from '../../../support/plan.js';

const story = (id: string, extra: Partial<Story> = {}): Story =>
  baseStory(id, { title: id, acceptanceCriteria: ['a'], ...extra });
const plan = (...userStories: Story[]): string => JSON.stringify(basePlan(userStories, { branchName: 'ralph/x' }));

describe('renderAcceptedBaseline', () => {
  it("keeps the runner's passes, the owner's new skips (either spelling), and takes a story back when the owner does", () => {
    const recorded = plan(story('A', { passes: true }), story('B'), story('C'), story('D', { passes: 'cancelled' }));
    const edited = plan(
      story('A', { passes: true }),
      story('B', { passes: true }),
      story('C', { passes: 'skipped' }),
      story('D', { passes: true }),
      story('E', { skip: true }),
    );
    const baseline = JSON.parse(renderAcceptedBaseline(recorded, edited)) as Prd;
    expect(baseline.userStories.map((s) => [s.id, s.passes, s.skip])).toEqual([
      ['A', true, undefined],
      ['B', false, undefined], // a flip made between runs stays a claim, verified like any other
      ['C', 'skipped', undefined],
      ['D', false, undefined], // set aside before, claimed now: a claim
      ['E', false, true],
    ]);
  });
});
