// A --parallel story that fails on a stale base (run/parallel/stale-base.ts, issue #29): tried again on the new tip,
// at once when stories were merged since its attempt started, after the next merge while others are in flight,
// uncounted either way and with a note of what was merged; counted as before when nothing can move the tip.
import { describe, expect, it } from 'vitest';
import { StaleBases } from '../../../../../src/engine/run/parallel/stale-base.js';

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
});
