// Durations as a user types them (--pause, --iteration-timeout, --check-timeout) and as the engine prints them.
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../../src/engine/core/duration.js';
import { parseRunArgs } from '../../../../src/engine/cli/args.js';

describe('parseDuration', () => {
  it.each([
    ['900', 900_000],
    ['0', 0],
    ['1.5', 1500],
    ['1.25', 1250],
    [' 900 ', 900_000],
    [' 5s ', 5000],
    ['500ms', 500],
    ['90s', 90_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1.5h', 5_400_000],
    ['1.25h', 4_500_000],
    ['1h30m', 5_400_000],
    ['1m500ms', 60_500],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', ' ', 'soon', '10mfoo', 'foo10m', 'x900', '900x', '10m5', '5 s', '-5s', '1.s', '.5s', 'm', '10mm'])(
    'rejects %j, saying what to type',
    (text) => {
      expect(() => parseDuration(text)).toThrow(
        `invalid duration "${text}": use a number with a unit, like 90s, 10m or 2h`,
      );
    },
  );
});

describe('durations on the command line', () => {
  it('reads a bare number as seconds', () => {
    expect(parseRunArgs(['--iteration-timeout', '900', '--pause', '2', '--check-timeout', '60'])).toMatchObject({
      options: { iterationTimeoutMs: 900_000, pauseMs: 2000, checkTimeoutMs: 60_000 },
    });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [999, '999ms'],
    [1000, '1s'],
    [59_000, '59s'],
    [59_499, '59s'],
    [60_000, '1m00s'],
    [61_500, '1m02s'],
    [754_000, '12m34s'],
    [3_599_600, '1h00m'],
    [3_600_000, '1h00m'],
    [5_400_000, '1h30m'],
    [45_000_000, '12h30m'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
