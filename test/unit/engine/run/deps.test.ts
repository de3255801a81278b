// run/deps.ts: what a run hands the loop. `loopConfig` turns the typed options into the loop's limits and back-offs;
// RALPH_RETRY_MS (tests and CI only) scales every back-off to that many milliseconds.
import { describe, expect, it } from 'vitest';
import { loopConfig } from '../../../../src/engine/run/deps.js';
import { parseRunArgs } from '../../../../src/engine/cli/args.js';

const typed = (...argv: string[]) => parseRunArgs(argv).options;

describe('loopConfig', () => {
  it('carries the typed limits, with the back-offs a person waits for by default', () => {
    const options = typed(
      '--pause',
      '2',
      '--no-progress-limit',
      '4',
      '--max-cost',
      '1.5',
      '--completion-promise',
      'OK',
      '7',
    );
    expect(loopConfig(options, {})).toEqual({
      maxIterations: 7,
      completionPromise: 'OK',
      pauseMs: 2000,
      noProgressLimit: 4,
      maxCost: 1.5,
      retryBaseMs: 10_000,
      rateLimitBackoffMs: 60_000,
    });
  });

  it.each([
    ['25', 25],
    ['0', 0],
  ])('RALPH_RETRY_MS=%s sets both back-offs to %i ms', (value, ms) => {
    const config = loopConfig(typed(), { RALPH_RETRY_MS: value });
    expect([config.retryBaseMs, config.rateLimitBackoffMs]).toEqual([ms, ms]);
  });

  it.each(['', '-5', 'soon'])('RALPH_RETRY_MS=%j is no number of milliseconds: the defaults stand', (value) => {
    const config = loopConfig(typed(), { RALPH_RETRY_MS: value });
    expect([config.retryBaseMs, config.rateLimitBackoffMs]).toEqual([10_000, 60_000]);
  });
});
