import { describe, expect, it } from 'vitest';
import { parseResetTime, zonedTime } from '../../../../src/engine/budget/reset-time.js';

// Sunday 2026-11-29 18:00 UTC = 19:00 in Paris (CET) = 10:00 in Los Angeles (PST).
const NOW = new Date('2026-11-29T18:00:00Z');

describe('parseResetTime', () => {
  it.each([
    ['7pm', 'UTC', '2026-11-29T19:00:00.000Z'],
    ['8pm (Europe/Paris)', 'UTC', '2026-11-29T19:00:00.000Z'],
    ['3am (Europe/Paris)', 'UTC', '2026-11-30T02:00:00.000Z'],
    ['3:30am', 'UTC', '2026-11-30T03:30:00.000Z'],
    ['3:30am', 'Asia/Tokyo', '2026-11-29T18:30:00.000Z'],
    ['12:50am (America/Los_Angeles)', 'UTC', '2026-11-30T08:50:00.000Z'],
    ['12pm', 'UTC', '2026-11-30T12:00:00.000Z'],
    ['12am', 'UTC', '2026-11-30T00:00:00.000Z'],
    ['8:19 PM', 'UTC', '2026-11-29T20:19:00.000Z'],
    ['8:19 p.m.', 'UTC', '2026-11-29T20:19:00.000Z'],
    ['21:45', 'UTC', '2026-11-29T21:45:00.000Z'],
    // The printed minute drops the seconds: a time a few minutes ago means the reset is due now.
    ['5:55pm', 'UTC', '2026-11-29T18:01:00.000Z'],
    ['7pm (Europe/Paris)', 'UTC', '2026-11-29T18:01:00.000Z'],
    ['Dec 3, 7pm (Europe/Paris)', 'UTC', '2026-12-03T18:00:00.000Z'],
    ['Dec 3, 7:30pm', 'UTC', '2026-12-03T19:30:00.000Z'],
    ['Jan 2, 9am', 'UTC', '2027-01-02T09:00:00.000Z'],
    ['Jan 2, 2027, 9am', 'UTC', '2027-01-02T09:00:00.000Z'],
    ['Jul 5th, 2027 8:19 PM', 'UTC', '2027-07-05T20:19:00.000Z'],
    ['Jul 5th, 2027 8:19 PM', 'Europe/Paris', '2027-07-05T18:19:00.000Z'],
    ['Dec 1st, 2026 at 6:00 AM.', 'UTC', '2026-12-01T06:00:00.000Z'],
    ['in 4 days 20 hours 9 minutes', 'UTC', '2026-12-04T14:09:00.000Z'],
    ['in 3 hours 2 minutes.', 'UTC', '2026-11-29T21:02:00.000Z'],
    ['in 45 seconds', 'UTC', '2026-11-29T18:00:45.000Z'],
    ['1795982400', 'UTC', '2026-11-29T20:00:00.000Z'],
    ['1795994100000', 'UTC', '2026-11-29T23:15:00.000Z'],
    ['2026-11-29T22:00:00Z', 'UTC', '2026-11-29T22:00:00.000Z'],
    ['7pm (Mars/Olympus_Mons)', 'UTC', '2026-11-29T19:00:00.000Z'],
  ])('%s (local zone %s) → %s', (phrase, zone, expected) => {
    expect(parseResetTime(phrase, NOW, zone)?.toISOString()).toBe(expected);
  });

  it.each([
    ['soon'],
    ['13pm'],
    ['25:00'],
    ['7:75pm'],
    ['Foo 3, 7pm'],
    ['1795867200'], // an epoch in the past names no future reset
    ['Jul 5th, 2025 8:19 PM'],
    [''],
  ])('%j → null', (phrase) => {
    expect(parseResetTime(phrase, NOW, 'UTC')).toBeNull();
  });
});

describe('zonedTime', () => {
  it.each([
    [2026, 10, 29, 19, 0, 'Europe/Paris', '2026-11-29T18:00:00.000Z'],
    [2027, 6, 5, 19, 0, 'Europe/Paris', '2027-07-05T17:00:00.000Z'],
    [2027, 2, 14, 12, 0, 'America/Los_Angeles', '2027-03-14T19:00:00.000Z'],
    [2027, 2, 13, 12, 0, 'America/Los_Angeles', '2027-03-13T20:00:00.000Z'],
    [2026, 11, 32, 1, 0, 'UTC', '2027-01-01T01:00:00.000Z'],
  ])('%i-%i-%i %i:%i in %s → %s', (y, mo, d, h, mi, zone, expected) => {
    expect(zonedTime(y, mo, d, h, mi, zone).toISOString()).toBe(expected);
  });
});
