// The workers' trees and story branches (worker-trees.ts) with real git: story branches of merged stories that an interrupt or a kill left behind are
// deleted when the run starts again (a branch with work the plan branch lacks is kept); and what a worker's guard
// holds, its own tree's files and the run's shared ones.
import { describe, expect, it } from 'vitest';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, gitdir, testdir, writeFiles } from '../../../../support/repo.js';
import { deleteMergedStoryBranches, workerGuard } from '../../../../../src/engine/run/parallel/worker-trees.js';
import { snapshotRunnerFiles } from '../../../../../src/engine/verify/runner-guard.js';

function commitOn(tree: string, branch: string, file: string): void {
  git(tree, 'checkout', '-q', '-b', branch, 'plan');
  writeFiles(tree, { [file]: `${branch}\n` });
  git(tree, 'add', '-A');
  git(tree, 'commit', '-q', '-m', `work on ${branch}`);
  git(tree, 'checkout', '-q', 'plan');
}

describe('deleteMergedStoryBranches', () => {
  it('deletes the story branches of merged stories, keeps those with unmerged work and those of other stories', async () => {
    const tree = gitdir({ 'README.md': 'x\n' });
    git(tree, 'checkout', '-q', '-b', 'plan');
    commitOn(tree, 'plan--US-1', 'a.txt');
    commitOn(tree, 'plan--US-2', 'b.txt');
    commitOn(tree, 'plan--US-3', 'c.txt');
    git(tree, 'merge', '-q', '--no-ff', '-m', 'merge US-1', 'plan--US-1');
    // US-2 is recorded as merged, yet its branch holds work the plan branch lacks (an agent's commit after the merge).
    await deleteMergedStoryBranches(tree, 'plan', ['US-1', 'US-2']);
    expect(git(tree, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/plan--*').split('\n')).toEqual([
      'plan--US-2',
      'plan--US-3',
    ]);
  });
});

describe('workerGuard', () => {
  it("holds the worker's own config.worktree and the run's files, an include named config.worktree among them", async () => {
    const main = gitdir({ 'README.md': 'x\n' });
    // A configuration include that happens to be called config.worktree: a file of the run's, not the worker's.
    const incDir = testdir();
    const include = path.join(incDir, 'config.worktree');
    writeFileSync(include, '[user]\n\tname = Inc\n');
    git(main, 'config', 'include.path', include);
    const worker = path.join(testdir(), 'w1');
    mkdirSync(path.dirname(worker), { recursive: true });
    git(main, 'worktree', 'add', '-q', '--detach', worker);
    const shared = await snapshotRunnerFiles(main);
    // The worker's own snapshot does not ask git for the configuration: the run's holds its includes.
    const own = await snapshotRunnerFiles(worker, undefined, false);
    const held = workerGuard(own, shared).files.map((f) => f.abs);
    expect(held).toContain(include);
    const ownDir = realpathSync(git(worker, 'rev-parse', '--path-format=absolute', '--git-dir'));
    expect(held.map((f) => (f.startsWith(ownDir) ? path.relative(ownDir, f) : null))).toContain('config.worktree');
    // Each file once: the worker's tree's own engine files, not the main tree's as well.
    expect(new Set(held).size).toBe(held.length);
  });
});
