import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration } from '../src/format.mjs';

test('writes milliseconds out in words', () => {
  assert.equal(formatDuration(7_200_000), '2 hours');
  assert.equal(formatDuration(1000), '1 second');
});
