// HEAD, branches and refs as git has them: which branch HEAD is on and its commit (one git process where it can),
// putting the work tree on the loop's branch, the tips of every local branch, and moving refs in one transaction.
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { gitOk, runGit, type GitResult } from './git.js';
import type { HeadState } from './parse.js';
import { isObjectId } from './parse.js';

export async function currentBranch(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headSha(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * currentBranch and headSha, and whether the local branch `other` exists, in one git process: `rev-parse
 * HEAD^{commit} --symbolic-full-name HEAD refs/heads/<other> --` prints the commit, refs/heads/<branch> (HEAD when
 * detached), then the full name `other` resolves to (git's own lookup, which may find another ref by that name: only
 * refs/heads/<other> itself counts), or stops with "bad revision" when nothing does. A branch with no commit yet fails
 * the first: then each is asked on its own.
 */
export async function readHead(cwd: string, other?: string): Promise<HeadState & { otherExists?: boolean }> {
  const asked = other === undefined ? [] : [`refs/heads/${other}`];
  const r = await runGit(cwd, ['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD', ...asked, '--']);
  const lines = r.stdout.split('\n');
  const [sha, name] = lines;
  const parsed = isObjectId(sha) && (name === 'HEAD' || name?.startsWith('refs/heads/'));
  const at = { head: sha, branch: name === 'HEAD' ? null : name?.slice('refs/heads/'.length) };
  if (parsed && r.code === 0 && lines.length === 4 + asked.length)
    return { ...at, ...(other === undefined ? {} : { otherExists: lines[2] === asked[0] }) };
  if (parsed && r.code !== 0 && other !== undefined && lines.length === 3 && /bad revision/.test(r.stderr))
    return { ...at, otherExists: false };
  const head = { branch: await currentBranch(cwd), head: await headSha(cwd) };
  return other === undefined ? head : { ...head, otherExists: await branchExists(cwd, other) };
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
 * from `base` (or HEAD). `known`: the branch HEAD is on (null: detached) and whether `branch` exists, when the
 * caller has just read them (readHead).
 */
export async function checkoutBranch(
  cwd: string,
  branch: string,
  base?: string,
  known?: { current: string | null; exists?: boolean },
): Promise<CheckoutResult> {
  if ((known ? known.current : await currentBranch(cwd)) === branch)
    return { message: `on branch ${branch}`, created: false };
  if (known?.exists ?? (await branchExists(cwd, branch))) {
    await gitOrRefuse(cwd, ['checkout', '--quiet', branch, '--'], `cannot check out ${branch}`);
    return { message: `checked out ${branch}`, created: false };
  }
  let start = 'HEAD';
  if (base) {
    const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
    if (r.code !== 0)
      throw new LoopExit(
        LOOP_EXIT.refused,
        `baseBranch "${base}" does not name a commit in this repository`,
        'fix baseBranch in prd.json or remove it to branch from HEAD',
      );
    start = r.stdout.trim();
  }
  await gitOrRefuse(cwd, ['checkout', '--quiet', '-b', branch, start, '--'], `cannot create branch ${branch}`);
  return { message: `created ${branch} from ${base ?? 'HEAD'}`, created: true };
}

async function gitOrRefuse(cwd: string, args: string[], what: string): Promise<void> {
  const r = await runGit(cwd, args);
  if (r.code !== 0)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${what}: ${r.stderr.trim()}`,
      'commit or stash your changes, then start again',
    );
}

/** Points each ref at its object in one transaction (`update-ref --stdin`): all of them move, or none. */
export async function updateRefs(cwd: string, updates: ReadonlyArray<{ ref: string; sha: string }>): Promise<void> {
  await gitOk(cwd, ['update-ref', '--stdin'], updates.map((u) => `update ${u.ref} ${u.sha}\n`).join(''));
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

export interface RefsSnapshot {
  /** The checked-out local branch (without refs/heads/), or null: detached HEAD, or on a branch with no commit yet. */
  branch: string | null;
  /** The commit HEAD points at, or null in a repository without commits. */
  head: string | null;
  /** The objects every local branch points at (readBranchTips). */
  tips: string[];
  /** Each local branch (without refs/heads/) and what it points at, when one git process read them all. */
  branches?: ReadonlyMap<string, string>;
  /** The branches among them that are symbolic refs (to another ref). */
  symbolic?: ReadonlySet<string>;
}

/**
 * currentBranch, headSha and readBranchTips read at one instant, by one git process in the usual case (for-each-ref
 * marks the branch HEAD is on): a detached or unborn HEAD, or a branch that points at no commit, is asked the usual way.
 */
export async function readRefs(cwd: string): Promise<RefsSnapshot> {
  // No %(objecttype): git stops (exit 128) at a branch whose object is missing, which an agent can write, and the
  // whole list would be lost with it.
  const r = await runGit(cwd, ['for-each-ref', '--format=%(HEAD)%(objectname) %(refname) %(symref)', 'refs/heads']);
  if (r.code !== 0) {
    const [{ branch, head }, tips] = [await readHead(cwd), await readBranchTips(cwd)];
    return { branch, head, tips };
  }
  const tips: string[] = [];
  const branches = new Map<string, string>();
  const symbolic = new Set<string>();
  let current: { branch: string; head: string } | null = null;
  for (const line of r.stdout.split('\n')) {
    const m = /^([* ])(\S+) refs\/heads\/(\S+) (\S*)$/.exec(line);
    if (!m) continue;
    tips.push(m[2]);
    branches.set(m[3], m[2]);
    if (m[4]) symbolic.add(m[3]);
    if (m[1] === '*') current = { branch: m[3], head: m[2] };
  }
  // A detached or unborn HEAD is asked the usual way; the branches are as read.
  const at = current ?? (await readHead(cwd));
  return { ...at, tips, branches, symbolic };
}

/** `<short sha> <subject>` of the commits reachable from `rev` but from none of `tips` (newest first, at most `limit`). */
export async function readCommitsSince(
  cwd: string,
  rev: string | string[],
  tips: string[],
  limit = 20,
): Promise<string[]> {
  const r = await runGit(cwd, ['log', `-n${limit}`, '--format=%h %s', ...[rev].flat(), '--not', ...tips, '--']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

/** Switches back to an existing branch; git refuses (and changes nothing) when the tree is in the way. */
export async function switchToBranch(cwd: string, branch: string): Promise<GitResult> {
  return runGit(cwd, ['checkout', '--quiet', branch, '--']);
}
