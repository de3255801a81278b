// What a --parallel run decides from its outcomes alone (run/parallel/ending.ts).
import { describe, expect, it } from 'vitest';
import { findOverlap, rejectOverlapping, renderNoWayOn, STUCK } from '../../../../../src/engine/run/parallel/ending.js';
import type { AttemptOutcome } from '../../../../../src/engine/run/parallel/types.js';

const outcome = (worker: number, status: 'verified' | 'unverified' | 'rejected' | null): AttemptOutcome => ({
  story: 'US-1',
  worker,
  iteration: 4,
  branch: 'b--US-1',
  verdict: status ? { id: 'US-1', status } : null,
  head: 'abc',
  tag: null,
  notes: undefined,
});

describe('rejectOverlapping', () => {
  const found = [
    {
      at: 100,
      worker: 2,
      iteration: 5,
      reason: 'the agent changed files the runner trusts (.git/config (core.fsmonitor)); they were put back',
    },
  ];

  it("rejects an accepted claim of an attempt running when another worker's guard found a change", () => {
    for (const status of ['verified', 'unverified'] as const) {
      const judged = rejectOverlapping(outcome(1, status), 100, found);
      expect(judged.verdict).toEqual({
        id: 'US-1',
        status: 'rejected',
        reason:
          "while its agent ran, worker 2's guard found that an agent changed files the runner trusts (.git/config (core.fsmonitor)); they were put back; the workers share git's configuration, hooks and branches, so no claim made meanwhile counts",
      });
      expect(judged.head).toBe('abc');
    }
  });

  it('words only a reason that starts with the agent as "an agent"', () => {
    const judged = rejectOverlapping(outcome(1, 'verified'), 0, [
      { at: 1, worker: 3, iteration: 6, reason: 'git changed what the agent ran' },
    ]);
    expect(judged.verdict?.reason).toMatch(
      /^while its agent ran, worker 3's guard found that git changed what the agent ran;/,
    );
  });

  it("leaves alone an attempt that started after the change was found, the finder's own, and claims already rejected or absent", () => {
    for (const o of [outcome(1, 'verified')]) expect(rejectOverlapping(o, 101, found)).toBe(o);
    // The finding of the attempt itself (its iteration) rejected its claims on the spot: not counted twice.
    const own = { ...outcome(2, 'verified'), iteration: 5 };
    for (const o of [own, outcome(1, 'rejected'), outcome(1, null)]) expect(rejectOverlapping(o, 0, found)).toBe(o);
    // The same worker's finding in a later attempt counts (work judged again after it).
    expect(rejectOverlapping(outcome(2, 'verified'), 0, found).verdict?.status).toBe('rejected');
    const o = outcome(1, 'verified');
    expect(rejectOverlapping(o, 0, [])).toBe(o);
  });
});

describe('findOverlap', () => {
  // A claim its checks rejected is judged again later only if no other worker's guard found a change while (or since)
  // its agent ran (outcomes.ts): this is the question asked then.
  it("a finding at or after the start, by any worker; not the attempt's own, not one before", () => {
    const found = [
      { at: 50, worker: 2, iteration: 1, reason: 'early' },
      { at: 100, worker: 1, iteration: 4, reason: 'own' },
      { at: 100, worker: 1, iteration: 7, reason: 'same worker, later attempt' },
    ];
    expect(findOverlap(4, 100, found)?.reason).toBe('same worker, later attempt');
    expect(findOverlap(4, 101, found)).toBeUndefined();
    expect(findOverlap(7, 60, found)?.reason).toBe('own');
    expect(findOverlap(2, 0, [])).toBeUndefined();
  });
});

describe('renderNoWayOn', () => {
  it('exit 3 when STUCK is behind every story left, listing them and what they wait on', () => {
    const e = renderNoWayOn({ 'US-1': STUCK }, [{ id: 'US-2', by: 'US-1' }]);
    expect([e.code, e.status]).toEqual([3, 'stuck']);
    expect(e.message).toBe(
      'every story left is stuck or waits on a stuck one (US-1: the agent said it is STUCK; US-2: waits on US-1)',
    );
    expect(e.hint).toContain('then --resume-last (stories given up are tried again)');
  });

  it('exit 4 as soon as one story was given up for no progress', () => {
    const e = renderNoWayOn({ 'US-1': STUCK, 'US-3': 'no progress: 3 attempts in a row without a verified merge' }, []);
    expect([e.code, e.status]).toEqual([4, 'no-progress']);
    expect(e.message).toBe(
      'no story left can make progress (US-1: the agent said it is STUCK; US-3: no progress: 3 attempts in a row without a verified merge)',
    );
  });
});
