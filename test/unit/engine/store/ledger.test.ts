import { describe, expect, it } from 'vitest';
import {
  parseLedger,
  summariseLedger,
  type LedgerLine,
  type VerdictStatus,
} from '../../../../src/engine/store/ledger.js';

const verdict = (story: string, status: VerdictStatus, time: string, commit = 'c1'): LedgerLine => ({
  time,
  loop: 'L',
  iteration: 1,
  story,
  commit,
  kind: 'verdict',
  command: null,
  exitCode: null,
  status,
  durationMs: 1,
  outputSha256: null,
});
const checkRun = (story: string, time: string): LedgerLine => ({
  time,
  loop: 'L',
  iteration: 1,
  story,
  commit: 'c1',
  kind: 'check',
  scope: 'prd',
  command: 'true',
  exitCode: 0,
  signal: null,
  timedOut: false,
  durationMs: 1,
  outputSha256: 'h',
});

const T1 = '2026-01-01T00:00:01.000Z';
const T2 = '2026-01-01T00:00:02.000Z';

describe('summariseLedger', () => {
  it.each<[string, LedgerLine[], Record<string, VerdictStatus>, Record<VerdictStatus, number>, number]>([
    ['empty', [], {}, { verified: 0, unverified: 0, rejected: 0 }, 0],
    [
      'rejected then verified',
      [checkRun('A', T1), verdict('A', 'rejected', T1), checkRun('A', T2), verdict('A', 'verified', T2)],
      { A: 'verified' },
      { verified: 1, unverified: 0, rejected: 0 },
      2,
    ],
    [
      'verified then rejected',
      [verdict('A', 'verified', T1), verdict('A', 'rejected', T2)],
      { A: 'rejected' },
      { verified: 0, unverified: 0, rejected: 1 },
      0,
    ],
    [
      'newest time wins over file order',
      [verdict('A', 'rejected', T2), verdict('A', 'verified', T1)],
      { A: 'rejected' },
      { verified: 0, unverified: 0, rejected: 1 },
      0,
    ],
    [
      'several stories',
      [verdict('A', 'verified', T1), verdict('B', 'unverified', T1), verdict('C', 'rejected', T1)],
      { A: 'verified', B: 'unverified', C: 'rejected' },
      { verified: 1, unverified: 1, rejected: 1 },
      0,
    ],
  ])('%s', (_name, lines, statuses, counts, checkRuns) => {
    const s = summariseLedger(lines);
    expect(Object.fromEntries(Object.entries(s.stories).map(([id, v]) => [id, v.status]))).toEqual(statuses);
    expect(s.counts).toEqual(counts);
    expect(s.checkRuns).toBe(checkRuns);
  });

  // Check lines alone never decide: they are a pass the runner did not finish (killed, or interrupted).
  it.each<[string, LedgerLine[], VerdictStatus | undefined]>([
    ['check lines without a verdict', [checkRun('A', T1)], undefined],
    [
      'a newer pass without a verdict leaves the older verdict',
      [verdict('A', 'rejected', T1), checkRun('A', T2)],
      'rejected',
    ],
    [
      'a verdict line with a status the runner never writes',
      [{ ...verdict('A', 'verified', T1), status: 'maybe' } as unknown as LedgerLine],
      undefined,
    ],
  ])('only verdict lines decide: %s', (_name, lines, expected) => {
    const s = summariseLedger(lines);
    expect(s.stories.A?.status).toBe(expected);
    expect(Object.values(s.counts).reduce((a, b) => a + b, 0)).toBe(expected ? 1 : 0);
  });

  it('counts stories whose ids are Object property names', () => {
    const s = summariseLedger([verdict('__proto__', 'rejected', T1), verdict('constructor', 'verified', T1)]);
    expect(s.counts).toEqual({ verified: 1, unverified: 0, rejected: 1 });
    expect(Object.keys(s.stories).sort()).toEqual(['__proto__', 'constructor']);
  });

  it('reports the commit and time of the latest verdict', () => {
    const s = summariseLedger([verdict('A', 'rejected', T1, 'old'), verdict('A', 'verified', T2, 'new')]);
    expect(s.stories.A).toMatchObject({ commit: 'new', time: T2, loop: 'L', iteration: 1 });
  });
});

describe('parseLedger', () => {
  it.each([
    ['skips a torn last line', `${JSON.stringify(verdict('A', 'verified', T1))}\n{"time":"2026`, 1],
    ['skips blank and foreign lines', `\n[1,2]\n"x"\n${JSON.stringify(checkRun('A', T1))}\n`, 1],
  ])('%s', (_name, text, count) => {
    expect(parseLedger(text)).toHaveLength(count);
  });
});
