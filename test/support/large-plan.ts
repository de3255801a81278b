// A big, valid plan for speed tests (scripts/bench.mjs bundles this file with esbuild) and for the
// validator's scale test. Deterministic: the same n always gives the same plan.
import type { Prd, Story } from '../../src/prd/types.js';

export function storyId(i: number): string {
  return `US-${String(i + 1).padStart(5, '0')}`;
}

/** `n` stories shaped like real ones: criteria, notes, checks on some, and one or two dependencies each. */
export function makeLargePlan(n: number): Prd {
  const userStories: Story[] = Array.from({ length: n }, (_, i) => ({
    id: storyId(i),
    title: `Story ${i + 1}: add field ${i + 1} to the report`,
    description: `As a user, I see field ${i + 1} in the monthly report so that I can compare months.`,
    acceptanceCriteria: [`Field ${i + 1} appears in the report`, 'Values match the database', 'Typecheck passes'],
    priority: i + 1,
    passes: i % 3 === 0,
    notes: i % 10 === 0 ? 'Reuse the formatter from the previous story' : '',
    dependsOn: i === 0 ? [] : i % 7 === 0 && i > 1 ? [storyId(i - 1), storyId(i - 2)] : [storyId(i - 1)],
    ...(i % 4 === 0 ? { checks: [`npm test -- field-${i + 1}`] } : {}),
  }));
  return {
    project: 'Large',
    branchName: 'ralph/large-plan',
    baseBranch: 'main',
    description: `${n} generated stories`,
    checks: ['npm test', 'npx tsc --noEmit'],
    userStories,
  };
}

/** The plan as prd.json text, pretty-printed the way people and agents write it. */
export function makeLargePlanText(n: number): string {
  return `${JSON.stringify(makeLargePlan(n), null, 2)}\n`;
}
