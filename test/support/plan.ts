// The one plan builder of the tests: a story, numbered stories, a plan, and the plan as the text a repository holds.
// Every other builder (renderPlan, attackPlan, the dashboard's and --parallel's stories) is a few fields over these.
import type { Prd, Story } from '../../src/prd/types.js';

/** Story `id`: a title, one acceptance criterion, priority 1, not passing; `fields` add to it or override. */
export function story(id: string, fields: Partial<Story> = {}): Story {
  return { id, title: `Story ${id}`, acceptanceCriteria: ['it is done'], priority: 1, passes: false, ...fields };
}

/** `US-001` … as the plans of the tests number them. */
export function storyId(n: number): string {
  return `US-${String(n).padStart(3, '0')}`;
}

/** `n` stories US-001 … in priority order, titled `Story 1` …; `each(i)` (from 0) adds fields to story i. */
export function numberedStories(n: number, each: (i: number) => Partial<Story> = () => ({})): Story[] {
  return Array.from({ length: n }, (_, i) =>
    story(storyId(i + 1), { title: `Story ${i + 1}`, priority: i + 1, ...each(i) }),
  );
}

/** A plan of `stories` (a number: that many numbered stories) on `ralph/test`; `fields` add to it or override (not its stories). */
export function plan(stories: Story[] | number, fields: Omit<Partial<Prd>, 'userStories'> = {}): Prd {
  const userStories = typeof stories === 'number' ? numberedStories(stories) : stories;
  return { project: 'Test', branchName: 'ralph/test', ...fields, userStories };
}

/** The plan as ralph/prd.json holds it: two-space JSON and a final newline. */
export function planText(prd: Prd): string {
  return `${JSON.stringify(prd, null, 2)}\n`;
}

/** A story the fake agents of test/fixtures/ do: they write `<id> done` into `<id>.txt`, which its check greps. */
export function fileStory(id: string, priority: number, fields: Partial<Story> = {}): Story {
  return story(id, {
    acceptanceCriteria: [`${id}.txt exists`],
    priority,
    notes: '',
    checks: [`grep -q "${id} done" ${id}.txt`],
    ...fields,
  });
}
