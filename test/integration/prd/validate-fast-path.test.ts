// A clean plan is answered from JSON.parse; the position-tracking parser (many times slower) runs only when there
// is a problem to place. Counted, not timed.
// It lives in the integration tier because it replaces a module with vi.mock, which needs the isolated module graph
// per file that the unit tier gives up for speed (vitest.config.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeLargePlan, makeLargePlanText, storyId } from '../../support/large-plan.js';

vi.mock('../../../src/prd/json-parse.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/prd/json-parse.js')>();
  return { ...real, parseJsonWithPositions: vi.fn(real.parseJsonWithPositions) };
});

const { parseJsonWithPositions } = await import('../../../src/prd/json-parse.js');
const { validatePrdText } = await import('../../../src/prd/validate.js');
const parses = vi.mocked(parseJsonWithPositions);

afterEach(() => parses.mockClear());

describe('validatePrdText on a 5,000-story plan', () => {
  it('a valid plan: the position parser never runs', () => {
    const { prd, problems } = validatePrdText(makeLargePlanText(5000), 'prd.json');
    expect(problems).toEqual([]);
    expect(prd?.userStories).toHaveLength(5000);
    expect(parses).not.toHaveBeenCalled();
  });

  it('one problem: the position parser runs once, to place it', () => {
    const plan = makeLargePlan(5000);
    plan.userStories[4000].dependsOn = [storyId(4500)]; // forward, and 4500 leads back to 4000 through the chain
    const { problems } = validatePrdText(JSON.stringify(plan, null, 2), 'prd.json');
    expect(problems.map((p) => p.code)).toEqual(['cycle']);
    expect(parses).toHaveBeenCalledTimes(1);
  });
});
