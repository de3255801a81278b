// Finding and running the real Claude Code CLI against the scripted model server.
// The CLI is a test tool installed by .ci/run into a cache folder, never a dependency of ralphkit.
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run, testdir, type RunResult } from './repo.js';
import type { ModelServer } from './model-server.js';

export const CLAUDE_BIN =
  process.env.RALPHKIT_CLAUDE_BIN || path.join(os.homedir(), '.cache/ralphkit-ci/claude-code/node_modules/.bin/claude');

export const CLAUDE_MISSING = !existsSync(CLAUDE_BIN);

/**
 * On a developer machine without the CLI the claude tests are skipped (and say so); in CI (env CI set) a missing
 * CLI is a failure, so a broken install can never pass as green.
 */
export const SKIP_CLAUDE = CLAUDE_MISSING && !process.env.CI;

export const CLAUDE_MISSING_MESSAGE =
  `The real Claude Code CLI is not at ${CLAUDE_BIN}. Run .ci/run (it installs @anthropic-ai/claude-code into ` +
  `~/.cache/ralphkit-ci/claude-code and exports RALPHKIT_CLAUDE_BIN), or set RALPHKIT_CLAUDE_BIN.`;

if (SKIP_CLAUDE) process.stderr.write(`skipping Claude Code e2e tests: ${CLAUDE_MISSING_MESSAGE}\n`);

/** Call first in each claude test: fails with the way out when the CLI is absent (reached only in CI). */
export function requireClaude(): void {
  if (CLAUDE_MISSING) throw new Error(CLAUDE_MISSING_MESSAGE);
}

/** A folder holding only `claude` (a symlink to the real one), to put first on PATH. */
export function claudeBinDir(): string {
  const dir = testdir('ralphkit-claude-bin-');
  const link = path.join(dir, 'claude');
  symlinkSync(CLAUDE_BIN, link);
  return dir;
}

/**
 * Environment for a Claude Code run against `server`: a throwaway HOME, no telemetry, no updater, and every
 * ANTHROPIC_* / CLAUDE_* variable of the outer shell removed (undefined values are dropped by spawn), so a
 * developer's real credentials or settings can never reach the test.
 */
export function claudeEnv(server: ModelServer, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = testdir('ralphkit-claude-home-');
  mkdirSync(path.join(home, '.claude'), { recursive: true });
  const cleared = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => /^(ANTHROPIC_|CLAUDE_|CLAUDECODE)/.test(k))
      .map((k) => [k, undefined]),
  );
  return {
    ...cleared,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'test-key',
    IS_SANDBOX: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // A scenario bug must fail the test at once, not after the CLI's ten retries with back-off (minutes).
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...extra,
  };
}

export const CLAUDE_PRINT_ARGS = [
  '--print',
  '--dangerously-skip-permissions',
  '--output-format',
  'stream-json',
  '--verbose',
];

/** Run `claude --print ... stream-json` directly in `cwd` with `prompt` on stdin. */
export function runClaude(cwd: string, server: ModelServer, prompt: string, timeoutMs = 40_000): Promise<RunResult> {
  return run(CLAUDE_BIN, CLAUDE_PRINT_ARGS, { cwd, env: claudeEnv(server), input: prompt, timeoutMs });
}

/** The parsed stream-json lines of a Claude Code run. */
export function streamEvents(stdout: string): Array<Record<string, any>> {
  return stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l));
}
