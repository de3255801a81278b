import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summary } from '../src/summary.mjs';

test('lists each task by its slug, then the total', () => {
  const tasks = [
    { title: 'Write the Docs', estimate: '1h' },
    { title: 'Ship it', estimate: '30m' },
  ];
  assert.equal(summary(tasks), 'write-the-docs: 1h\nship-it: 30m\n2 estimates, 2 hours in all');
});
