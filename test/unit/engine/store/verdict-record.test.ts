// The verdict record's seal (store/verdict-record.ts): the weak stories are sealed with the verdicts, and a record
// without them seals as before.
import { describe, expect, it } from 'vitest';
import { parseRecord, renderRecord, type VerdictRecord } from '../../../../src/engine/store/verdict-record.js';

const key = Buffer.alloc(32, 7);
const base: VerdictRecord = {
  ralphkit: 1,
  loop: 'l',
  commit: 'c0ffee',
  pins: 'p1',
  time: '2026-12-05T12:00:00.000Z',
  stories: { 'US-1': 'verified', 'US-2': 'verified' },
};

describe('the verdict record: weak stories', () => {
  it('a record naming weak stories checks out, and taking one off the list breaks the seal', () => {
    const text = renderRecord({ ...base, weak: ['US-1'] }, key);
    expect(parseRecord(text, 'c0ffee', key)?.weak).toEqual(['US-1']);
    const doc = JSON.parse(text);
    expect(parseRecord(JSON.stringify({ ...doc, weak: [] }), 'c0ffee', key)).toBeNull();
    const { weak: _w, ...without } = doc;
    expect(parseRecord(JSON.stringify(without), 'c0ffee', key)).toBeNull();
  });

  it('a record without weak stories seals as an older runner sealed it', () => {
    expect(parseRecord(renderRecord(base, key), 'c0ffee', key)).toEqual(base);
  });
});
