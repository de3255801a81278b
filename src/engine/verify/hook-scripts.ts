// Your git hooks folder (core.hooksPath) inside the repository: the runner holds the folder itself, but what its hooks
// run can be a committed file beside it. husky's stubs in `.husky/_` run `.husky/<hook>` from the working tree, so a
// `.husky/post-merge` the agent commits runs on your merge of the branch, a `.husky/pre-commit` on your next commit
// there: outside any sandbox, with your rights. That is code you accept by merging, like any other of the agent's, but
// it runs before you ran anything on purpose; so the loop's end names those files, to read before you merge.
import path from 'node:path';
import { realpathOrUndefined } from '../../util/read.js';
import { runGit } from '../git/git.js';
import type { Emit } from '../events.js';

/**
 * The folders `hookDirs` (absolute) lead to inside `top`, as paths from it: each hooks folder, and for husky's
 * (`<dir>/_`) the folder its stubs run scripts from. Empty when none lies inside.
 */
export function hookScriptFolders(top: string, hookDirs: readonly string[]): string[] {
  const out = new Set<string>();
  const realTop = realpathOrUndefined(top) ?? top;
  for (const abs of hookDirs) {
    const rel = path.relative(realTop, realpathOrUndefined(abs) ?? abs);
    // .git/hooks: git's own folder, where no commit writes.
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep)[0] === '.git') continue;
    const shown = rel.split(path.sep).join('/');
    out.add(shown);
    if (path.basename(rel) === '_') out.add(path.dirname(rel).split(path.sep).join('/'));
  }
  return [...out];
}

/** The files the commits `from..to` added or changed in `folders` (one git process); empty on any error. */
export async function changedHookScripts(
  top: string,
  folders: readonly string[],
  from: string,
  to: string,
): Promise<string[]> {
  if (!folders.length || from === to) return [];
  const r = await runGit(top, [
    'diff',
    '--name-only',
    '--no-renames',
    '--diff-filter=AMT',
    '-z',
    from,
    to,
    '--',
    ...folders.map((f) => `:(literal)${f}`),
  ]);
  return r.code === 0 ? r.stdout.split('\0').filter(Boolean) : [];
}

/** Said at the start when your hooks folder is in the repository: what it runs is in the agent's reach. */
export function renderHooksInRepo(folders: readonly string[]): string {
  return `your git hooks are in the repository (core.hooksPath: ${folders[0]}): they run files of this working tree that the agent can write (${folders.join(', ')}, and ignored ones such as node_modules/.bin, which husky puts first on PATH), outside any sandbox, on your next commit, merge or checkout here; to keep this tree out of the agent's reach, run the loop in a worktree of its own: ./ralph/ralph.sh --worktree`;
}

export function renderHookScripts(files: readonly string[], folders: readonly string[], from: string): string {
  return `the loop's commits add or change files that your git hooks run (core.hooksPath is inside the repository: ${folders.join(', ')}): ${files.join(', ')}; they run outside any sandbox on your next commit, merge or checkout of this work: read them first (git diff ${from.slice(0, 7)} -- ${folders.join(' ')})`;
}

/**
 * At the loop's end: the hook scripts in `folders` (hookScriptFolders, at the start) that the loop's commits (`from`,
 * the plan commit, to `branch`) added or changed, named.
 */
export async function nameHookScripts(
  top: string,
  folders: readonly string[],
  from: string | undefined,
  branch: string,
  emit: Emit,
): Promise<void> {
  if (!folders.length || !from) return;
  const files = await changedHookScripts(top, folders, from, `refs/heads/${branch}`);
  if (files.length) emit({ type: 'warn', message: renderHookScripts(files, folders, from) });
}
