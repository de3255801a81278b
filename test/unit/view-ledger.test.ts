import { describe, expect, it } from 'vitest';
import { parseLedger, planVerdict, type LedgerEntry } from '../../src/view/ledger.js';

const line = (o: Record<string, unknown>) => JSON.stringify({ time: '2026-11-29T10:00:00Z', loop: 'L1', iteration: 1, story: 'US-001', commit: 'abc', command: 'npm test', exitCode: 0, durationMs: 5, outputSha256: 'f00', ...o });

describe('parseLedger', () => {
  it.each([
    ['one well-formed line', line({}), [{ story: 'US-001', command: 'npm test', exitCode: 0, loop: 'L1', status: null }]],
    ['skips a half-written last line', `${line({})}\n{"time":"2026-11-29T1`, [{ story: 'US-001' }]],
    ['skips blank lines, arrays and lines without a story', `\n[1,2]\n${line({ story: undefined })}\n"text"\n`, []],
    ['keeps a status the runner recorded', line({ status: 'unverified', command: null, exitCode: null }), [{ status: 'unverified', command: null, exitCode: null }]],
    ['ignores an unknown status', line({ status: 'maybe' }), [{ status: null }]],
    ['takes the loop from the folder when the line has none', line({ loop: undefined }), [{ loop: 'from-folder' }]],
    ['accepts storyId and loopId spellings', line({ story: undefined, storyId: 'US-9', loop: undefined, loopId: 'L9' }), [{ story: 'US-9', loop: 'L9' }]],
  ])('%s', (_name, text, expected) => {
    const entries = parseLedger(text, 'from-folder');
    expect(entries).toHaveLength(expected.length);
    expected.forEach((want, i) => expect(entries[i]).toMatchObject(want));
  });
});

const entry = (o: Partial<LedgerEntry>): LedgerEntry => ({ time: '', loop: 'L1', iteration: 1, story: 'US-001', commit: null, command: 'npm test', exitCode: 0, durationMs: null, outputSha256: null, status: null, reason: null, ...o });

describe('planVerdict', () => {
  it.each([
    ['no entries', [], null],
    ['all checks of the last attempt passed', [entry({}), entry({ command: 'tsc' })], 'verified'],
    ['one failing check rejects the attempt', [entry({}), entry({ command: 'tsc', exitCode: 2 })], 'rejected'],
    ['an earlier failure is superseded by a later passing attempt', [entry({ exitCode: 1 }), entry({ iteration: 2 })], 'verified'],
    ['a later failure undoes an earlier pass', [entry({}), entry({ iteration: 3, exitCode: 1 })], 'rejected'],
    ['the same iteration number in another loop is another attempt', [entry({ exitCode: 1 }), entry({ loop: 'L2' })], 'verified'],
    ['no command ran: accepted on the agent’s word', [entry({ command: null, exitCode: null })], 'unverified'],
    ['an explicit status wins over the exit code', [entry({ status: 'rejected', exitCode: 0, reason: 'uncommitted changes' })], 'rejected'],
    ['explicit unverified', [entry({ status: 'unverified' })], 'unverified'],
  ])('%s', (_name, entries, expected) => {
    expect(planVerdict(entries)?.verdict ?? null).toBe(expected);
  });

  it('names the failing command, or the recorded reason', () => {
    expect(planVerdict([entry({ command: 'npm test -- api', exitCode: 3 })])?.reason).toBe('`npm test -- api` exited with 3');
    expect(planVerdict([entry({ status: 'rejected', reason: 'work left uncommitted' })])?.reason).toBe('work left uncommitted');
  });
});
