// How run.ts starts a --worktree loop: the refusals that come first, the switch of the run's paths from the user's
// tree to the loop's worktree, and the removal of that worktree once the run is over.
import path from 'node:path';
import type { LoopState } from '../store/state-types.js';
import type { RunOptions } from '../loop-options.js';
import type { RunPaths } from '../types.js';
import type { Emit } from '../events.js';
import { LoopExit, usageExit, LOOP_EXIT } from '../errors.js';
import { closeWorktree, copyStartFiles, openWorktree } from '../git/worktree.js';
import { sameDefinition } from './branch.js';

/** What one run knows of its worktree: where the user's tree is, and, once opened, the loop's own. */
export interface WorktreeRun {
  mainRoot: string;
  root: string | null;
  /** The runner may remove the tree at the end: it created it, or held its lock (so no other runner is in it). */
  mayRemove: boolean;
}

/** --worktree on a resumed loop that ran in the user's tree. */
export function refuseWorktreeOptions(options: RunOptions, resumed: LoopState | null): void {
  if (resumed && options.worktree && !resumed.worktree) {
    throw usageExit(
      `loop ${resumed.id} ran in your working tree, not in a worktree of its own`,
      `continue it there: ./ralph/ralph.sh --resume ${resumed.id} (without --worktree)`,
    );
  }
}

/**
 * Opens the loop's worktree on `branch`, puts the user's plan and prompt there (a new loop's), and returns the run's
 * paths inside it. The plan must be inside the repository: its place in the worktree is the same.
 */
export async function enterWorktree(
  tree: WorktreeRun,
  main: RunPaths,
  id: string,
  branch: string,
  base: string | undefined,
  resumed: boolean,
  emit: Emit,
): Promise<RunPaths> {
  const rel = (p: string) => path.relative(main.repoRoot, p);
  for (const file of [main.prd, main.prompt]) {
    if (rel(file).startsWith('..') || path.isAbsolute(rel(file))) {
      throw new LoopExit(
        LOOP_EXIT.refused,
        `--worktree: ${file} is outside the repository, so the worktree has no place for it`,
        'move it into the repository (ralph/ is the usual place), then start again',
      );
    }
  }
  const existed = resumed;
  tree.root = await openWorktree(tree.mainRoot, id, branch, base);
  tree.mayRemove = !existed;
  const into = (p: string) => path.join(tree.root as string, rel(p));
  const paths: RunPaths = {
    repoRoot: tree.root,
    prd: into(main.prd),
    prompt: into(main.prompt),
    progress: into(main.progress),
  };
  copyStartFiles(main, paths, resumed, sameDefinition);
  emit({
    type: 'info',
    message: `working in the worktree ${tree.root} on ${branch}; your working tree is left as it is`,
  });
  return paths;
}

/** After the run: the worktree goes unless it holds uncommitted work, which is kept and named. */
export async function leaveWorktree(tree: WorktreeRun, id: string, emit: Emit): Promise<void> {
  if (!tree.root || !tree.mayRemove) return;
  const kept = await closeWorktree(tree.mainRoot, tree.root, id);
  emit(kept ? { type: 'warn', message: kept } : { type: 'info', message: `removed the loop's worktree ${tree.root}` });
}
