// The merge queue's git work (run/parallel/merge.ts) with real git: a story branch merged --no-ff on a detached HEAD,
// the runner's files kept from the plan side, the branch published only over the tip it was made on, and a conflict
// or a killed merge leaving the branch as it was.
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, gitdir, writeFiles } from '../../../../support/repo.js';
import {
  abandonMerge,
  mergeStory,
  publishMerge,
  restoreIntegrationTree,
} from '../../../../../src/engine/run/parallel/merge.js';

/** A repository on branch `plan` (the integration tree) and a story branch off it with `storyFiles` committed. */
function setup(storyFiles: Record<string, string>, planFiles: Record<string, string> = {}) {
  const tree = gitdir({
    'ralph/prd.json': '{"plan":0}\n',
    'ralph/progress.txt': 'log\n',
    'ralph/ralph.sh': 'engine\n',
    'shared.txt': 'base\n',
  });
  git(tree, 'checkout', '-q', '-b', 'plan');
  git(tree, 'checkout', '-q', '-b', 'plan--US-1');
  writeFiles(tree, storyFiles);
  git(tree, 'add', '-A');
  git(tree, 'commit', '-q', '-m', 'story work');
  const storyHead = git(tree, 'rev-parse', 'HEAD');
  git(tree, 'checkout', '-q', 'plan');
  if (Object.keys(planFiles).length) {
    writeFiles(tree, planFiles);
    git(tree, 'add', '-A');
    git(tree, 'commit', '-q', '-m', 'plan moved on');
  }
  return { tree, storyHead, planTip: git(tree, 'rev-parse', 'HEAD') };
}

function request(tree: string, planTip: string, storyHead: string) {
  return {
    branch: 'plan',
    planTip,
    storyHead,
    keep: ['ralph/prd.json', 'ralph/progress.txt', 'ralph/ralph.sh'],
    write: () => {
      writeFileSync(path.join(tree, 'ralph/prd.json'), '{"plan":"merged"}\n');
      writeFileSync(path.join(tree, 'ralph/progress.txt'), 'log\nmerged\n');
    },
    written: ['ralph/prd.json', 'ralph/progress.txt'],
    message: 'ralph: merge US-1',
  };
}

describe('mergeStory', () => {
  it("merges with --no-ff on a detached HEAD, keeps the plan side of the runner's files, and leaves the branch where it was", async () => {
    const { tree, storyHead, planTip } = setup({
      'src/a.ts': 'a\n',
      'ralph/prd.json': '{"forged":true}\n',
      'ralph/progress.txt': 'rewritten\n',
      'ralph/ralph.sh': 'evil\n',
    });
    const r = await mergeStory(tree, request(tree, planTip, storyHead));
    expect(r.kind).toBe('merged');
    const commit = (r as { commit: string }).commit;
    expect(git(tree, 'rev-parse', 'plan')).toBe(planTip);
    expect(git(tree, 'rev-parse', `${commit}^1`)).toBe(planTip);
    expect(git(tree, 'rev-parse', `${commit}^2`)).toBe(storyHead);
    expect(git(tree, 'show', `${commit}:src/a.ts`)).toBe('a');
    // The story branch's engine and plan edits are not merged; the runner's writes are.
    expect(git(tree, 'show', `${commit}:ralph/ralph.sh`)).toBe('engine');
    expect(git(tree, 'show', `${commit}:ralph/prd.json`)).toBe('{"plan":"merged"}');
    expect(git(tree, 'show', `${commit}:ralph/progress.txt`)).toBe('log\nmerged');
    expect(git(tree, 'log', '-1', '--format=%s', commit)).toBe('ralph: merge US-1');
    // Published over the tip it was made on: the branch moves and the tree is on it again.
    expect(await publishMerge(tree, 'plan', commit, planTip)).toBe(true);
    expect(git(tree, 'rev-parse', 'plan')).toBe(commit);
    expect(git(tree, 'branch', '--show-current')).toBe('plan');
    expect(git(tree, 'status', '--porcelain')).toBe('');
  });

  it('a conflict in a file of the work is no merge: named, and the tree back on the branch with nothing left', async () => {
    const { tree, storyHead, planTip } = setup({ 'shared.txt': 'story\n' }, { 'shared.txt': 'plan\n' });
    const r = await mergeStory(tree, request(tree, planTip, storyHead));
    expect(r).toMatchObject({ kind: 'conflict', files: ['shared.txt'] });
    expect(git(tree, 'branch', '--show-current')).toBe('plan');
    expect(git(tree, 'rev-parse', 'HEAD')).toBe(planTip);
    expect(git(tree, 'status', '--porcelain')).toBe('');
    expect(readFileSync(path.join(tree, 'shared.txt'), 'utf8')).toBe('plan\n');
  });

  it("conflicts in the runner's own files only are settled by keeping the plan side", async () => {
    const { tree, storyHead, planTip } = setup(
      { 'ralph/progress.txt': 'story log\n', 'b.txt': 'b\n' },
      { 'ralph/progress.txt': 'plan log\n' },
    );
    const r = await mergeStory(tree, request(tree, planTip, storyHead));
    expect(r.kind).toBe('merged');
    expect(git(tree, 'show', `${(r as { commit: string }).commit}:b.txt`)).toBe('b');
  });
});

describe('publishMerge and the tree after a failure', () => {
  it('refuses to move a branch someone else moved since, and changes nothing', async () => {
    const { tree, storyHead, planTip } = setup({ 'src/a.ts': 'a\n' });
    const r = (await mergeStory(tree, request(tree, planTip, storyHead))) as { commit: string };
    git(tree, 'update-ref', 'refs/heads/plan', storyHead);
    expect(await publishMerge(tree, 'plan', r.commit, planTip)).toBe(false);
    expect(git(tree, 'rev-parse', 'plan')).toBe(storyHead);
  });

  it('abandonMerge and restoreIntegrationTree put a tree left mid-merge (a kill) back on its branch', async () => {
    const { tree, storyHead, planTip } = setup({ 'shared.txt': 'story\n' }, { 'shared.txt': 'plan\n' });
    git(tree, 'checkout', '-q', '--detach');
    expect(() => git(tree, 'merge', '--no-ff', '--no-commit', storyHead)).toThrow();
    writeFileSync(path.join(tree, 'stray.txt'), 'left by a check\n');
    await restoreIntegrationTree(tree, 'plan');
    expect(git(tree, 'branch', '--show-current')).toBe('plan');
    expect(git(tree, 'status', '--porcelain')).toBe('');
    expect(() => git(tree, 'rev-parse', '--verify', '--quiet', 'MERGE_HEAD')).toThrow();
    git(tree, 'checkout', '-q', '--detach');
    await abandonMerge(tree, 'plan', planTip);
    expect(git(tree, 'branch', '--show-current')).toBe('plan');
    expect(git(tree, 'rev-parse', 'HEAD')).toBe(planTip);
  });
});
