// A linked worktree's `.git` is a file in the agent's tree naming its git folder. An adversarial pass pointed it at a
// repository of the agent's own (the real store borrowed, its own branch with the right work on it), and the runner
// verified and recorded there while the user's branch held the wrong work: exit 0. The runner's git is now told the
// folders it found before any agent ran (git.ts pinGitDirs), a tree kept from an earlier run is checked before use
// (holdTreeDirs), and the file is held by the guard: put back, the claims rejected.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGitDirs, unpinGitDirs } from '../../../../src/engine/git/git.js';
import { headSha } from '../../../../src/engine/git/head.js';
import { closeWorktree, holdTreeDirs } from '../../../../src/engine/git/worktree.js';
import { createCheckout, removeCheckout } from '../../../../src/engine/verify/checkout.js';
import { restoreRunnerFiles, snapshotRunnerFiles } from '../../../../src/engine/verify/runner-guard.js';
import { LoopExit } from '../../../../src/engine/errors.js';
import { git, gitdir, testdir } from '../../../support/repo.js';

/** The user's repository and a linked worktree of it on ralph/demo, whose HEAD has the wrong work committed. */
function linkedTree() {
  const main = gitdir({ 'two.txt': 'todo\n' });
  const tree = path.join(testdir('ralphkit-trees-'), 'loop');
  git(main, 'worktree', 'add', '-q', '-b', 'ralph/demo', tree);
  writeFileSync(path.join(tree, 'two.txt'), 'wrong\n');
  git(tree, 'commit', '-qam', 'feat: two (wrong)');
  return { main, tree, wrong: git(tree, 'rev-parse', 'HEAD') };
}

/** Plays the agent: a repository of its own in the tree, borrowing the real objects, with the right work committed. */
function pointElsewhere(main: string, tree: string): string {
  const evil = path.join(tree, '.evil');
  git(tree, 'init', '-q', '--bare', evil);
  git(evil, 'config', 'core.bare', 'false');
  writeFileSync(path.join(evil, 'objects/info/alternates'), `${path.join(main, '.git/objects')}\n`);
  git(evil, 'update-ref', 'refs/heads/ralph/demo', git(main, 'rev-parse', 'main'));
  git(evil, 'symbolic-ref', 'HEAD', 'refs/heads/ralph/demo');
  writeFileSync(path.join(tree, '.git'), `gitdir: ${evil}\n`);
  git(tree, 'read-tree', 'HEAD');
  writeFileSync(path.join(tree, 'two.txt'), 'done\n');
  git(tree, 'commit', '-qam', 'feat: two (right)');
  return git(tree, 'rev-parse', 'HEAD');
}

describe("a worktree's .git pointed at another repository", () => {
  it("the runner's git stays in the folders it found first: HEAD, and the checkout of a commit, are the real ones", async () => {
    const { main, tree, wrong } = linkedTree();
    await readGitDirs(main);
    await holdTreeDirs(main, tree);
    const right = pointElsewhere(main, tree);
    expect(git(tree, 'rev-parse', 'HEAD')).toBe(right); // the user's git in the tree now reads the agent's repository
    expect(await headSha(tree)).toBe(wrong);
    const checkout = await createCheckout(tree, wrong, null);
    try {
      expect(readFileSync(path.join(checkout.dir, 'two.txt'), 'utf8')).toBe('wrong\n');
    } finally {
      removeCheckout(checkout.dir);
    }
    // The agent's commit is in its own repository only: no checkout of it can be made from the real store.
    await expect(createCheckout(tree, right, null)).rejects.toThrow();
  });

  it('a tree kept from an earlier run whose .git names a folder outside the repository is refused (exit 6), not used', async () => {
    const { main, tree } = linkedTree();
    pointElsewhere(main, tree);
    unpinGitDirs(tree);
    const refused = await holdTreeDirs(main, tree).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(LoopExit);
    expect((refused as LoopExit).code).toBe(6);
    expect((refused as LoopExit).message).toContain(
      `the worktree ${tree} does not name a git folder of this repository`,
    );
  });

  it('the guard holds the .git file: pointed elsewhere (or made a folder), it is put back and rejects the claims', async () => {
    const { main, tree } = linkedTree();
    await holdTreeDirs(main, tree);
    const before = readFileSync(path.join(tree, '.git'));
    const guard = await snapshotRunnerFiles(tree);
    pointElsewhere(main, tree);
    expect(restoreRunnerFiles(guard).rejecting).toEqual(['.git']);
    expect(readFileSync(path.join(tree, '.git'))).toEqual(before);
    // A folder where the file was: removed, and the file put back.
    rmSync(path.join(tree, '.git'));
    mkdirSync(path.join(tree, '.git'));
    writeFileSync(path.join(tree, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    expect(restoreRunnerFiles(guard).rejecting).toEqual(['.git']);
    expect(readFileSync(path.join(tree, '.git'))).toEqual(before);
  });

  it('a worktree with a submodule checked out is kept at the end (nothing runs inside it to see its changes), a clean one removed', async () => {
    const { main, tree } = linkedTree();
    await holdTreeDirs(main, tree);
    git(tree, 'init', '-q', 'lib');
    writeFileSync(path.join(tree, 'lib/f.txt'), 'x\n');
    git(path.join(tree, 'lib'), 'add', 'f.txt');
    git(path.join(tree, 'lib'), 'commit', '-qm', 'lib');
    git(tree, 'add', 'lib');
    git(tree, 'commit', '-qm', 'a submodule');
    writeFileSync(path.join(tree, 'lib/f.txt'), 'uncommitted work in the submodule\n');
    expect(await closeWorktree(main, tree, 'L1')).toContain('it holds the submodule lib');
    expect(readFileSync(path.join(tree, 'lib/f.txt'), 'utf8')).toBe('uncommitted work in the submodule\n');
    const { main: other, tree: clean } = linkedTree();
    await holdTreeDirs(other, clean);
    expect(await closeWorktree(other, clean, 'L2')).toBeNull();
    expect(existsSync(clean)).toBe(false);
  });
});
