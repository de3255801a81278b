// A --parallel run's workers work in `<repo>.ralph-worktrees/<loop id>--w<n>`: such a tree belongs to its loop, so a
// running run's worker trees are no leftovers, a dead run's are (and cleanup removes them). Real git, temp repos.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, gitdir } from '../../../support/repo.js';
import { writeRunningLoop } from '../../../support/lifecycle.js';
import {
  cleanupWorktrees,
  listLeftoverWorktrees,
  planWorktreeOwner,
  worktreesFolder,
} from '../../../../src/engine/git/worktree.js';

describe('planWorktreeOwner', () => {
  it.each([
    ['20261202-1530', [], { id: '20261202-1530' }],
    ['20261202-1530--w2', [], { id: '20261202-1530', worker: 2 }],
    ['20261202-1530--w12', [], { id: '20261202-1530', worker: 12 }],
    // A loop named `mine--w2` with --name: its tree is its own.
    ['mine--w2', ['mine--w2'], { id: 'mine--w2' }],
    ['a-w2', [], { id: 'a-w2' }],
    ['a--w0', [], { id: 'a--w0' }],
    ['a--wx', [], { id: 'a--wx' }],
  ])('%s (loops %j) → %j', (name, loops, owner) => {
    expect(planWorktreeOwner(name, (id) => (loops as string[]).includes(id))).toEqual(owner);
  });
});

function repoWithTrees(): string {
  const repo = gitdir({ 'ralph/.gitignore': '.runs/\n' });
  onTestFinished(() => rmSync(worktreesFolder(repo), { recursive: true, force: true }));
  return repo;
}

function addTree(repo: string, name: string): string {
  const tree = path.join(worktreesFolder(repo), name);
  git(repo, 'worktree', 'add', '--quiet', '-b', `b-${name}`, tree);
  return tree;
}

describe('worker worktrees of --parallel runs', () => {
  it("a running run's worker trees are not listed; a dead run's are, under its loop id, and cleanup removes them", async () => {
    const repo = repoWithTrees();
    const gone = spawnSync('true').pid as number;
    writeRunningLoop(repo, { id: 'live', pid: process.pid });
    writeRunningLoop(repo, { id: 'dead', pid: gone });
    for (const name of ['live--w1', 'live--w2', 'dead--w1', 'dead--w2']) addTree(repo, name);

    const listed = await listLeftoverWorktrees(repo);
    expect(listed.map((t) => [t.id, t.worker, path.basename(t.path), t.branch])).toEqual([
      ['dead', 1, 'dead--w1', 'b-dead--w1'],
      ['dead', 2, 'dead--w2', 'b-dead--w2'],
    ]);

    // The same cleanup sweeps every stopped runner's temp folders on the machine (other tests' too): only the trees are this test's.
    const said = (await cleanupWorktrees(repo)).filter((line) => line.includes('.ralph-worktrees'));
    expect(said).toEqual([
      expect.stringContaining('dead--w1 (loop dead;'),
      expect.stringContaining('dead--w2 (loop dead;'),
    ]);
    expect(existsSync(path.join(worktreesFolder(repo), 'dead--w1'))).toBe(false);
    expect(existsSync(path.join(worktreesFolder(repo), 'dead--w2'))).toBe(false);
    expect(existsSync(path.join(worktreesFolder(repo), 'live--w1'))).toBe(true);
    expect(existsSync(path.join(worktreesFolder(repo), 'live--w2'))).toBe(true);
  });

  it('a running loop named like a worker tree (mine--w2, with --name) keeps its own tree', async () => {
    const repo = repoWithTrees();
    writeRunningLoop(repo, { id: 'mine--w2', pid: process.pid });
    addTree(repo, 'mine--w2');
    expect(await listLeftoverWorktrees(repo)).toEqual([]);
  });
});
