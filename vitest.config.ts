import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn git, node and browsers; two cores are shared, so keep parallelism modest.
    maxWorkers: 2,
  },
});
