// The installed loop driving the real Claude Code CLI against the scripted model server: a temp repository
// with ralphkit installed by the built CLI and a two-story plan with checks, and `ralph/ralph.sh --agent claude`.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { run, type RunResult } from './repo.js';
import { installedRepo as installed } from './installed-repo.js';
import { startModelServer, type ModelServer, type Scenario } from './model-server.js';
import type { StoryAction } from './model-scenarios.js';
import { CLAUDE_BIN, claudeBinDir, claudeEnv } from './model-claude.js';

export const TWO_STORY_PLAN = {
  project: 'Greeter',
  branchName: 'ralph/greeter',
  checks: ['test -f README.md'],
  userStories: [
    {
      id: 'US-001',
      title: 'Say one',
      acceptanceCriteria: ['one.txt says one'],
      priority: 1,
      passes: false,
      notes: '',
      checks: ['grep -qx one one.txt'],
    },
    {
      id: 'US-002',
      title: 'Say two',
      acceptanceCriteria: ['two.txt says two'],
      priority: 2,
      passes: false,
      notes: '',
      checks: ['grep -qx two two.txt'],
    },
  ],
};

const WORDS: Record<string, string> = { 'US-001': 'one', 'US-002': 'two' };

/** What an honest model does for a story of TWO_STORY_PLAN: the work, its checks, the commit, then the claim. */
export function honestWork(story: { id: string }): StoryAction {
  const word = WORDS[story.id];
  return {
    files: { [`${word}.txt`]: `${word}\n` },
    claim: true,
    runChecks: true,
    commit: true,
    progress: `## ${story.id}\n- wrote ${word}.txt`,
  };
}

/** A temp repository with ralphkit installed by the built CLI and TWO_STORY_PLAN committed on main. */
export async function installedRepo(): Promise<string> {
  return installed({ plan: TWO_STORY_PLAN, message: 'chore: install ralphkit and plan' });
}

export async function serve(scenario: Scenario, repo: string): Promise<ModelServer> {
  const server = await startModelServer({ scenario, repo });
  onTestFinished(() => server.close());
  return server;
}

export interface RalphClaudeOptions {
  /** How the runner finds `claude`: on PATH, as in a user's shell (default), or named by RALPH_CLAUDE_BIN. */
  via?: 'path' | 'env';
  env?: NodeJS.ProcessEnv;
  /** How long the whole run may take (default 50 s). */
  timeoutMs?: number;
}

/** `./ralph/ralph.sh --agent claude --pause 0 --iteration-timeout 60s ...args` in `repo`, run as a user types it. */
export function ralphWithClaude(
  repo: string,
  server: ModelServer,
  args: string[],
  opts: RalphClaudeOptions = {},
): Promise<RunResult> {
  const locate =
    opts.via === 'env'
      ? { RALPH_CLAUDE_BIN: CLAUDE_BIN }
      : { PATH: `${claudeBinDir()}${path.delimiter}${process.env.PATH}` };
  const env = claudeEnv(server, { ...locate, ...opts.env });
  return run(
    path.join(repo, 'ralph/ralph.sh'),
    ['--agent', 'claude', '--pause', '0', '--iteration-timeout', '60s', ...args],
    { cwd: repo, env, timeoutMs: opts.timeoutMs ?? 50_000 },
  );
}

export function readPlan(repo: string): typeof TWO_STORY_PLAN {
  return JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8'));
}

/** The folder of the one loop that ran in `repo` (ralph/.runs/<id>/). */
export function onlyRunDir(repo: string): string {
  const runs = path.join(repo, 'ralph/.runs');
  const dirs = readdirSync(runs).filter((d) => existsSync(path.join(runs, d, 'state.json')));
  expect(dirs).toHaveLength(1);
  return path.join(runs, dirs[0]);
}

export function readState(repo: string): Record<string, any> {
  return JSON.parse(readFileSync(path.join(onlyRunDir(repo), 'state.json'), 'utf8'));
}

export function readLedger(repo: string): Array<Record<string, any>> {
  const text = readFileSync(path.join(onlyRunDir(repo), 'ledger.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The `description` of a SKILL.md's frontmatter (one line, optionally quoted). */
export function skillDescription(file: string): string {
  const frontmatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(readFileSync(file, 'utf8'))![1];
  const value = /^description:\s*(.+)$/m.exec(frontmatter)![1].trim();
  return value.replace(/^(['"])(.*)\1$/, '$2');
}
