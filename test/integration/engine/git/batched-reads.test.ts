// The start's batched git reads (src/engine/git/: git.ts, head.ts, read.ts) against real git: each answers what the separate calls it
// replaces answered, including the cases one process cannot (an unborn branch, a path with a line break), which fall
// back to asking one by one.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readGitDirs, resolveRepo } from '../../../../src/engine/git/git.js';
import { currentBranch, headSha, readHead } from '../../../../src/engine/git/head.js';
import {
  readBlobs,
  readConfigList,
  readDirtyEntries,
  readFileAt,
  readNamedObjects,
  readStatusAndHead,
} from '../../../../src/engine/git/read.js';
import { snapshotRunnerFiles } from '../../../../src/engine/verify/runner-guard.js';
import { LoopExit } from '../../../../src/engine/errors.js';
import { git, gitdir, testdir } from '../../../support/repo.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('resolveRepo: the top level and git folders in one rev-parse', () => {
  it('answers as the separate rev-parse calls do, in the main tree and in a linked worktree', async () => {
    const dir = gitdir();
    const linked = path.join(testdir(), 'wt');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', linked);
    for (const cwd of [dir, path.join(linked)]) {
      mkdirSync(path.join(cwd, 'sub'), { recursive: true });
      const loc = await resolveRepo(path.join(cwd, 'sub'));
      expect(loc).toEqual({
        top: git(cwd, 'rev-parse', '--show-toplevel'),
        gitDir: git(cwd, 'rev-parse', '--path-format=absolute', '--git-dir'),
        commonDir: git(cwd, 'rev-parse', '--path-format=absolute', '--git-common-dir'),
      });
    }
    expect((await resolveRepo(linked)).gitDir).not.toBe((await resolveRepo(linked)).commonDir);
  });

  it('refuses a folder outside any repository with the usual advice', async () => {
    const dir = testdir();
    vi.stubEnv('GIT_CEILING_DIRECTORIES', path.dirname(dir));
    const err = await resolveRepo(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopExit);
    expect((err as LoopExit).message).toBe(`not a git repository: ${dir}`);
  });
});

describe('readGitDirs: the two git folders in one rev-parse', () => {
  it('answers as the separate rev-parse calls do: a main tree, a linked worktree, a path with a line break', async () => {
    const dir = gitdir();
    const linked = path.join(testdir(), 'wt');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', linked);
    // A repository whose folders' paths hold a line break: one process's lines could not be told apart, so each
    // folder is asked on its own.
    const broken = path.join(testdir(), 'line\nbreak');
    mkdirSync(broken);
    git(broken, 'init', '-q');
    for (const cwd of [dir, linked, broken])
      expect(await readGitDirs(cwd)).toEqual({
        gitDir: git(cwd, 'rev-parse', '--path-format=absolute', '--git-dir'),
        commonDir: git(cwd, 'rev-parse', '--path-format=absolute', '--git-common-dir'),
      });
    expect((await readGitDirs(broken)).gitDir).toBe(path.join(broken, '.git'));
  });
});

describe('readHead: the branch and commit in one rev-parse', () => {
  it('on a branch, on a detached HEAD and on a branch with no commit yet, as symbolic-ref and rev-parse --verify say', async () => {
    const dir = gitdir();
    const asked = async () => ({ branch: await currentBranch(dir), head: await headSha(dir) });
    expect(await readHead(dir)).toEqual(await asked());
    expect((await readHead(dir)).branch).toBe('main');
    git(dir, 'checkout', '-q', '--detach');
    expect(await readHead(dir)).toEqual({ branch: null, head: git(dir, 'rev-parse', 'HEAD') });
    git(dir, 'checkout', '-q', '--orphan', 'fresh');
    expect(await readHead(dir)).toEqual({ branch: 'fresh', head: null });
    // A file named HEAD in the tree does not make HEAD ambiguous.
    const other = gitdir({ HEAD: 'a file\n' });
    expect(await readHead(other)).toEqual({ branch: 'main', head: git(other, 'rev-parse', 'HEAD') });
  });
});

describe('readHead: whether another branch exists, in the same process', () => {
  it('only refs/heads/<name> itself counts, whatever else git would find by that name', async () => {
    const dir = gitdir({ 'refs/heads/side': 'a file named like the ref\n' });
    const head = git(dir, 'rev-parse', 'HEAD');
    expect(await readHead(dir, 'nope')).toEqual({ branch: 'main', head, otherExists: false });
    git(dir, 'branch', 'side');
    expect(await readHead(dir, 'side')).toEqual({ branch: 'main', head, otherExists: true });
    // A branch named refs/heads/ghost is what git's lookup of refs/heads/ghost finds: not the branch ghost.
    git(dir, 'branch', 'refs/heads/ghost');
    expect(await readHead(dir, 'ghost')).toEqual({ branch: 'main', head, otherExists: false });
    git(dir, 'checkout', '-q', '--orphan', 'fresh');
    expect(await readHead(dir, 'side')).toEqual({ branch: 'fresh', head: null, otherExists: true });
  });
});

describe('readStatusAndHead: the clean-tree check and HEAD in one git status', () => {
  it('lists what the porcelain v1 status lists (renames, deletions, conflicts, odd names), and HEAD as readHead says', async () => {
    const dir = gitdir({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'base\n', 'gone.txt': 'g\n', 'sp ace.txt': 's\n' });
    git(dir, 'checkout', '-q', '-b', 'other');
    writeFileSync(path.join(dir, 'c.txt'), 'theirs\n');
    git(dir, 'commit', '-qam', 'theirs');
    git(dir, 'checkout', '-q', 'main');
    writeFileSync(path.join(dir, 'c.txt'), 'ours\n');
    git(dir, 'commit', '-qam', 'ours');
    try {
      git(dir, 'merge', '-q', 'other');
    } catch {
      /* the conflict is the point */
    }
    git(dir, 'mv', 'a.txt', 'moved to.txt');
    writeFileSync(path.join(dir, 'b.txt'), 'changed\n');
    git(dir, 'rm', '-q', 'gone.txt');
    writeFileSync(path.join(dir, 'sp ace.txt'), 'edited\n');
    writeFileSync(path.join(dir, 'new\nline.txt'), 'n\n');
    mkdirSync(path.join(dir, 'deep/er'), { recursive: true });
    writeFileSync(path.join(dir, 'deep/er/u.txt'), 'u\n');
    const v1 = await readDirtyEntries(dir);
    const both = await readStatusAndHead(dir);
    expect(both.entries).toEqual(v1);
    expect(v1.length).toBeGreaterThanOrEqual(7);
    expect(both.head).toEqual(await readHead(dir));
  });

  it('says no HEAD where the header is not plain (detached), and none on a branch with no commit yet', async () => {
    const dir = gitdir();
    git(dir, 'checkout', '-q', '--detach');
    expect((await readStatusAndHead(dir)).head).toBeNull();
    git(dir, 'checkout', '-q', '--orphan', 'fresh');
    expect((await readStatusAndHead(dir)).head).toEqual({ branch: 'fresh', head: null });
  });
});

describe('readBlobs: several files in one cat-file --batch', () => {
  it('gives each file its text (bytes counted, not characters), null for a missing path or a folder', async () => {
    const text = 'ünïcødé ✓\nline two\n';
    const dir = gitdir({ 'a.txt': text, 'dir/b.txt': 'b\n', 'empty.txt': '' });
    const specs = ['HEAD:a.txt', 'HEAD:nope.txt', 'HEAD:dir', 'HEAD:dir/b.txt', 'HEAD:empty.txt', 'nobranch:a.txt'];
    const one = await Promise.all(
      specs.map((s) => readFileAt(dir, s.slice(0, s.indexOf(':')), s.slice(s.indexOf(':') + 1))),
    );
    expect((await readBlobs(dir, specs)).map((b) => b?.text ?? null)).toEqual(one);
    expect((await readBlobs(dir, ['HEAD:a.txt']))[0]?.sha).toBe(git(dir, 'rev-parse', 'HEAD:a.txt'));
    expect(one).toEqual([text, null, null, 'b\n', '', null]);
  });

  it('answers a ref name with its commit, and null only when no ref has that name', async () => {
    const dir = gitdir();
    git(dir, 'branch', 'side');
    const [side, nope] = await readNamedObjects(dir, ['refs/heads/side', 'refs/heads/nope']);
    expect([side?.type, side?.sha, nope]).toEqual(['commit', git(dir, 'rev-parse', 'side'), null]);
  });

  it('asks alone for a path with a line break in it, which --batch cannot take', async () => {
    const dir = gitdir({ 'two\nlines.txt': 'x\n', 'plain.txt': 'y\n' });
    expect((await readBlobs(dir, ['HEAD:two\nlines.txt', 'HEAD:plain.txt'])).map((b) => b?.text)).toEqual([
      'x\n',
      'y\n',
    ]);
  });
});

describe('readConfigList and the guard: one git config for the includes and core.hooksPath', () => {
  it('lists each entry with its scope and the file it comes from, following includes under the scope that includes them', async () => {
    const dir = gitdir();
    git(dir, 'config', 'include.path', 'extra.inc');
    writeFileSync(path.join(dir, '.git', 'extra.inc'), '[core]\n\thooksPath = from-include\n');
    const list = (await readConfigList(dir))!;
    expect(list).toContainEqual({ scope: 'local', file: '.git/config', key: 'include.path', value: 'extra.inc' });
    expect(list).toContainEqual({
      scope: 'local',
      file: '.git/extra.inc',
      key: 'core.hookspath',
      value: 'from-include',
    });
    // The runner's own hardening comes as the command line's, never as the repository's.
    expect(list).toContainEqual({ scope: 'command', key: 'core.hookspath', value: '/dev/null' });
  });

  it('holds the included files, the local and the global core.hooksPath folders (the last value of each scope)', async () => {
    const home = testdir();
    vi.stubEnv('HOME', home);
    vi.stubEnv('XDG_CONFIG_HOME', path.join(home, '.config'));
    writeFileSync(path.join(home, '.gitconfig'), '[core]\n\thooksPath = ~/global-hooks\n');
    const dir = gitdir();
    git(dir, 'config', 'include.path', 'extra.inc');
    git(dir, 'config', 'includeIf.gitdir:/nowhere/.path', '~/cond.inc');
    git(dir, 'config', 'core.hooksPath', 'first-hooks');
    git(dir, 'config', '--add', 'core.hooksPath', 'local-hooks');
    const guard = await snapshotRunnerFiles(dir);
    const files = guard.files.map((f) => f.abs);
    expect(files).toContain(path.join(dir, '.git', 'extra.inc'));
    expect(files).toContain(path.join(home, 'cond.inc'));
    expect(guard.dirs.map((d) => d.abs)).toEqual([
      path.join(dir, '.git', 'hooks'),
      path.join(dir, 'local-hooks'),
      path.join(home, 'global-hooks'),
    ]);
  });
});
