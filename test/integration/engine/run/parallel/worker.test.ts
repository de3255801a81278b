// The worker module's branch bookkeeping with real git: story branches of merged stories that an interrupt or a kill
// left behind are deleted when the run starts again; a branch with work the plan branch lacks is kept.
import { describe, expect, it } from 'vitest';
import { git, gitdir, writeFiles } from '../../../../support/repo.js';
import { deleteMergedStoryBranches } from '../../../../../src/engine/run/parallel/worker.js';

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
