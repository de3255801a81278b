import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slug } from '../src/slug.mjs';

test('makes a lower-case, dash-separated name of a title', () => {
  assert.equal(slug('Write the Docs!'), 'write-the-docs');
  assert.equal(slug('  Fix  #12 '), 'fix-12');
});
