// With --sandbox: the agent's command under bubblewrap, and the sandbox its checks run in (SPEC §6).
import type { RunContext, CheckSandbox } from '../types.js';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { runsDir } from '../store/layout.js';
import { type RunTrust } from '../verify/trust.js';
import { ENGINE_FILES } from '../verify/runner-guard.js';
import { planSandboxCommand, probeSandbox } from '../agents/sandbox.js';
import { keyDir } from '../store/verdict-record.js';
import { LoopFailure } from '../errors.js';

/** A writable folder for files the agent writes itself (Codex's last message): the rest of ralph/.runs/ is read-only in the sandbox. */
export function ensureScratch(dir: string): string {
  const scratch = path.join(dir, 'scratch');
  mkdirSync(scratch, { recursive: true });
  return scratch;
}

const PROBES = new WeakMap<RunContext, ReturnType<typeof probeSandbox>>();

/** The agent's command under bubblewrap: the runner's files, git's hooks and config and the pinned tests read-only. */
export function sandboxCommand(run: RunContext, trust: RunTrust, agent: { file: string; args: string[] }, scratch: string): { file: string; args: string[] } {
  const base = checkSandbox(run, trust) as CheckSandbox;
  // The agent commits: the repository and git's common dir stay writable to it (planSandboxCommand keeps its hooks
  // and config read-only, a linked worktree's common dir included).
  const userConfig = base.readOnly.filter((p) => p !== trust.topLevel && p !== trust.gitDir);
  const readOnly = [...ENGINE_FILES, path.relative(run.paths.repoRoot, runsDir(run.paths.repoRoot)), ...(trust.pins?.paths ?? []), ...userConfig];
  return planSandboxCommand({ ...base, file: agent.file, args: agent.args, repoRoot: trust.topLevel, gitDir: trust.gitDir, readOnly, scratch: [realpathSync(scratch)] });
}

/**
 * The gh CLI's folder (its login, hosts.yml, may hold the user's token), as gh looks for it: GH_CONFIG_DIR, else
 * $XDG_CONFIG_HOME/gh, else ~/.config/gh. Hidden from the agent and its checks when --deliver pr or pr-merge uses it.
 */
function ghConfigDir(env: NodeJS.ProcessEnv): string | null {
  if (env.GH_CONFIG_DIR) return env.GH_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'gh');
  return env.HOME ? path.join(env.HOME, '.config', 'gh') : null;
}

/**
 * With --sandbox, checks run under bubblewrap too: they execute the agent's code. Writable: the checkout and HOME
 * (package managers keep caches there); read-only: the repository itself, git's common dir (outside the repository for a
 * linked worktree or a separate git dir: the main repository's hooks, config and refs) and the global git configuration; hidden:
 * the key that seals the verdict record (its folder exists: the runner creates the key at start, run/trust.ts), and with
 * --deliver pr or pr-merge the gh CLI's login.
 */
export function checkSandbox(run: RunContext, trust: RunTrust): CheckSandbox | undefined {
  if (!run.options.sandbox) return undefined;
  // The start already proved bubblewrap works; once per run is enough (each probe starts a sandbox).
  const probe = PROBES.get(run) ?? probeSandbox(run.io.env);
  PROBES.set(run, probe);
  if (!probe.ok) throw new LoopFailure(probe.message, probe.hint);
  const home = run.io.env.HOME;
  const hidden = [keyDir(run.io.env), ...(run.options.deliver === 'pr' || run.options.deliver === 'pr-merge' ? [ghConfigDir(run.io.env)] : [])]
    .filter((dir): dir is string => !!dir && existsSync(dir))
    .map((dir) => realpathSync(dir));
  const userConfig = home ? [path.join(home, '.gitconfig'), path.join(home, '.config', 'git')] : [];
  return { bwrap: probe.bwrap, home, readOnly: [trust.topLevel, trust.gitDir, ...userConfig], hidden, network: run.options.network };
}
