import { describe, expect, it } from 'vitest';
import { validatePrdText } from '../../../src/prd/validate.js';
import { makeLargePlan, makeLargePlanText, storyId } from '../../support/large-plan.js';

// The benchmark (scripts/bench.mjs) times this plan; here we only check it is judged correctly.
describe('a 5,000-story plan', () => {
  it('is valid, and the parsed plan is the one written', () => {
    const text = makeLargePlanText(5000);
    const { prd, problems } = validatePrdText(text, 'prd.json');
    expect(problems).toEqual([]);
    expect(prd?.userStories).toHaveLength(5000);
    expect(prd?.userStories[4321]).toEqual(makeLargePlan(5000).userStories[4321]);
  });

  it('still gets every problem found when a few are planted deep inside', () => {
    const plan = makeLargePlan(5000);
    plan.userStories[10].dependsOn = [storyId(4999)]; // unknown once story 4999 is renamed below
    plan.userStories[2500].passes = 'yes' as unknown as boolean;
    plan.userStories[4999].id = storyId(7);
    const text = JSON.stringify(plan, null, 2);
    const { problems } = validatePrdText(text, 'prd.json');
    expect(problems.map((p) => [p.code, p.path])).toEqual([
      ['unknown-dependency', 'userStories[10].dependsOn[0]'],
      ['type', 'userStories[2500].passes'],
      ['duplicate-id', 'userStories[4999].id'],
    ]);
  });

  it('names a cycle that runs through thousands of stories', () => {
    const plan = makeLargePlan(5000);
    plan.userStories[0].dependsOn = [storyId(4999)];
    const { problems } = validatePrdText(JSON.stringify(plan), 'prd.json');
    expect(problems).toHaveLength(1);
    expect(problems[0].code).toBe('cycle');
    expect(problems[0].message).toMatch(
      /^dependency cycle: US-00001 -> US-05000 -> US-04999 -> .* -> US-00002 -> US-00001 /,
    );
  });
});
