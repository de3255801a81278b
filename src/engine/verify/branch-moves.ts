// Branches other than the loop's are the agent's to write too (refs/heads, under --sandbox as well). An adversarial
// pass moved `main` onto a commit whose tree held an engine of its own with a manifest to match: the loop's exit 0 was
// true of its branch, and your `git checkout main` then `./ralph/ralph.sh` ran that engine outside the sandbox. So a
// branch an agent run moved or deleted is put back where the run found it, and what the agent pointed it at is kept
// under the loop's refs (nothing is lost), and the iteration's claims are rejected. A branch checked out in a worktree
// is not moved under it, only named (a commit of yours there, while the agent ran, moves it too). A branch the agent
// created is moved aside at the loop's end (setAsideCreatedBranches): git takes a branch name before a short commit id.
import { lstatSync, rmSync } from 'node:fs';
import path from 'node:path';
import { realpathOrUndefined } from '../../util/read.js';
import { runGit, type GitResult } from '../git/git.js';
import type { Violation } from './types.js';
import type { RefsSnapshot } from '../git/head.js';

/** What restoreMovedBranches compares and where it writes. */
export interface BranchPutBack {
  top: string;
  loopId: string;
  /** Each local branch and its commit as the loop holds them (its start; what it named since, once). */
  before: ReadonlyMap<string, string>;
  /** The refs read now: each branch, and those that are symbolic (one that was not is moved, whatever it resolves to). */
  now: Pick<RefsSnapshot, 'branches' | 'symbolic'>;
  /** Branches the agent may move (the loop's, other loops'); a name ending in `*` is a prefix (skips). */
  skip: readonly string[];
  /** The branch the loop's own tree has checked out, left like one checked out elsewhere (the resume and the end). */
  here?: string | null;
  /** git's common dir: a lock the agent left on a ref is removed, once its put-back failed on it. */
  commonDir?: string;
  /** Who the violation says moved them, when not "the agent": a --parallel worker cannot tell its agent from another's. */
  by?: string;
}

/**
 * Puts back what moved since `before`; returns the violation (undefined: none put back), what it left, to be named,
 * and the branches left (checked out somewhere), which the caller holds at their new place so they are named once.
 * A put-back that fails is said; `before` is unchanged by it, so the next comparison tries again.
 */
export async function restoreMovedBranches(
  p: BranchPutBack,
): Promise<{ violation?: Violation; left?: string; leftBranches?: string[]; failed?: boolean }> {
  const { top, loopId, before, here } = p;
  const after = p.now.branches;
  // Not read (git failed on a ref the agent wrote): nothing is known to be in place, which is not "nothing moved".
  if (!after)
    return {
      violation: {
        reason: `the branches could not be read (git for-each-ref refs/heads failed), so none could be checked for moves: look at git for-each-ref refs/heads before you check out or merge any`,
        files: [],
      },
      failed: true,
    };
  const symbolic = p.now.symbolic;
  const moved = [...before].filter(([b, sha]) => !skips(p.skip, b) && (after.get(b) !== sha || symbolic?.has(b)));
  if (!moved.length) return {};
  // The loop's own tree is not one of them: a HEAD the agent switched there is switched back after this.
  const checkedOut = await branchesCheckedOut(top);
  const lines: string[] = [];
  const keep: string[] = [];
  const said: string[] = [];
  const left: string[] = [];
  const leftBranches: string[] = [];
  for (const [b, was] of moved) {
    const now = after.get(b);
    const to = now ? `to ${now.slice(0, 7)}${symbolic?.has(b) ? ', made a symbolic ref' : ''}` : 'deleted';
    if (b === here) {
      left.push(
        `${b} (${to}; checked out here, so left as it is; it was at ${was.slice(0, 7)}: a resume once you switched off it puts it back)`,
      );
      continue;
    }
    // Unknown: nothing is moved under a worktree that may have it checked out.
    if (!checkedOut || checkedOut.has(b)) {
      left.push(`${b} (${to}; checked out in a worktree, so left as it is; it was at ${was.slice(0, 7)})`);
      leftBranches.push(b);
      continue;
    }
    // no-deref: a branch the agent made a symbolic ref (to a branch of its own) is written itself, not through it.
    lines.push('option no-deref', now ? `update refs/heads/${b} ${was}` : `create refs/heads/${b} ${was}`);
    if (now) keep.push(`update refs/ralphkit/loops/${loopId}/moved/${b} ${now}\n`);
    said.push(
      `${b} (${to}; put back at ${was.slice(0, 7)}${now ? `, kept as refs/ralphkit/loops/${loopId}/moved/${b}` : ''})`,
    );
  }
  // What the agent pointed them at, kept on its own first: a keep-ref that clashes with one the agent made fails
  // alone, never the put-back.
  if (keep.length) await runGit(top, ['update-ref', '--stdin'], { input: keep.join('') });
  const refs = moved.map(([b]) => `refs/heads/${b}`);
  const failed = lines.length ? await putBack(top, lines, refs, p.commonDir) : '';
  return {
    ...(said.length
      ? {
          violation: {
            reason: `${p.by ?? 'the agent'} moved branches other than the loop's: ${said.join(', ')}${failed}; a branch of yours it points elsewhere is what your next checkout of it gives you`,
            files: [],
          },
        }
      : {}),
    ...(left.length ? { left: `a branch other than the loop's moved while the agent ran: ${left.join(', ')}` } : {}),
    ...(leftBranches.length ? { leftBranches } : {}),
    ...(failed ? { failed: true } : {}),
  };
}

/** What setAsideCreatedBranches compares and where it writes. */
export interface CreatedBranches {
  top: string;
  loopId: string;
  /** The branches the loop started with. */
  held: ReadonlyMap<string, string>;
  /** The branches now (null: the list could not be read; restoreMovedBranches has said so). */
  now: ReadonlyMap<string, string> | undefined;
  /** Branches the loop's runs make or move (the loop's own, its story branches, other loops'): skips. */
  skip: readonly string[];
  /** The branch the loop's tree has checked out, left like one checked out elsewhere. */
  here: string | null;
  commonDir: string;
}

/**
 * At the loop's end, the branches it did not start with and does not skip: the agent's. git takes a branch name
 * before a short commit id, so a branch the agent names like the verified commit's short id (or `origin/main`) is what
 * your `git merge <id>` takes: an adversarial pass had one point at a decoy. Each is moved to
 * refs/ralphkit/loops/<id>/created/<name> (nothing is lost) and named; one checked out in a worktree is only named.
 */
export async function setAsideCreatedBranches(p: CreatedBranches): Promise<{ said?: string; failed?: boolean }> {
  const created = [...(p.now ?? [])].filter(([b]) => !p.held.has(b) && !skips(p.skip, b));
  if (!created.length) return {};
  const checkedOut = await branchesCheckedOut(p.top);
  const left = created.filter(([b]) => b === p.here || !checkedOut || checkedOut.has(b)).map(([b]) => b);
  const moved = created.filter(([b]) => !left.includes(b));
  const keep = `refs/ralphkit/loops/${p.loopId}/created/`;
  if (moved.length)
    await runGit(p.top, ['update-ref', '--stdin'], {
      input: moved.map(([b, sha]) => `update ${keep}${b} ${sha}\n`).join(''),
    });
  const refs = moved.map(([b]) => `refs/heads/${b}`);
  const r = moved.length
    ? await updateRefsRetrying(
        p.top,
        `${refs.flatMap((ref) => ['option no-deref', `delete ${ref}`]).join('\n')}\n`,
        refs,
        p.commonDir,
      )
    : null;
  const failed = r !== null && r.code !== 0;
  const said = [
    ...(moved.length
      ? [
          `branches the agent made were ${failed ? `not moved aside (${r?.stderr.trim()}): look at them before you merge or check out anything` : `moved to ${keep}`}: ${moved.map(([b, sha]) => `${b} (at ${sha.slice(0, 7)})`).join(', ')}; git takes a branch name before a commit id, so one named like a commit's short id is what your git merge of that id would take`,
        ]
      : []),
    ...(left.length ? [`branches the agent made, checked out in a worktree, so left: ${left.join(', ')}`] : []),
  ];
  return { said: said.join('; '), ...(failed ? { failed } : {}) };
}

/** Whether `branch` is one of `patterns`: a name is the branch itself, one ending in `*` a prefix (story branches). */
export function skips(patterns: readonly string[], branch: string): boolean {
  return patterns.some((o) => (o.endsWith('*') ? branch.startsWith(o.slice(0, -1)) : branch === o));
}

/** One transaction putting the branches back; what failed is said (empty: nothing did). */
async function putBack(top: string, lines: string[], refs: string[], commonDir?: string): Promise<string> {
  const r = await updateRefsRetrying(top, `${lines.join('\n')}\n`, refs, commonDir);
  return r.code === 0
    ? ''
    : ` (putting them back failed: ${r.stderr.trim()}; it is tried again after the next agent run and at the loop's end)`;
}

/**
 * `git update-ref --stdin` of `input`, one transaction. A lock the agent left on one of `refs` fails it whole: when it
 * fails and `commonDir` is known, the locks there are removed (the agent is gone by then) and it is tried once more.
 */
export async function updateRefsRetrying(
  top: string,
  input: string,
  refs: readonly string[],
  commonDir?: string,
): Promise<GitResult> {
  const r = await runGit(top, ['update-ref', '--stdin'], { input });
  if (r.code === 0 || !commonDir || !removeRefLocks(commonDir, refs)) return r;
  return runGit(top, ['update-ref', '--stdin'], { input });
}

/**
 * The branches checked out in the repository's other worktrees (`git worktree list --porcelain`); null: unknown. Not
 * a worktree whose folder is gone, nor one inside your working tree or the loop's: the agent makes those (`git
 * worktree add` into its private /tmp, or into an ignored folder of the tree) to have a branch it moved left as
 * "checked out"; nothing of yours is lost when the branch is put back under one.
 */
async function branchesCheckedOut(top: string): Promise<Set<string> | null> {
  const r = await runGit(top, ['worktree', 'list', '--porcelain']);
  if (r.code !== 0) return null;
  const entries = r.stdout.split('\n\n').map((entry) => ({
    at: /^worktree (.*)$/m.exec(entry)?.[1],
    branch: /^branch refs\/heads\/(.*)$/m.exec(entry)?.[1],
    gone: /^prunable /m.test(entry),
  }));
  const here = real(top);
  const main = entries[0]?.at ? real(entries[0].at) : here;
  const out = new Set<string>();
  for (const { at, branch, gone } of entries) {
    if (!branch || !at || gone) continue;
    const where = real(at);
    if (where === here || within(here, where) || (where !== main && within(main, where))) continue;
    out.add(branch);
  }
  return out;
}

/** `p` is strictly inside `dir`. */
function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function real(p: string): string {
  return realpathOrUndefined(p) ?? path.resolve(p);
}

/**
 * The lock files on `refs` and on packed-refs, removed: called once the agent's processes are gone (the sandbox ends
 * with it; stopLeftovers kills what it left), so a lock there is one the agent left to make the put-back fail. Returns
 * whether any was there.
 */
function removeRefLocks(commonDir: string, refs: readonly string[]): boolean {
  let found = false;
  for (const ref of [...refs, 'packed-refs']) {
    const lock = path.join(commonDir, `${ref}.lock`);
    if (!lstatSync(lock, { throwIfNoEntry: false })) continue;
    rmSync(lock, { force: true, recursive: true });
    found = true;
  }
  return found;
}
