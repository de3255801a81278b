// What the reviewer's CLI reads besides the review request (issue #26, class 7). The agent can write the claimed
// commit's instruction files and, without --sandbox, the user's HOME: both reach a reviewer that starts in a clone of
// the commit with the user's configuration (Claude Code's CLAUDE.md files and settings hooks, Codex's AGENTS.md and
// skills, a model provider of its own that answers SHIP). So the clone loses every agent instruction and
// configuration file, and Claude Code and Codex reviewers run with a configuration folder the runner makes for each
// review, holding only what the CLI needs to log in (docs/agents.md says what was checked against each CLI).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentName } from '../loop-options.js';
import type { ReviewerLogin } from './types.js';
import { readBytesOrNull } from '../../util/read.js';

/**
 * Files and folders an agent CLI reads as instructions or configuration when it starts in, or reads files under, a
 * folder: memory files (CLAUDE.md, AGENTS.md, GEMINI.md and their local and override forms), settings with hooks and
 * MCP servers, commands, sub-agents, skills. Matched by name, in any folder of the clone, in any letter case.
 */
const INSTRUCTION_NAMES = new Set([
  'claude.md',
  'claude.local.md',
  'agents.md',
  'agents.override.md',
  'gemini.md',
  '.claude',
  '.codex',
  '.agents',
  '.gemini',
  '.mcp.json',
]);

/** The paths of `files` (the claimed commit's, relative to the clone) to remove: the shallowest of each match. */
export function planInstructionPaths(files: readonly string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    const at = parts.findIndex((p) => INSTRUCTION_NAMES.has(p.toLowerCase()));
    if (at >= 0) found.add(parts.slice(0, at + 1).join('/'));
  }
  return [...found].sort();
}

/** Removes `paths` from the clone (a symbolic link goes itself: what it points to is not the clone's to delete). */
export function removeInstructionFiles(dir: string, paths: readonly string[]): void {
  for (const p of paths) rmSync(path.join(dir, p), { recursive: true, force: true });
}

export function captureReviewerLogin(agent: AgentName | undefined, env: NodeJS.ProcessEnv): ReviewerLogin | undefined {
  if (agent === 'claude') {
    // Claude Code keeps its login in <dir>/.credentials.json (the macOS Keychain on a Mac), <dir> being
    // CLAUDE_SECURESTORAGE_CONFIG_DIR when set (empty: ~/.claude and the default Keychain entry), else
    // CLAUDE_CONFIG_DIR, else ~/.claude. The reviewer keeps reading and refreshing that login where it is: a copy
    // refreshed elsewhere would spend the refresh token the user's own sessions hold.
    const credentialsDir = env.CLAUDE_SECURESTORAGE_CONFIG_DIR ?? (env.CLAUDE_CONFIG_DIR || '');
    return { agent, credentialsDir };
  }
  if (agent === 'codex') {
    const codexHome = env.CODEX_HOME || path.join(env.HOME ?? os.homedir(), '.codex');
    // config.toml names the model provider (a base URL, the variable holding its key): the user's as it was before
    // the agent ran, since one the agent wrote could send the review to a server of its own.
    return { agent, codexHome, config: readBytesOrNull(path.join(codexHome, 'config.toml')) };
  }
  return undefined;
}

export interface ReviewerHome {
  /** The folder made for this review (mode 0700), removed by `remove`. */
  dir: string;
  /** Variables for the reviewer's environment. */
  env: Record<string, string>;
  remove(): void;
}

/** A configuration folder for one review, and the environment that points the reviewer's CLI at it. */
export function prepareReviewerHome(login: ReviewerLogin): ReviewerHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-reviewer-home-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (login.agent === 'claude') {
    const env = {
      CLAUDE_CONFIG_DIR: dir,
      CLAUDE_SECURESTORAGE_CONFIG_DIR: login.credentialsDir,
      // Safe mode: no CLAUDE.md (those of the folders above the clone too: a /tmp/CLAUDE.md), no hooks but managed
      // ones, no skills, plugins, MCP servers, commands or sub-agents. The second for CLIs without safe mode.
      CLAUDE_CODE_SAFE_MODE: '1',
      CLAUDE_CODE_DISABLE_CLAUDE_MDS: '1',
    };
    return { dir, env, remove };
  }
  const codexHome = path.join(dir, 'codex');
  const home = path.join(dir, 'home');
  mkdirSync(codexHome);
  mkdirSync(home);
  if (login.config) writeFileSync(path.join(codexHome, 'config.toml'), login.config, { mode: 0o600 });
  // Codex writes a refreshed login over auth.json in place: through the link, into the user's own file.
  symlinkSync(path.join(login.codexHome, 'auth.json'), path.join(codexHome, 'auth.json'));
  // HOME too: Codex reads skills from ~/.agents/skills.
  return { dir, env: { CODEX_HOME: codexHome, HOME: home }, remove };
}
