// The worktrees of a --parallel run's workers and the story branches on them: where each lives, made or re-used for
// an attempt and the guard its agent runs under, released between attempts, and removed at the run's end.
import { existsSync, mkdirSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { RepoLocation, RunContext } from '../../types.js';
import type { WorkerState } from '../../store/state-types.js';
import { storyRefPart } from '../../../prd/story-ref.js';
import { gitOk, readGitDirs, runGit, unpinGitDirs } from '../../git/git.js';
import { keepRecordsIn } from '../../store/layout.js';
import { realpathOrUndefined } from '../../../util/read.js';
import type { RunnerGuard } from '../../verify/runner-guard.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';
import { addWorktree, closeWorktree, holdTreeDirs, worktreePath } from '../../git/worktree.js';

/** The worktree of worker `k`: beside the run's own, named after the loop so status and cleanup can tell whose it is. */
export function workerTreePath(mainRoot: string, loopId: string, k: number): string {
  return worktreePath(mainRoot, `${loopId}--w${k}`);
}

/**
 * `<branchName>--<story id>`: a ref cannot sit under the plan branch's own ref, so it goes beside it. The id is
 * encoded (prd/story-ref.ts): any id makes a valid branch, and two ids never share one.
 */
export function storyBranch(planBranch: string, storyId: string): string {
  return `${planBranch}--${storyRefPart(storyId)}`;
}

/**
 * The files a worker's guard holds: its own tree's engine and per-worktree config, and the run's shared snapshot of
 * everything the workers share (.git/config, hooks, ~/.gitconfig, the user's engine). Shared, not taken again: a
 * snapshot taken while another worker's agent had changed .git/config would hold that change as the truth, and put
 * it back after the other worker's guard had undone it.
 */
export function workerGuard(own: RunnerGuard, shared: RunnerGuard): RunnerGuard {
  // The worker's own files: its tree's (its .git file too), and its own git dir's config.worktree and commondir. Everything else comes
  // from the run's snapshot, the main .git's files of those names and a configuration include that happens to be
  // called config.worktree among them (told by where it is, not by its name).
  const ownGitDir = (f: RunnerGuard['files'][number]) => realpathOrUndefined(path.dirname(f.abs)) === own.ownGitDir;
  const perTree = (f: RunnerGuard['files'][number]) =>
    f.inRepo || f.shown === '.git' || (['config.worktree', 'commondir'].includes(path.basename(f.abs)) && ownGitDir(f));
  return {
    files: [...own.files.filter(perTree), ...shared.files.filter((f) => !perTree(f))],
    dirs: shared.dirs,
    logLinks: new Map([...(shared.logLinks ?? []), ...(own.logLinks ?? [])]),
    gitDir: shared.gitDir,
    ownGitDir: own.ownGitDir,
  };
}

/**
 * Worker `k`'s worktree on `branch`, reset to `planTip`: created the first time, then re-used for each story it
 * takes. What an earlier attempt left uncommitted there is dropped (its claims were judged on its commits).
 */
export async function openWorkerTree(
  mainRoot: string,
  loopId: string,
  k: number,
  branch: string,
  planTip: string,
): Promise<string> {
  const root = workerTreePath(mainRoot, loopId, k);
  if (!existsSync(root)) {
    // Stale worktree records were pruned once, before any worker started (releaseStoryBranches).
    mkdirSync(path.dirname(root), { recursive: true });
    unpinGitDirs(root);
    const r = await addWorktree(mainRoot, ['--quiet', '-B', branch, root, planTip]);
    if (r.code !== 0)
      throw new LoopExit(
        LOOP_EXIT.refused,
        `could not create worker ${k}'s worktree ${root}: ${r.stderr.trim()}`,
        `check that ${path.dirname(root)} can be written, then continue with: ./ralph/ralph.sh --resume ${loopId}`,
      );
    await holdTreeDirs(mainRoot, root);
  } else {
    // Held when the run made it, or checked now (a tree a killed run left): before the runner's git runs there.
    await holdTreeDirs(mainRoot, root);
    await gitOk(root, ['checkout', '-q', '--force', '-B', branch, planTip]);
    await gitOk(root, ['clean', '-q', '-f', '-d']);
  }
  keepRecordsIn([root, realpathSync(root)], mainRoot);
  return root;
}

// Each worker tree's git dirs: held since the run made the tree (or checked it, holdTreeDirs), never read again from
// its .git file, which the agent could have pointed elsewhere since.
export function workerGitDirs(root: string): Promise<Pick<RepoLocation, 'gitDir' | 'commonDir'>> {
  return readGitDirs(root);
}

/** Worker trees hold no story branch between attempts: a killed run's may, and another worker may need it. */
export async function releaseStoryBranches(mainRoot: string, states: readonly WorkerState[]): Promise<void> {
  // Before any worker starts: the records of worktrees a crash left without their folder go.
  await runGit(mainRoot, ['worktree', 'prune']);
  for (const ws of states) if (existsSync(ws.path)) await runGit(ws.path, ['checkout', '-q', '--detach']);
}

/**
 * Story branches of stories already merged: the queue deletes each right after its merge, and an interrupt in between
 * leaves it behind. `branch -d` (run in the plan branch's tree) deletes only a branch merged there.
 */
export async function deleteMergedStoryBranches(
  tree: string,
  planBranch: string,
  merged: readonly string[],
): Promise<void> {
  const names = new Set(merged.map((id) => storyBranch(planBranch, id)));
  const listed = await runGit(tree, ['for-each-ref', '--format=%(refname:lstrip=2)', `refs/heads/${planBranch}--*`]);
  const left = listed.stdout.split('\n').filter((b) => names.has(b));
  if (left.length) await runGit(tree, ['branch', '-q', '-d', '--', ...left]);
}

/**
 * The trees of workers a run no longer has, as idle workers: it ran with more before a kill -9 and was resumed with
 * fewer. Their story branches are let go and their trees removed like the others'.
 */
export function formerWorkers(mainRoot: string, loopId: string, workers: number): WorkerState[] {
  const folder = path.dirname(workerTreePath(mainRoot, loopId, 1));
  const prefix = `${loopId}--w`;
  const ks = (existsSync(folder) ? readdirSync(folder) : [])
    .filter((n) => n.startsWith(prefix))
    .map((n) => Number(n.slice(prefix.length)));
  return ks
    .filter((k) => Number.isInteger(k) && k > workers)
    .map((k) => ({ worker: k, path: workerTreePath(mainRoot, loopId, k), phase: 'idle' }));
}

/** The workers' trees go at the end of a run; one that holds uncommitted work is kept, and named. */
export async function closeWorkerTrees(
  mainRoot: string,
  states: readonly WorkerState[],
  loopId: string,
  emit: RunContext['emit'],
): Promise<void> {
  for (const ws of states) {
    if (!existsSync(ws.path)) continue;
    const kept = await closeWorktree(mainRoot, realpathSync(ws.path), loopId);
    if (kept) emit({ type: 'warn', worker: ws.worker, message: kept });
  }
  await runGit(mainRoot, ['worktree', 'prune']);
}
