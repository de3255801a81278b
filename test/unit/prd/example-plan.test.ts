// One detection of the plan install writes, for the loop's refusal, validate's warning and the plan finder.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isExamplePlan } from '../../../src/prd/example-plan.js';
import { ROOT } from '../../support/repo.js';

const example = () => JSON.parse(readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8'));

describe('isExamplePlan', () => {
  it('is the installed example, whatever the key order', () => {
    expect(isExamplePlan(example())).toBe(true);
    const reordered = Object.fromEntries(Object.entries(example()).reverse());
    expect(isExamplePlan(reordered)).toBe(true);
  });

  it('is also the example as earlier versions wrote it (its description named npx ralphkit validate)', () => {
    const older = {
      ...example(),
      description: example().description.replace('`./ralph/ralph.sh validate`', '`npx ralphkit validate`'),
    };
    expect(older.description).toContain('npx ralphkit validate');
    expect(isExamplePlan(older)).toBe(true);
  });

  it.each<[string, (p: any) => void]>([
    ['another branch', (p) => (p.branchName = 'ralph/mine')],
    ['a story less', (p) => p.userStories.pop()],
    ['a story passing', (p) => (p.userStories[0].passes = true)],
    ['another project', (p) => (p.project = 'Mine')],
    ['a story set aside', (p) => (p.userStories[3].skip = true)],
  ])("any edit makes it the user's plan: %s", (_what, change) => {
    const plan = example();
    change(plan);
    expect(isExamplePlan(plan)).toBe(false);
  });

  it.each([null, 'text', [], {}, { branchName: 'ralph/example-task-tags' }])('is not %j', (value) => {
    expect(isExamplePlan(value)).toBe(false);
  });
});
