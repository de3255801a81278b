// Which story a free worker of a --parallel run takes next (run/parallel/schedule.ts): dependencies merged first,
// never a story twice, never a given-up one, and the stories that can never start named with what they wait on.
import { describe, expect, it } from 'vitest';
import type { Prd, Story } from '../../../../../src/prd/types.js';
import { findGivenUpDependency, planSchedule } from '../../../../../src/engine/run/parallel/schedule.js';
import { plan as basePlan, story } from '../../../../support/plan.js';

const s = story;
const plan = (...stories: Story[]): Prd => basePlan(stories);

const none = new Set<string>();

describe('planSchedule', () => {
  it('offers every open story without dependencies, by priority, then plan order', () => {
    const p = plan(s('A', { priority: 3 }), s('B', { priority: 1 }), s('C', { priority: 3 }), s('D', { priority: 2 }));
    expect(planSchedule(p, none, none)).toEqual({ ready: ['B', 'D', 'A', 'C'], waiting: [], blocked: [], done: false });
  });

  it('puts a story without a numeric priority after every numbered one', () => {
    const p = plan(
      s('C', { priority: Number.NaN }),
      s('A', { priority: undefined as unknown as number }),
      s('B', { priority: 9 }),
    );
    expect(planSchedule(p, none, none).ready).toEqual(['B', 'C', 'A']);
    const first = plan(
      s('A', { priority: undefined as unknown as number }),
      s('B', { priority: 2 }),
      s('C', { priority: 1 }),
    );
    expect(planSchedule(first, none, none).ready).toEqual(['C', 'B', 'A']);
  });

  it('holds a story until every story it depends on passes', () => {
    const p = plan(s('A', { passes: true }), s('B'), s('C', { dependsOn: ['A', 'B'] }), s('D', { dependsOn: ['A'] }));
    const r = planSchedule(p, none, none);
    expect(r.ready).toEqual(['B', 'D']);
    expect(r.waiting).toEqual(['C']);
  });

  it('counts a dependency the plan sets aside, or does not have, as nothing to wait for', () => {
    const p = plan(s('A', { skip: true }), s('B', { passes: 'cancelled' }), s('C', { dependsOn: ['A', 'B', 'Z'] }));
    expect(planSchedule(p, none, none).ready).toEqual(['C']);
  });

  it('never offers a story a worker or the queue holds, nor a given-up one, nor a passing or set-aside one', () => {
    const p = plan(s('A'), s('B'), s('C'), s('D', { passes: true }), s('E', { skip: true }));
    const r = planSchedule(p, new Set(['A']), new Set(['B']));
    expect(r).toEqual({ ready: ['C'], waiting: [], blocked: [], done: false });
  });

  it('names a story that waits on a given-up one, directly or through others, as blocked', () => {
    const p = plan(s('A'), s('B', { dependsOn: ['A'] }), s('C', { dependsOn: ['B'] }), s('D'));
    const r = planSchedule(p, none, new Set(['A']));
    expect(r.blocked).toEqual([
      { id: 'B', by: 'A' },
      { id: 'C', by: 'A' },
    ]);
    expect(r.ready).toEqual(['D']);
    expect(r.waiting).toEqual([]);
  });

  it('is done when every active story passes, and only then', () => {
    expect(planSchedule(plan(s('A', { passes: true }), s('B', { skip: true })), none, none).done).toBe(true);
    expect(planSchedule(plan(s('A', { passes: true }), s('B')), none, none).done).toBe(false);
    // Held or given up is not done.
    expect(planSchedule(plan(s('A')), new Set(['A']), none).done).toBe(false);
    expect(planSchedule(plan(s('A')), none, new Set(['A'])).done).toBe(false);
  });
});

describe('findGivenUpDependency', () => {
  const byId = (p: Prd) => new Map(p.userStories.map((x) => [x.id, x]));

  it('follows open dependencies only: a passing or set-aside one ends that path', () => {
    const p = plan(
      s('A'),
      s('B', { passes: true, dependsOn: ['A'] }),
      s('C', { dependsOn: ['B'] }),
      s('D', { skip: true, dependsOn: ['A'] }),
      s('E', { dependsOn: ['D'] }),
    );
    const given = new Set(['A']);
    expect(findGivenUpDependency(p.userStories[2], byId(p), given)).toBeNull();
    expect(findGivenUpDependency(p.userStories[4], byId(p), given)).toBeNull();
  });

  it('finds one through a chain, and survives a cycle', () => {
    const p = plan(
      s('A', { dependsOn: ['C'] }),
      s('B', { dependsOn: ['A'] }),
      s('C', { dependsOn: ['B'] }),
      s('X'),
      s('Y', { dependsOn: ['C', 'X'] }),
    );
    expect(findGivenUpDependency(p.userStories[4], byId(p), new Set(['X']))).toBe('X');
    expect(findGivenUpDependency(p.userStories[1], byId(p), new Set(['X']))).toBeNull();
    expect(findGivenUpDependency(p.userStories[1], byId(p), new Set(['C']))).toBe('C');
  });

  it('does not count the story itself, nor unknown ids', () => {
    const p = plan(s('A', { dependsOn: ['A', 'Q'] }));
    expect(findGivenUpDependency(p.userStories[0], byId(p), new Set(['A', 'Q']))).toBeNull();
  });
});
