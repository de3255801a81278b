// Every git process the runner starts goes through these settings (SPEC §6): the agent can write the repository's
// hooks and configuration, so nothing git would run on the runner's behalf may come from there. `-c` settings
// override the repository's own values for the duration of one command, whatever .git/config says.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Hooks off (a post-commit hook would otherwise re-flip `passes` right after the runner's reject commit, and a
 * post-checkout hook would write files into the verification checkout), no fsmonitor daemon (a command git would
 * execute), no signing prompts, no external diff or textconv programs, no transport that runs commands.
 */
export const HARDENED_CONFIG: readonly string[] = [
  `core.hooksPath=${process.platform === 'win32' ? path.join(process.env.TEMP ?? 'C:\\', 'ralphkit-no-hooks') : '/dev/null'}`,
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'diff.external=',
  'protocol.ext.allow=never',
];

/** The `-c key=value` arguments that go before every git subcommand the runner runs. */
export const HARDENED_ARGS: readonly string[] = HARDENED_CONFIG.flatMap((kv) => ['-c', kv]);

/** Git must never wait for a person: no credential prompt, no editor, no pager. */
export const GIT_ENV: Readonly<Record<string, string>> = { GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0' };

// The user's global git configuration as it was when the loop started (see snapshotGlobalConfig), or null.
let globalSnapshot: string | null = null;

/** The environment of a runner git process: the runner's own (the user's, not the agent's), never waiting for input. */
export function hardenedGitEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...base, ...GIT_ENV, ...(globalSnapshot ? { GIT_CONFIG_GLOBAL: globalSnapshot } : {}) };
}

/**
 * ~/.gitconfig (and $XDG_CONFIG_HOME/git/config) are the agent's to write too: a filter or an include added there
 * would run in the runner's own git calls. At start their content is copied to a private file, and every runner git
 * call reads that copy (GIT_CONFIG_GLOBAL, git 2.32+) for the rest of the run.
 */
export function snapshotGlobalConfig(env: NodeJS.ProcessEnv): void {
  if (env.GIT_CONFIG_GLOBAL) return;
  const home = env.HOME || homedir();
  const files = [path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'config'), path.join(home, '.gitconfig')];
  // git reads the XDG file first, then ~/.gitconfig: the same order in one file keeps the same winner.
  const text = files.map((f) => { try { return readFileSync(f, 'utf8'); } catch { return ''; } }).join('\n');
  const dir = mkdtempSync(path.join(tmpdir(), 'ralph-git-'));
  const file = path.join(dir, 'config');
  writeFileSync(file, text, { mode: 0o600 });
  globalSnapshot = file;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}

/** `git <hardening> <args>`: the argument list for execFile. */
export function hardenedArgs(args: readonly string[]): string[] {
  return [...HARDENED_ARGS, ...args];
}
