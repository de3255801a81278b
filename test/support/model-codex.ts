// Finding and running the real Codex CLI against the scripted Responses API server (responses-server.ts).
// The CLI is a test tool installed by .ci/run into a cache folder, never a dependency of ralphkit.
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testdir } from './repo.js';
import type { ResponsesServer } from './responses-server.js';

export const CODEX_BIN =
  process.env.RALPHKIT_CODEX_BIN || path.join(os.homedir(), '.cache/ralphkit-ci/codex/node_modules/.bin/codex');

export const CODEX_MISSING = !existsSync(CODEX_BIN);

/** As for Claude Code (model-claude.ts): skipped with a message on a developer machine, a failure in CI. */
export const SKIP_CODEX = CODEX_MISSING && !process.env.CI;

export const CODEX_MISSING_MESSAGE =
  `The real Codex CLI is not at ${CODEX_BIN}. Run .ci/run (it installs @openai/codex into ` +
  `~/.cache/ralphkit-ci/codex and exports RALPHKIT_CODEX_BIN), or set RALPHKIT_CODEX_BIN.`;

if (SKIP_CODEX) process.stderr.write(`skipping Codex e2e tests: ${CODEX_MISSING_MESSAGE}\n`);

/** Call first in each codex test: fails with the way out when the CLI is absent (reached only in CI). */
export function requireCodex(): void {
  if (CODEX_MISSING) throw new Error(CODEX_MISSING_MESSAGE);
}

/** The variable the provider's `env_key` names; Codex sends its value as the bearer token. */
const KEY_VAR = 'RALPHKIT_TEST_CODEX_KEY';

/**
 * A throwaway CODEX_HOME whose config.toml points Codex at `server` through a custom model provider, with no
 * retries (a scenario bug fails at once) and the features off that otherwise reach github.com and chatgpt.com
 * (plugins, remote plugins, apps, analytics). `codex exec --strict-config` accepts every key here.
 */
export function codexHome(server: ResponsesServer): string {
  const home = testdir('ralphkit-codex-home-');
  const config = [
    'model = "codex-test-model"',
    'model_provider = "scripted"',
    '',
    '[model_providers.scripted]',
    'name = "Scripted Responses API"',
    `base_url = ${JSON.stringify(server.url)}`,
    'wire_api = "responses"',
    `env_key = "${KEY_VAR}"`,
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
  ];
  writeFileSync(path.join(home, 'config.toml'), `${config.join('\n')}\n`);
  return home;
}

/**
 * Environment for a Codex run against `server`, on top of `base` (e.g. claudeEnv's, when Claude Code runs in the same
 * loop): its own CODEX_HOME, the test key, base's HOME or a throwaway one, and every OPENAI_* / CODEX_* variable of
 * the outer shell removed, so a developer's real credentials never reach the test.
 */
export function codexEnv(server: ResponsesServer, base: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const cleared = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => /^(OPENAI_|CODEX_)/.test(k))
      .map((k) => [k, undefined]),
  );
  return {
    ...cleared,
    HOME: testdir('ralphkit-codex-user-'),
    ...base,
    CODEX_HOME: codexHome(server),
    [KEY_VAR]: 'test-key',
  };
}
