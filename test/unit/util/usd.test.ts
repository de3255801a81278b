// Costs as the runner, `status` and the dashboard show them: one rule, so a loop that printed $0.0025 is not listed
// as $0.00 afterwards.
import { describe, expect, it } from 'vitest';
import { renderUsd } from '../../../src/util/usd.js';
// @ts-expect-error the dashboard's page is plain browser JS without types
import { fmtCost } from '../../../src/view/page/dom.js';

describe('renderUsd', () => {
  it.each([
    [0, '$0.00'],
    [0.0025, '$0.0025'],
    [0.00004, '<$0.0001'],
    [0.01, '$0.01'],
    [0.123, '$0.123'],
    [0.5, '$0.50'],
    [0.999999, '$1.00'],
    [1.2345, '$1.23'],
    [12.5, '$12.50'],
  ])('%s → %s', (usd, text) => {
    expect(renderUsd(usd)).toBe(text);
  });

  it("is the dashboard's rule too", () => {
    for (let i = 0; i < 2000; i++) {
      const usd = i < 1000 ? i / 100_000 : (i - 1000) / 37;
      expect(fmtCost(usd)).toBe(renderUsd(usd));
    }
  });
});
