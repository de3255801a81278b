// Git at the loop's edge: execFile with argument arrays only, never a shell, so a branchName from prd.json
// can never become a command.
import { execFile } from 'node:child_process';
import { LoopExit } from '../types.js';
import { hardenedArgs, hardenedGitEnv } from './harden.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runGit(cwd: string, args: string[]): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile('git', hardenedArgs(args), { cwd, maxBuffer: 64 * 1024 * 1024, env: hardenedGitEnv(process.env) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 127) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (err && code === 127 ? err.message : '')) });
    });
  });
}

/** The repository's top folder; refuses (exit 2) outside a git work tree. */
export async function resolveRepoRoot(cwd: string): Promise<string> {
  const r = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (r.code === 127) throw new LoopExit(2, `cannot run git: ${r.stderr.trim()}`, 'install git and make sure it is on your PATH');
  if (r.code !== 0) {
    const refusal = explainGitRefusal(cwd, r.stderr);
    throw new LoopExit(2, refusal.message, refusal.hint);
  }
  return r.stdout.trim();
}

/**
 * Pure: git's complaint about `folder` in words for the user. "Not a repository" gets the usual
 * advice; anything else (dubious ownership, a broken .git) is git's own first line,
 * with the advice git printed after it (e.g. its `git config --global --add safe.directory` command).
 */
export function explainGitRefusal(folder: string, stderr: string): { message: string; hint?: string } {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const first = (lines[0] ?? '').replace(/^(fatal|error):\s*/, '');
  if (first === '' || /not a git repository/i.test(first)) {
    return { message: `not a git repository: ${folder}`, hint: 'the loop needs git: run `git init` and commit once, then start again' };
  }
  const advice = lines.slice(1).join(' ');
  return { message: `git refuses ${folder}: ${first}`, hint: advice || undefined };
}

/** True when git accepts `name` as a branch name (`git check-ref-format --branch`). */
export async function isValidBranchName(cwd: string, name: string): Promise<boolean> {
  if (!name || name.startsWith('-')) return false;
  const r = await runGit(cwd, ['check-ref-format', '--branch', name]);
  return r.code === 0;
}

export async function currentBranch(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headSha(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return r.code === 0 ? r.stdout.trim() : null;
}

async function branchExists(cwd: string, name: string): Promise<boolean> {
  return (await runGit(cwd, ['show-ref', '--verify', '--quiet', `refs/heads/${name}`])).code === 0;
}

export interface CheckoutResult {
  /** What was done, for the log. */
  message: string;
  /** True when the branch did not exist and was created here (a rollback deletes it again). */
  created: boolean;
}

/**
 * Puts the work tree on `branch`: nothing when already there, a checkout when it exists, else a new branch
 * from `base` (or HEAD).
 */
export async function checkoutBranch(cwd: string, branch: string, base?: string): Promise<CheckoutResult> {
  if ((await currentBranch(cwd)) === branch) return { message: `on branch ${branch}`, created: false };
  if (await branchExists(cwd, branch)) {
    await gitOrRefuse(cwd, ['checkout', '--quiet', branch, '--'], `cannot check out ${branch}`);
    return { message: `checked out ${branch}`, created: false };
  }
  let start = 'HEAD';
  if (base) {
    const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
    if (r.code !== 0) throw new LoopExit(2, `baseBranch "${base}" does not name a commit in this repository`, 'fix baseBranch in prd.json or remove it to branch from HEAD');
    start = r.stdout.trim();
  }
  await gitOrRefuse(cwd, ['checkout', '--quiet', '-b', branch, start, '--'], `cannot create branch ${branch}`);
  return { message: `created ${branch} from ${base ?? 'HEAD'}`, created: true };
}

async function gitOrRefuse(cwd: string, args: string[], what: string): Promise<void> {
  const r = await runGit(cwd, args);
  if (r.code !== 0) throw new LoopExit(2, `${what}: ${r.stderr.trim()}`, 'commit or stash your changes, then start again');
}

/** A file as committed at `rev` (a sha, HEAD, refs/heads/<name>), or null when the revision or the file does not exist. */
export async function readFileAt(cwd: string, rev: string, relPath: string): Promise<string | null> {
  const r = await runGit(cwd, ['cat-file', 'blob', `${rev}:${relPath.split('\\').join('/')}`]);
  return r.code === 0 ? r.stdout : null;
}

/** A file as committed on a local branch, or null when the branch or the file does not exist there. */
export function readFileOnBranch(cwd: string, branch: string, relPath: string): Promise<string | null> {
  return readFileAt(cwd, `refs/heads/${branch}`, relPath);
}

/** True when commit `older` is reachable from `newer` (`git merge-base --is-ancestor`); false too when either is gone. */
export async function isAncestor(cwd: string, older: string, newer: string): Promise<boolean> {
  return (await runGit(cwd, ['merge-base', '--is-ancestor', older, newer])).code === 0;
}

/** The commit of every local branch, so commits made later can be told apart from those that already existed. */
export async function readBranchTips(cwd: string): Promise<string[]> {
  const r = await runGit(cwd, ['for-each-ref', '--format=%(objectname)', 'refs/heads']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

/** `<short sha> <subject>` of the commits reachable from `rev` but from none of `tips` (newest first, at most `limit`). */
export async function readCommitsSince(cwd: string, rev: string, tips: string[], limit = 20): Promise<string[]> {
  const r = await runGit(cwd, ['log', `-n${limit}`, '--format=%h %s', rev, '--not', ...tips, '--']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

/** Switches back to an existing branch; git refuses (and changes nothing) when the tree is in the way. */
export async function switchToBranch(cwd: string, branch: string): Promise<GitResult> {
  return runGit(cwd, ['checkout', '--quiet', branch, '--']);
}
