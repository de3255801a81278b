import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration } from '../src/duration.mjs';

test('reads a duration in hours or seconds as milliseconds', () => {
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('90s'), 90_000);
});

test('refuses text that is not a duration', () => {
  assert.throws(() => parseDuration('soon'), /not a duration: soon/);
});
