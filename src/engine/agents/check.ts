// --dry-run's agent check: whether the agent the run would start can be found, by the same lookup the real start
// uses, so a typo shows before a loop is left running overnight. It only warns: the dry run still exits 0.
import path from 'node:path';
import { AGENTS, agentBinVar, renderMissingAgent } from './index.js';
import type { AgentName } from '../loop-options.js';
import { findExecutable } from '../../util/which.js';

export interface AgentCheck {
  /** Where the agent's program was found, or null when it was not (or could not be checked). */
  found: string | null;
  warning?: string;
  hint?: string;
  /** Why nothing was checked: the command starts with a shell construct the runner does not interpret. */
  unchecked?: string;
}

// Words the shell handles itself: they are not looked up on PATH, so their absence means nothing.
const SHELL_WORDS = new Set([
  '.',
  ':',
  '!',
  '{',
  '(',
  'cd',
  'exec',
  'eval',
  'export',
  'set',
  'source',
  'time',
  'if',
  'for',
  'while',
  'until',
  'case',
  'command',
  'builtin',
  'true',
  'false',
  'test',
  '[',
  'echo',
  'printf',
  'read',
  'ulimit',
  'umask',
  'trap',
  'unset',
]);
const PLAIN_WORD = /^[\w@%+:,./-]+$/;

export function readAgentCheck(
  agent: AgentName,
  agentCmd: string | undefined,
  repoRoot: string,
  env: NodeJS.ProcessEnv,
): AgentCheck {
  if (agentCmd === undefined) return checkNamedAgent(agent, env);
  const word = readFirstWord(agentCmd);
  if (!word) return { found: null, unchecked: 'the command starts with a shell construct' };
  if (SHELL_WORDS.has(word)) return { found: null, unchecked: `"${word}" is a shell built-in` };
  // The agent runs in the repository root, so a relative path is looked up there, not in the caller's folder.
  const found = findExecutable(word.includes('/') ? path.resolve(repoRoot, word) : word, env);
  if (found) return { found };
  return {
    found: null,
    warning: `"${word}" ${word.includes('/') ? 'is not an executable file (from the repository root)' : 'is not an executable on PATH'}: the run would fail with "not found" and stop`,
    hint: 'check the spelling of --agent-cmd, install the tool, or give its full path',
  };
}

function checkNamedAgent(agent: AgentName, env: NodeJS.ProcessEnv): AgentCheck {
  const found = findExecutable(env[agentBinVar(agent)] || AGENTS[agent].bin, env);
  if (found) return { found };
  const missing = renderMissingAgent(agent, env);
  return { found: null, warning: `${missing.message}; the run would refuse to start (exit 2)`, hint: missing.hint };
}

/** The program a command line starts with, when it is a plain word (no quotes, variables, redirections or assignments). */
export function readFirstWord(command: string): string | null {
  const first = command.trim().split(/\s+/)[0] ?? '';
  return PLAIN_WORD.test(first) ? first : null;
}

/** The one PATH lookup (util/which.ts), here too for the callers that check an agent's program. */
export { findExecutable };
