// Vitest as Stryker runs it: only the test files scripts/mutate.mjs names for the module under test.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const tests = (process.env.RALPHKIT_MUTATE_TESTS ?? '').split(',').filter(Boolean);
if (tests.length === 0) throw new Error('stryker/vitest.config.mjs: run it through `npm run mutate`');

export default defineConfig({
  // The sandbox root (Stryker copies this file to <sandbox>/stryker/).
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: tests,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
