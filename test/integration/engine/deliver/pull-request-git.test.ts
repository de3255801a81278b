// The git half of --deliver pr, with real git: owner/repo from the remote as the user configured it (before
// insteadOf) when pushes go to a path, else as git pushes to it (a short name insteadOf expands); and the pinned files the branch changed.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitdir, writeFiles } from '../../../support/repo.js';
import { readPinnedChanges, readRemoteRepo } from '../../../../src/engine/deliver/pull-request.js';
import type { Prd } from '../../../../src/prd/types.js';

describe('readRemoteRepo', () => {
  it('the configured URL when insteadOf sends pushes to a path', async () => {
    const dir = gitdir();
    git(dir, 'remote', 'add', 'origin', 'git@github.com:acme/demo.git');
    git(dir, 'config', 'url./srv/mirror/demo.git.insteadOf', 'git@github.com:acme/demo.git');
    expect(await readRemoteRepo(dir, 'origin')).toEqual({ host: 'github.com', owner: 'acme', repo: 'demo' });
  });

  it('a short name that insteadOf expands to a GitHub URL', async () => {
    const dir = gitdir();
    git(dir, 'remote', 'add', 'up', 'gh:acme/tool');
    git(dir, 'config', 'url.https://ghe.corp.example/.insteadOf', 'gh:');
    expect(await readRemoteRepo(dir, 'up')).toEqual({ host: 'ghe.corp.example', owner: 'acme', repo: 'tool' });
  });

  it('a path or a missing remote names no repository', async () => {
    const dir = gitdir();
    git(dir, 'remote', 'add', 'origin', '/srv/git/demo.git');
    expect(await readRemoteRepo(dir, 'origin')).toBeNull();
    expect(await readRemoteRepo(dir, 'nope')).toBeNull();
  });
});

describe('readPinnedChanges', () => {
  it("the pinned files changed since the branch left its base, with git's status letter", async () => {
    const dir = gitdir({
      'test/cart.test.ts': 'a\n',
      'tests/old.py': 'b\n',
      'src/cart.ts': 'c\n',
      'fixtures/data.json': '{}\n',
    });
    git(dir, 'checkout', '-q', '-b', 'ralph/x');
    writeFiles(dir, {
      'test/cart.test.ts': 'changed\n',
      'src/cart.ts': 'changed\n',
      'test/new.test.ts': 'new\n',
      'fixtures/data.json': '[]\n',
    });
    rmSync(path.join(dir, 'tests/old.py'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'work');
    // main moving on after the branch left it changes nothing in the answer (three-dot diff).
    git(dir, 'checkout', '-q', 'main');
    writeFiles(dir, { 'test/other.test.ts': 'x\n' });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'main moves on');
    const prd: Prd = { branchName: 'ralph/x', protect: ['fixtures/'], userStories: [] };
    expect(await readPinnedChanges(dir, prd, 'ralph/x', 'main', 'origin')).toEqual([
      'M fixtures/data.json',
      'M test/cart.test.ts',
      'A test/new.test.ts',
      'D tests/old.py',
    ]);
    expect(await readPinnedChanges(dir, prd, 'ralph/x', 'no-such-base', 'origin')).toBeNull();
  });
});
