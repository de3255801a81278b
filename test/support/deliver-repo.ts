// A loop repository for --deliver pr and pr-merge tests: its origin is github.com/acme/demo while git's
// url.<bare>.insteadOf sends the push to a bare repository on disk, so the runner reads owner/repo from the URL the
// user configured and the hardened git still pushes. The agent dumps its environment, to prove no token reaches it.
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { git, testdir } from './repo.js';
import { agent, renderPlan } from './loop-repo.js';
import { installedRepo } from './installed-repo.js';
import type { GitHubServer } from './github-server.js';

export const BRANCH = 'ralph/test';
export const TOKEN = 'ghp_tokenThatMustNeverLeak0123456789';
export const URL_GH = 'https://github.com/acme/demo.git';

export interface DeliverRepo {
  dir: string;
  remote: string;
  envDump: string;
  agentCmd: string;
}

/** The repository, its bare remote, and an agent command that dumps its environment, then runs `before` and the worker. */
export function deliverRepo(
  plan = renderPlan({ stories: 2 }),
  url = URL_GH,
  opts: { files?: Record<string, string>; before?: string } = {},
): DeliverRepo {
  const dir = installedRepo({ plan, files: opts.files });
  const remote = path.join(testdir('ralphkit-remote-'), 'demo.git');
  git(path.dirname(remote), 'init', '-q', '--bare', remote);
  git(dir, 'remote', 'add', 'origin', url);
  git(dir, 'config', `url.${remote}.insteadOf`, url);
  const tools = testdir('ralphkit-agent-');
  const envDump = path.join(tools, 'agent-env');
  const agentCmd = path.join(tools, 'env-worker.sh');
  writeFileSync(agentCmd, `#!/bin/sh\nenv >> '${envDump}'\n${opts.before ?? ''}\nexec node '${agent('worker')}'\n`);
  chmodSync(agentCmd, 0o755);
  return { dir, remote, envDump, agentCmd };
}

export function apiEnv(server: GitHubServer, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // An empty gh configuration: this machine's own gh login never answers for the test.
  return {
    GITHUB_API_URL: server.url,
    GH_CONFIG_DIR: testdir('ralphkit-gh-'),
    GH_TOKEN: TOKEN,
    GITHUB_TOKEN: '',
    GH_ENTERPRISE_TOKEN: '',
    ...extra,
  };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile());
}

/** The token appears in no output, no runner file, and not in the agent's environment. */
export function expectNoToken(s: DeliverRepo, out: { stdout: string; stderr: string }): void {
  expect(out.stdout + out.stderr).not.toContain(TOKEN);
  const files = [...filesUnder(path.join(s.dir, 'ralph/.runs')), path.join(s.dir, 'ralph/progress.txt'), s.envDump];
  expect(files.some((f) => f.endsWith('state.json'))).toBe(true);
  expect(files.some((f) => f.endsWith('ledger.jsonl'))).toBe(true);
  for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(TOKEN);
  // The dump is real: the agent ran and wrote its environment.
  expect(readFileSync(s.envDump, 'utf8')).toContain('RALPH_RUNNER=1');
}

export const lines = (stderr: string, re: RegExp) => stderr.split('\n').filter((l) => re.test(l));
