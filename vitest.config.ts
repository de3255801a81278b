import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './test/support/sequencer.js';

// The tiers of the suite, one vitest project each (docs/testing.md says what each covers and which run where).
// A file's folder is its tier. `npm test` runs them all; other Node versions run TIERS_EVERYWHERE (.ci/run).
const TIERS = [
  // Pure modules: one module graph for all files (isolate: false) saves most of the tier's time, which is imports.
  { name: 'unit', dir: 'test/unit', timeout: 60_000, isolate: false },
  { name: 'integration', dir: 'test/integration', timeout: 60_000 },
  { name: 'browser', dir: 'test/browser', timeout: 60_000 },
  // One e2e file per command and engine mode, the few whole loops that also run on every Node version.
  { name: 'smoke', dir: 'test/smoke', timeout: 180_000 },
  // Whole loops with fake agents: minutes of git and node processes, so generous limits for a loaded machine.
  { name: 'e2e', dir: 'test/e2e', timeout: 180_000 },
  // The real Claude Code, Codex and opencode CLIs against scripted model servers.
  { name: 'e2e-real-agents', dir: 'test/real-agents', timeout: 180_000 },
];

export default defineConfig({
  test: {
    // e2e tests spawn git, node and browsers; two cores are shared, so keep parallelism modest.
    maxWorkers: 2,
    // The slowest files start first (test/durations.json), so both workers stay busy to the end.
    sequence: { sequencer: DurationSequencer },
    projects: TIERS.map((tier) => ({
      extends: true,
      test: {
        name: tier.name,
        include: [`${tier.dir}/**/*.test.ts`],
        testTimeout: tier.timeout,
        hookTimeout: tier.timeout,
        isolate: tier.isolate ?? true,
      },
    })),
  },
});
