// `ralphkit install` as a function: takes `cwd`, returns what it did (tests call this directly).
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../paths.js';
import { readInstallSources } from './sources.js';
import { runFiles, type AskConflict, type FileRunResult } from './run-files.js';
import type { SkillAgent } from '../skills/agent-names.js';
import { resolveCwdFolder } from '../cwd.js';
import { readManifest } from './manifest.js';
import { planClaudeHook } from './claude-hook.js';
import { planCi } from './ci.js';
import { MANIFEST_PATH, type CiProvider } from './types.js';
import { shellQuote } from '../util/shell-quote.js';
import { withInstallLock } from './lock.js';
import { findRunningLoop } from '../engine/store/locks.js';
import { EXIT, RalphkitError } from '../errors.js';
import { ralphkitCommand } from '../util/invocation.js';

export interface InstallOptions {
  /** The repository to install into. */
  cwd: string;
  /** Back up and overwrite managed files the user edited (state files are never touched). */
  force?: boolean;
  /** Plan only: write nothing. */
  dryRun?: boolean;
  /** Include unified diffs of files that would change in the result. */
  diff?: boolean;
  /** Skill folders to install into; default: the ones the manifest records, else ['claude']. */
  agents?: SkillAgent[];
  /** Install the prd and ralph skills; default true. */
  skills?: boolean;
  /** Settles each conflict; pass only when a person can answer. Without it, conflicts refuse. */
  ask?: AskConflict;
  /** The ralphkit package to install from (templates/, skills/, dist/ralph.mjs); default: this package. */
  sourceRoot?: string;
  /** Clock for the backup folder name. */
  now?: Date;
  /**
   * The Claude Code Stop hook in .claude/settings.json: true adds it, false takes it out, undefined keeps what the
   * manifest records (installed: kept up to date; not installed: left alone).
   */
  claudeHook?: boolean;
  /**
   * The CI workflow (`--ci github`): a provider adds it, false takes it out (`--no-ci`), undefined keeps what the
   * manifest records (installed: kept up to date; not installed: left alone).
   */
  ci?: CiProvider | false;
  /** Told once when another install holds the lock and this one waits for it. */
  onWait?: (holder: { pid: number } | null) => void;
  /** Test hook: stop after this many writes and wait to be killed. */
  pauseAfterWrites?: number;
}

export type InstallResult = FileRunResult;

export async function runInstall(options: InstallOptions): Promise<InstallResult> {
  const target = realpathSync(resolveCwdFolder(options.cwd));
  if (options.dryRun) return install(target, options);
  refuseRunningLoop(target);
  return withInstallLock(target, () => install(target, options), { onWait: options.onWait });
}

/**
 * A loop at work in this tree runs and trusts the files install writes (ralph/ralph.mjs, the prompt), and its agent
 * would commit them with its story: install waits until it is over.
 */
function refuseRunningLoop(target: string): void {
  const loop = findRunningLoop(target);
  if (!loop) return;
  const what = loop.inSession
    ? `an in-session loop (Claude Code session ${loop.id}, pid ${loop.pid})`
    : `a loop (${loop.id}, pid ${loop.pid})`;
  throw new RalphkitError(
    `${what} is running in ${target}; install would change the files it runs and trusts, and its agent would commit them with its work; nothing was changed`,
    {
      exitCode: EXIT.refused,
      hint: `wait for it to end (${ralphkitCommand('status')}), or stop it with: ${ralphkitCommand(`cancel ${loop.id}`)}; then run install again`,
    },
  );
}

async function install(target: string, options: InstallOptions): Promise<InstallResult> {
  const root = options.sourceRoot ?? packageRoot();
  const { manifest } = readManifest(path.join(target, MANIFEST_PATH));
  const agents = options.agents ?? manifest?.agents ?? ['claude'];
  const skills = options.skills ?? true;
  const files = await readInstallSources({ root, agents, skills });
  const hook = planClaudeHook(target, options.claudeHook, manifest);
  const ci = planCi(root, options.ci, manifest);
  files.push(...hook.files, ...ci.files);
  const result = await runFiles({
    ...options,
    files,
    version: readPackageVersion(root),
    guardDowngrade: true,
    claudeHook: hook.record,
    ci: ci.record,
    ...(skills ? { recordAgents: agents } : {}),
  });
  const gitRoot = findGitRoot(result.cwd);
  if (!gitRoot) {
    result.warnings.push(
      `${result.cwd} is not inside a git repository; the loop needs git (run \`git init\` there before ./ralph/ralph.sh)`,
    );
  } else if (gitRoot !== result.cwd) {
    result.warnings.push(
      `${result.cwd} is a subfolder of the repository ${gitRoot}; the loop looks for ralph/ at the repository root (install with --cwd ${shellQuote(gitRoot)}, or run the loop with --prd and --prompt)`,
    );
  }
  return result;
}

function readPackageVersion(root: string): string {
  return (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The nearest folder at or above `dir` holding `.git` (a folder, or a file in worktrees and submodules). */
export function findGitRoot(dir: string): string | undefined {
  for (let current = dir; ; current = path.dirname(current)) {
    if (existsSync(path.join(current, '.git'))) return current;
    if (path.dirname(current) === current) return undefined;
  }
}
