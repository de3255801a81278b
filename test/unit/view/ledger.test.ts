import { describe, expect, it } from 'vitest';
import { parseLedger } from '../../../src/engine/store/ledger.js';
import { toLedgerEntry } from '../../../src/view/ledger.js';

// Lines as src/engine/verify/verify.ts writes them (see docs/verification.md).
const check = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    time: '2026-11-29T10:00:00Z',
    loop: 'L1',
    iteration: 1,
    story: 'US-001',
    commit: 'abc',
    kind: 'check',
    scope: 'prd',
    command: 'npm test',
    exitCode: 0,
    signal: null,
    timedOut: false,
    durationMs: 5,
    outputSha256: 'f00',
    ...o,
  });
const verdict = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    time: '2026-11-29T10:00:01Z',
    loop: 'L1',
    iteration: 1,
    story: 'US-001',
    commit: 'abc',
    kind: 'verdict',
    command: null,
    exitCode: null,
    status: 'verified',
    durationMs: 6,
    outputSha256: null,
    ...o,
  });

describe('toLedgerEntry: a ledger line as the detail panel shows it', () => {
  it.each([
    [
      'a check line',
      check(),
      {
        kind: 'check',
        scope: 'prd',
        story: 'US-001',
        command: 'npm test',
        exitCode: 0,
        loop: 'L1',
        status: null,
        reason: null,
        timedOut: false,
        shared: false,
        aborted: false,
      },
    ],
    [
      'a verdict line',
      verdict({ status: 'rejected', reason: 'work left uncommitted' }),
      { kind: 'verdict', command: null, exitCode: null, status: 'rejected', reason: 'work left uncommitted' },
    ],
    [
      'a shared, timed-out check',
      check({ shared: true, timedOut: true, exitCode: null, signal: 'SIGTERM' }),
      { shared: true, timedOut: true, exitCode: null, signal: 'SIGTERM' },
    ],
    [
      'an interrupted check',
      check({ aborted: true, exitCode: null, signal: 'SIGTERM' }),
      { aborted: true, status: null },
    ],
    ['an unknown status and kind', check({ status: 'maybe', kind: 'other' }), { status: null, kind: null }],
    // Only verdict lines decide (summariseLedger), so only they are shown as verdicts.
    ['a status on a check line is not a verdict', check({ status: 'verified' }), { kind: 'check', status: null }],
    [
      'missing and mistyped fields become null',
      JSON.stringify({ story: 'US-9', iteration: '3', exitCode: 'x', time: 7, commit: '' }),
      {
        kind: null,
        time: '',
        loop: '',
        iteration: null,
        exitCode: null,
        commit: null,
        command: null,
        durationMs: null,
        timedOut: false,
      },
    ],
  ])('%s', (_name, text, expected) => {
    const [line] = parseLedger(text);
    expect(toLedgerEntry(line)).toMatchObject(expected);
  });

  it('gives every field docs/dashboard.md lists, even for a bare line, so the page never reads undefined', () => {
    const entry = toLedgerEntry(parseLedger(JSON.stringify({ story: 'US-1' }))[0]);
    const documented =
      'kind scope time loop iteration story commit command exitCode durationMs outputSha256 signal timedOut shared aborted status reason';
    expect(Object.keys(entry).sort()).toEqual(documented.split(' ').sort());
    expect(Object.values(entry).filter((v) => v === undefined)).toEqual([]);
  });
});
