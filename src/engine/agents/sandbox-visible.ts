// Whether the sandbox can see the agent's program. The runner finds it on the host's PATH, but inside the sandbox /tmp
// is a private tmpfs (only the repository and the loop's own folders are bound into it), /dev and /proc are fresh and
// the verdict record's key is hidden: an agent installed there starts on the host's lookup and then is "not found" in
// every iteration. Checked once at start, so that is a refusal (exit 2) instead of three failed iterations (exit 4).
import { closeSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { isWithin } from '../../util/repo-path.js';
import type { RunOptions } from '../loop-options.js';
import { AGENTS, agentBinVar } from './index.js';
import { findExecutable, readFirstWord } from './check.js';
import { keyDir } from '../store/verdict-record.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { readShownRun } from './sandbox.js';

/** What the sandbox shows of the host (agents/sandbox.ts planSandboxCommand): everything, except what is listed here. */
export interface SandboxView {
  /** Bound into the sandbox from the host: the repository, git's common dir, HOME. */
  bound: string[];
  /** Not the host's inside the sandbox (a private /tmp, a fresh /dev and /proc) or hidden, unless under `bound`. */
  unseen: string[];
  /** Hidden even inside `bound` (the verdict record's key in HOME). */
  hidden: string[];
}

// `/run` is an empty tmpfs in the sandbox too, but for what readShownRun shows again.
const PRIVATE_ROOTS = ['/tmp', '/dev', '/proc', '/run'];
// A symlink chain or #! interpreters deeper than this are not followed further (the kernel's own limits are 40 and 4).
const MAX_HOPS = 40;
const MAX_INTERPRETERS = 4;

export function sandboxView(repoRoot: string, gitDir: string, env: NodeJS.ProcessEnv): SandboxView {
  const home = env.HOME && path.isAbsolute(env.HOME) ? [realOrSelf(env.HOME)] : [];
  return {
    bound: [repoRoot, realOrSelf(gitDir), ...home, ...readShownRun(env)],
    unseen: PRIVATE_ROOTS,
    hidden: [realOrSelf(keyDir(env))],
  };
}

/** Whether the sandbox shows host path `p` (absolute, as the host names it). */
export function isSeen(p: string, view: SandboxView): boolean {
  if (view.hidden.some((d) => isWithin(p, d))) return false;
  if (view.bound.some((d) => isWithin(p, d))) return true;
  return !view.unseen.some((d) => isWithin(p, d));
}

/**
 * The first path on the way to running `program` (absolute, found on the host) that the sandbox does not show: the
 * file itself, each link of a symlink chain, its real path, and the same for the interpreter its `#!` line names
 * (`#!/usr/bin/env node`: `node` as PATH finds it). Null when all of them are seen.
 */
export function findUnseen(
  program: string,
  view: SandboxView,
  env: NodeJS.ProcessEnv,
  depth = 0,
): { path: string; via?: string } | null {
  for (const p of followLinks(program))
    if (!isSeen(p, view)) return p === program ? { path: p } : { path: p, via: program };
  if (depth >= MAX_INTERPRETERS) return null;
  const interpreter = readInterpreter(realOrSelf(program), env);
  if (!interpreter) return null;
  const unseen = findUnseen(interpreter, view, env, depth + 1);
  return unseen ? { path: unseen.path, via: unseen.via ?? `the #! line of ${program}` } : null;
}

/** `p`, every symlink it leads through, and where it ends. */
function followLinks(p: string): string[] {
  const chain = [p];
  let at = p;
  for (let i = 0; i < MAX_HOPS; i++) {
    let target: string;
    try {
      target = readlinkSync(at);
    } catch {
      break;
    }
    at = path.resolve(path.dirname(at), target);
    chain.push(at);
  }
  // A folder on the way may be a link too: the real path is where the kernel ends up.
  chain.push(realOrSelf(p));
  return chain;
}

/** The program a `#!` line starts, found the way the kernel and `env` would (null: no such line, or nothing found). */
function readInterpreter(file: string, env: NodeJS.ProcessEnv): string | null {
  const line = readFirstLine(file);
  if (!line.startsWith('#!')) return null;
  const [interpreter, ...args] = line.slice(2).trim().split(/\s+/);
  if (!interpreter || !path.isAbsolute(interpreter)) return null;
  if (path.basename(interpreter) !== 'env') return interpreter;
  // `#!/usr/bin/env node`, `#!/usr/bin/env -S node --flag`: the first word that is not an option or an assignment.
  const name = args.find((a) => !a.startsWith('-') && !a.includes('='));
  return name ? findExecutable(name, env) : interpreter;
}

function readFirstLine(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('latin1').split('\n')[0];
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The agent's program as the runner starts it: the named agent's binary, or --agent-cmd's first word (null: not a plain word). */
export function agentProgram(options: RunOptions, repoRoot: string, env: NodeJS.ProcessEnv): string | null {
  if (options.agentCmd === undefined)
    return findExecutable(env[agentBinVar(options.agent)] || AGENTS[options.agent].bin, env);
  const word = readFirstWord(options.agentCmd);
  if (!word) return null;
  // The agent runs in the repository root, so a relative path is looked up there (agents/check.ts does the same).
  return findExecutable(word.includes('/') ? path.resolve(repoRoot, word) : word, env);
}

// Where a named agent keeps its login and settings when told elsewhere than HOME: the sandbox must show that too.
const CONFIG_VARS: Partial<Record<RunOptions['agent'], string>> = { claude: 'CLAUDE_CONFIG_DIR', codex: 'CODEX_HOME' };

interface AgentPlace {
  repoRoot: string;
  gitDir: string;
  env: NodeJS.ProcessEnv;
}

/** Under the sandbox, an agent whose program (or its interpreter, or a link on the way) the sandbox cannot see is refused. */
export function refuseUnseenAgent(options: RunOptions, at: AgentPlace): void {
  const unseen = readUnseenAgent(options, at);
  if (unseen) throw new LoopExit(LOOP_EXIT.refused, unseen.message, unseen.hint);
}

/** What the sandbox cannot see of the agent (its config folder, its program), said with what to do; null when all is seen. */
export function readUnseenAgent(options: RunOptions, at: AgentPlace): { message: string; hint: string } | null {
  const view = sandboxView(at.repoRoot, at.gitDir, at.env);
  const configVar = options.agentCmd === undefined ? CONFIG_VARS[options.agent] : undefined;
  const config = configVar ? at.env[configVar] : undefined;
  if (configVar && config && path.isAbsolute(config) && !isSeen(realOrSelf(config), view)) {
    return {
      message: `the sandbox cannot see ${configVar} (${config}): it is under ${renderUnseenRoot(realOrSelf(config))}, which the sandbox replaces with its own, so ${options.agent} would start without its login`,
      hint: `move it under your HOME (e.g. ${configVar}=~/.${options.agent === 'claude' ? 'claude' : 'codex'}); or run with --no-sandbox`,
    };
  }
  const program = agentProgram(options, at.repoRoot, at.env);
  const unseen = program ? findUnseen(program, view, at.env) : null;
  if (!unseen) return null;
  const who = options.agentCmd === undefined ? `the agent (${options.agent})` : "--agent-cmd's program";
  const via = unseen.via ? ` (${unseen.via})` : '';
  const fix =
    options.agentCmd === undefined
      ? `install it elsewhere (npm install -g ${AGENTS[options.agent].npmPackage}, or under your HOME) or point ${agentBinVar(options.agent)} at a copy outside /tmp`
      : 'install it outside /tmp (under your HOME, /usr/local or the repository)';
  return {
    message: `the sandbox cannot see ${who}: ${unseen.path}${via} is under ${renderUnseenRoot(unseen.path)}, which the sandbox replaces with its own`,
    hint: `${fix}; or run with --no-sandbox`,
  };
}

function renderUnseenRoot(p: string): string {
  return PRIVATE_ROOTS.find((d) => isWithin(p, d)) ?? path.dirname(p);
}
