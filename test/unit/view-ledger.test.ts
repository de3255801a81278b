import { describe, expect, it } from 'vitest';
import { parseLedger, planVerdict, type LedgerEntry } from '../../src/view/ledger.js';

// Lines as src/engine/verify.ts writes them (see docs/verification.md).
const check = (o: Record<string, unknown> = {}) => JSON.stringify({ time: '2026-11-29T10:00:00Z', loop: 'L1', iteration: 1, story: 'US-001', commit: 'abc', kind: 'check', scope: 'prd', command: 'npm test', exitCode: 0, signal: null, timedOut: false, durationMs: 5, outputSha256: 'f00', ...o });
const verdict = (o: Record<string, unknown> = {}) => JSON.stringify({ time: '2026-11-29T10:00:01Z', loop: 'L1', iteration: 1, story: 'US-001', commit: 'abc', kind: 'verdict', command: null, exitCode: null, status: 'verified', durationMs: 6, outputSha256: null, ...o });

describe('parseLedger', () => {
  it.each([
    ['a check line', check(), [{ kind: 'check', scope: 'prd', story: 'US-001', command: 'npm test', exitCode: 0, loop: 'L1', status: null, timedOut: false, shared: false }]],
    ['a verdict line', verdict({ status: 'rejected', reason: 'work left uncommitted' }), [{ kind: 'verdict', command: null, status: 'rejected', reason: 'work left uncommitted' }]],
    ['a shared, timed-out check', check({ shared: true, timedOut: true, exitCode: null, signal: 'SIGTERM' }), [{ shared: true, timedOut: true, exitCode: null, signal: 'SIGTERM' }]],
    ['skips a torn last line', `${check()}\n{"time":"2026-11-29T1`, [{ story: 'US-001' }]],
    ['skips blank lines, arrays and lines without a story', `\n[1,2]\n${check({ story: undefined })}\n"text"\n`, []],
    ['ignores an unknown status and kind', check({ status: 'maybe', kind: 'other' }), [{ status: null, kind: null }]],
    ['takes the loop from the folder when the line has none', check({ loop: undefined }), [{ loop: 'from-folder' }]],
  ])('%s', (_name, text, expected) => {
    const entries = parseLedger(text, 'from-folder');
    expect(entries).toHaveLength(expected.length);
    expected.forEach((want, i) => expect(entries[i]).toMatchObject(want));
  });
});

const entries = (...lines: string[]): LedgerEntry[] => parseLedger(lines.join('\n'));

describe('planVerdict', () => {
  it.each([
    ['no entries', [], null],
    ['the verdict line decides', entries(check(), verdict()), 'verified'],
    ['a rejected verdict', entries(check({ exitCode: 1 }), verdict({ status: 'rejected' })), 'rejected'],
    ['an unverified claim has only a verdict line', entries(verdict({ status: 'unverified' })), 'unverified'],
    ['the latest verdict wins', entries(verdict({ status: 'rejected' }), verdict({ iteration: 2, time: '2026-11-29T11:00:00Z' })), 'verified'],
    ['checks still running after a verdict do not change it yet', entries(verdict({ status: 'rejected' }), check({ iteration: 2, exitCode: 0 })), 'rejected'],
    ['no verdict lines: all checks of the last attempt passed', entries(check(), check({ command: 'tsc' })), 'verified'],
    ['no verdict lines: one failing check rejects', entries(check(), check({ command: 'tsc', exitCode: 2 })), 'rejected'],
    ['no verdict lines: a timed-out check rejects', entries(check({ exitCode: null, timedOut: true, signal: 'SIGTERM' })), 'rejected'],
    ['no verdict lines: a later passing attempt supersedes a failure', entries(check({ exitCode: 1 }), check({ iteration: 2 })), 'verified'],
    ['no verdict lines: another loop with the same iteration number is another attempt', entries(check({ exitCode: 1 }), check({ loop: 'L2' })), 'verified'],
    ['a check interrupted by Ctrl-C decides nothing', entries(check({ exitCode: null, signal: 'SIGTERM', aborted: true })), null],
    ['an interrupted check does not undo an earlier verdict', entries(verdict(), check({ iteration: 2, exitCode: null, signal: 'SIGTERM', aborted: true })), 'verified'],
  ])('%s', (_name, list, expected) => {
    expect(planVerdict(list)?.verdict ?? null).toBe(expected);
  });

  it.each([
    ['the reason the runner recorded', entries(verdict({ status: 'rejected', reason: 'work left uncommitted' })), 'work left uncommitted'],
    ['the failing command', entries(check({ command: 'npm test -- api', exitCode: 3 })), '`npm test -- api` exited with 3'],
    ['a timeout', entries(check({ exitCode: null, timedOut: true, signal: 'SIGTERM' })), '`npm test` timed out'],
    ['a signal', entries(check({ exitCode: null, signal: 'SIGKILL' })), '`npm test` was killed by SIGKILL'],
  ])('names %s', (_name, list, reason) => {
    expect(planVerdict(list)?.reason).toBe(reason);
  });
});
