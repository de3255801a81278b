import { describe, expect, it } from 'vitest';
import { compareVersions } from '../../../src/install/version-order.js';

describe('compareVersions', () => {
  it.each([
    ['0.10.0', '0.9.1', 1],
    ['0.9.1', '0.10.0', -1],
    ['1.0.0', '1.0.0', 0],
    ['v1.2.3', '1.2.3', 0],
    ['2.0.0', '10.0.0', -1],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0', '1.0.0-rc.1', 1],
    ['1.0.0-beta', '1.0.0-alpha', 1],
    ['1.0.0+build.5', '1.0.0', 0],
    ['not a version', '1.0.0', 0],
    ['1.0', '1.0.0', 0],
  ])('%s vs %s → %i', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});
