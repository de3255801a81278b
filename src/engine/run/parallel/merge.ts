// The merge queue's git work, in the run's integration tree (the worktree that holds the plan's branch): one story
// branch at a time is merged with --no-ff onto a detached HEAD at the branch's tip, so the branch itself moves only
// after the merged commit passed its checks, and only from the tip the runner last knew (update-ref with the old
// value). A kill at any point leaves the branch at verified work; restoreIntegrationTree tidies the tree after one.
import { existsSync } from 'node:fs';
import { gitOk, runGit } from '../../git/git.js';
import { headSha } from '../../git/head.js';
import { runnerIdentity } from '../../git/commit.js';

export type MergeAttempt = { kind: 'merged'; commit: string } | { kind: 'conflict'; files: string[]; message: string };

export interface MergeRequest {
  /** The plan branch (refs/heads/<branch>). */
  branch: string;
  /** Its tip as the runner last left it. */
  planTip: string;
  /** The story branch's verified head. */
  storyHead: string;
  /** Paths (relative to the tree) whose plan-side version the merge keeps whatever the story branch did: the plan, its log, the engine. */
  keep: readonly string[];
  /** Writes the runner's own files (the plan with the story's verdict, the merged log) into the tree before the commit. */
  write: () => void;
  /** The files `write` wrote, relative to the tree. */
  written: readonly string[];
  message: string;
}

/**
 * The merge commit of `storyHead` onto `planTip`, made in `tree` on a detached HEAD, with the runner's files as
 * `write` leaves them. A conflict in any other file is no merge: the tree is put back and the files are named.
 */
export async function mergeStory(tree: string, req: MergeRequest): Promise<MergeAttempt> {
  await detachAt(tree, req.planTip);
  const identity = await runnerIdentity(tree);
  const merge = await runGit(tree, [...identity, 'merge', '--no-ff', '--no-commit', '--quiet', req.storyHead]);
  if (merge.code !== 0) {
    const conflicted = (await gitOk(tree, ['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
    const real = conflicted.filter((f) => !req.keep.includes(f));
    // No conflicted file at all: git refused the merge for another reason (say, an unrelated history).
    if (real.length || !conflicted.length) {
      await abandonMerge(tree, req.branch, req.planTip);
      return {
        kind: 'conflict',
        files: real,
        message: (merge.stderr || merge.stdout).trim().split('\n').slice(-3).join(' '),
      };
    }
  }
  await keepPlanSide(tree, req.planTip, req.keep);
  req.write();
  await gitOk(tree, ['add', '--', ...req.written]);
  await gitOk(tree, [...identity, 'commit', '-q', '--no-verify', '--allow-empty', '-m', req.message]);
  return { kind: 'merged', commit: (await headSha(tree)) as string };
}

/** The plan side of these paths: their versions at the plan tip, or no file where the tip has none. */
async function keepPlanSide(tree: string, planTip: string, files: readonly string[]): Promise<void> {
  // Mostly the tip has them all: one checkout. A path it lacks fails the whole checkout before anything is written
  // (git checks every pathspec first), and the tip is then listed to tell the two kinds apart.
  if (!files.length || (await runGit(tree, ['checkout', planTip, '--', ...files])).code === 0) return;
  const there = new Set(
    (await gitOk(tree, ['ls-tree', '--name-only', '-z', planTip, '--', ...files])).split('\0').filter(Boolean),
  );
  const present = files.filter((f) => there.has(f));
  const absent = files.filter((f) => !there.has(f));
  if (present.length) await gitOk(tree, ['checkout', planTip, '--', ...present]);
  if (absent.length) await runGit(tree, ['rm', '-q', '-f', '--ignore-unmatch', '--', ...absent]);
}

/**
 * The verified merge becomes the branch's tip, only over the tip it was made on: false when the branch moved since
 * (someone else wrote it), and nothing was changed. Then the tree is on the branch again.
 */
export async function publishMerge(tree: string, branch: string, commit: string, planTip: string): Promise<boolean> {
  const r = await runGit(tree, [
    'update-ref',
    '-m',
    'ralphkit: verified merge',
    `refs/heads/${branch}`,
    commit,
    planTip,
  ]);
  if (r.code !== 0) return false;
  await gitOk(tree, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  return true;
}

/** A merge that is not to be: the tree back on the branch at `planTip`, with nothing of the merge left in it. */
export async function abandonMerge(tree: string, branch: string, planTip: string): Promise<void> {
  if (await inMerge(tree)) await runGit(tree, ['merge', '--abort']);
  await gitOk(tree, ['reset', '-q', '--hard', planTip]);
  await gitOk(tree, ['checkout', '-q', '--force', branch]);
}

/**
 * Before the queue's first merge of a run (a resumed one may have been killed mid-merge): the tree goes back on its
 * branch, with anything uncommitted in it dropped. The tree is the runner's own; the branch holds only verified work.
 */
export async function restoreIntegrationTree(tree: string, branch: string): Promise<void> {
  if (!existsSync(tree)) return;
  await gitOk(tree, ['checkout', '-q', '--force', branch]);
  await gitOk(tree, ['reset', '-q', '--hard', `refs/heads/${branch}`]);
  await gitOk(tree, ['clean', '-q', '-f', '-d']);
}

/**
 * Detached at `commit`, with no leftover of an earlier merge and nothing untracked a check could pick up. A forced
 * checkout ends a merge under way (git removes MERGE_HEAD and its other state files as it switches), so no process
 * asks first whether one is.
 */
export async function detachAt(tree: string, commit: string): Promise<void> {
  await gitOk(tree, ['checkout', '-q', '--force', '--detach', commit]);
  await gitOk(tree, ['clean', '-q', '-f', '-d']);
}

/**
 * The stories of `ids` merged onto the plan branch between `from` and `to` (its first-parent history: the queue's
 * merge commits "ralph: merge <id> (<title>) ..."), oldest first; with `files`, only those whose merge changed one.
 */
export async function mergedBetween(
  tree: string,
  from: string,
  to: string,
  ids: readonly string[],
  files: readonly string[] = [],
): Promise<string[]> {
  const r = await runGit(tree, [
    'log',
    '--first-parent',
    '--reverse',
    '--format=%s',
    `${from}..${to}`,
    ...(files.length ? ['--', ...files] : []),
  ]);
  if (r.code !== 0) return [];
  const byLength = [...ids].sort((a, b) => b.length - a.length);
  return [
    ...new Set(
      r.stdout.split('\n').flatMap((line) => byLength.find((id) => line.startsWith(`ralph: merge ${id} (`)) ?? []),
    ),
  ];
}

/** The commit two commits last shared (empty when none). */
export async function mergeBase(tree: string, a: string, b: string): Promise<string> {
  return (await runGit(tree, ['merge-base', a, b])).stdout.trim();
}

/** True while a merge is under way in `tree` (MERGE_HEAD is per worktree). */
async function inMerge(tree: string): Promise<boolean> {
  return (await runGit(tree, ['rev-parse', '--quiet', '--verify', 'MERGE_HEAD'])).code === 0;
}

/** The tip of the plan branch as git has it now (null: no such branch). */
export async function readBranchTip(tree: string, branch: string): Promise<string | null> {
  const r = await runGit(tree, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}
