import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeTotal } from '../src/report.mjs';

test('names the count of estimates and their sum in words', () => {
  assert.equal(describeTotal(['1h', '1h']), '2 estimates, 2 hours in all');
});
