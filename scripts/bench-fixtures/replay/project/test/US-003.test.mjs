import assert from 'node:assert/strict';
import { test } from 'node:test';
import { totalDuration } from '../src/total.mjs';

test('adds up a list of durations', () => {
  assert.equal(totalDuration(['1h', '30m']), 5_400_000);
});

test('an empty list takes no time', () => {
  assert.equal(totalDuration([]), 0);
});
