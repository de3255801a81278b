// A --parallel story that fails on a stale base (run/parallel/stale-base.ts, issue #29): tried again on the new tip,
// at once when stories were merged since its attempt started, after the next merge while others are in flight,
// uncounted either way and with a note of what was merged; counted as before when nothing can move the tip.
import { describe, expect, it } from 'vitest';
import { firstLine, StaleBases } from '../../../../../src/engine/run/parallel/stale-base.js';

const failure = { message: 'B not accepted', worker: 2, why: 'it was not claimed' };

describe('StaleBases', () => {
  it('stories merged since the attempt started: tried again at once, with them in the note', () => {
    const stale = new StaleBases();
    expect(stale.onFailure('B', { merged: 1 }, ['X', 'A'], false, failure)).toEqual({
      kind: 'retry',
      mergedSince: ['A'],
    });
    expect(stale.waiting()).toEqual([]);
    expect(stale.takeNote('B')).toEqual({ mergedSince: ['A'], lastFailure: 'it was not claimed' });
    expect(stale.takeNote('B')).toBeUndefined();
  });

  it('nothing merged since, others in flight: waits for the next merge, then goes again uncounted', () => {
    const stale = new StaleBases();
    expect(stale.onFailure('B', { merged: 0 }, [], true, failure)).toEqual({ kind: 'park' });
    expect(stale.waiting()).toEqual(['B']);
    // Still in flight, no merge yet: it keeps waiting.
    expect(stale.release([], true)).toEqual({ retried: [], counted: [] });
    expect(stale.release(['A'], true)).toEqual({ retried: [{ id: 'B', mergedSince: ['A'] }], counted: [] });
    expect(stale.waiting()).toEqual([]);
    expect(stale.takeNote('B')?.mergedSince).toEqual(['A']);
  });

  it('a story that waited, with nothing in flight any more and nothing merged: its failure counts then', () => {
    const stale = new StaleBases();
    stale.onFailure('B', { merged: 2 }, ['A', 'C'], true, failure);
    expect(stale.release(['A', 'C'], false)).toEqual({
      retried: [],
      counted: [{ id: 'B', message: 'B not accepted', worker: 2 }],
    });
    expect(stale.waiting()).toEqual([]);
    expect(stale.takeNote('B')).toBeUndefined();
  });

  it('nothing merged since and nothing in flight: counted as before', () => {
    const stale = new StaleBases();
    expect(stale.onFailure('B', { merged: 1 }, ['A'], false, failure)).toEqual({ kind: 'count' });
    expect(stale.waiting()).toEqual([]);
  });

  it("a conflict with stories merged since: they are named in the next attempt's note", () => {
    const stale = new StaleBases();
    stale.noteConflict('B', ['A'], 'conflict in shared.txt with A');
    expect(stale.takeNote('B')).toEqual({ mergedSince: ['A'], lastFailure: 'conflict in shared.txt with A' });
  });

  it('work only its checks failed is judged again first, once per failure, kept while it waits and dropped when counted', () => {
    const stale = new StaleBases();
    const rejudge = { head: 'abc', iteration: 4, agentStartedAt: 1000 };
    // Merged since: the same work is judged again at once.
    stale.onFailure('B', { merged: 0 }, ['A'], false, { ...failure, rejudge });
    expect(stale.takeRejudge('B')).toEqual(rejudge);
    expect(stale.takeRejudge('B')).toBeUndefined();
    // Waiting for a merge: still there once released by one.
    stale.onFailure('C', { merged: 1 }, ['A'], true, { ...failure, rejudge });
    expect(stale.release(['A', 'D'], true).retried).toEqual([{ id: 'C', mergedSince: ['D'] }]);
    expect(stale.takeRejudge('C')).toEqual(rejudge);
    // Counted (nothing merged, nothing in flight): its agent goes again, nothing is judged again.
    stale.onFailure('E', { merged: 1 }, ['A'], true, { ...failure, rejudge });
    expect(stale.release(['A'], false).counted).toHaveLength(1);
    expect(stale.takeRejudge('E')).toBeUndefined();
    expect(stale.onFailure('F', { merged: 1 }, ['A'], false, { ...failure, rejudge })).toEqual({ kind: 'count' });
    expect(stale.takeRejudge('F')).toBeUndefined();
    // Without one (a claim the reviewer or the guard turned down, or no claim): none.
    stale.onFailure('G', { merged: 0 }, ['A'], false, failure);
    expect(stale.takeRejudge('G')).toBeUndefined();
  });
});

describe('firstLine', () => {
  it("a failure's first line, cut to 300 characters with an ellipsis", () => {
    expect(firstLine('check `x` exited 1\nits output')).toBe('check `x` exited 1');
    expect(firstLine('a'.repeat(300))).toBe('a'.repeat(300));
    expect(firstLine('b'.repeat(301))).toBe(`${'b'.repeat(297)}...`);
    expect(firstLine('')).toBe('');
  });
});
