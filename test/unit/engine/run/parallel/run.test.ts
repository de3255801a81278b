// The --parallel coordinator (run/parallel/run.ts): what it takes back from a resumed run's merge queue. state.json is
// the agents' to write, so an entry is kept only where this run could have queued it: an open story of the plan, once,
// with a commit id for its head and every story it depends on merged (or set aside).
import { describe, expect, it } from 'vitest';
import type { QueuedMerge } from '../../../../../src/engine/store/state-types.js';
import { keepQueue } from '../../../../../src/engine/run/parallel/run.js';
import { plan, story } from '../../../../support/plan.js';

const SHA = 'a'.repeat(40);
const entry = (id: string, head = SHA): QueuedMerge => ({ story: id, head, worker: 1 });

describe('keepQueue', () => {
  it('keeps open stories whose dependencies are merged or set aside, in the order queued', () => {
    const p = plan([
      story('A', { passes: true }),
      story('B', { dependsOn: ['A'] }),
      story('C', { dependsOn: ['S'] }),
      story('S', { skip: true }),
      story('D', { dependsOn: ['gone'] }),
      story('E', { dependsOn: ['X'] }),
      story('X', { passes: 'cancelled' as unknown as boolean }),
    ]);
    const queue = ['D', 'B', 'C', 'E'].map((id) => entry(id));
    // A dependency the plan no longer names holds nothing back.
    expect(keepQueue(queue, p).map((q) => q.story)).toEqual(['D', 'B', 'C', 'E']);
  });

  it('drops what no run of this plan could have queued', () => {
    const p = plan([
      story('A', { passes: true }),
      story('B', { dependsOn: ['C'] }),
      story('C'),
      story('D'),
      story('S', { skip: true }),
    ]);
    const kept = keepQueue(
      [
        entry('A'), // already passing: merged before
        entry('nope'), // no such story
        entry('B'), // its dependency C is not merged: a forged entry would merge B before C
        entry('S'), // set aside: never worked
        entry('C', 'HEAD'), // not a commit id: a name that could move
        entry('C', 'a'.repeat(39)),
        entry('C', `${'a'.repeat(40)}\n`),
        entry('C', 'a'.repeat(50)), // neither a sha1 nor a sha256 id
        entry('D', 'b'.repeat(64)), // a sha256 repository's id
        entry('D', SHA), // the same story twice: only the first
        { story: 'C' } as unknown as QueuedMerge, // no head at all
        null as unknown as QueuedMerge,
      ],
      p,
    );
    expect(kept).toEqual([entry('D', 'b'.repeat(64))]);
  });
});
