// Repositories at the index's gitlinks (verify/nested-git.ts): your own `git status` runs a status inside each, with
// its configuration (core.fsmonitor is a command). After an agent run the runner takes out one the agent made and puts
// back one it changed, never through a link.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdNestedGits, restoreNestedGits } from '../../../../src/engine/verify/nested-git.js';
import { unsplitIndex } from '../../../../src/engine/verify/index-flags.js';
import { git, gitdir, testdir } from '../../../support/repo.js';

/** A repository with a real submodule at lib/ (its git folder in .git/modules/lib), committed. */
function withSubmodule(): string {
  const lib = gitdir({ README: 'lib\n' });
  const dir = gitdir({ 'README.md': 'top\n' });
  git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
  git(dir, 'commit', '-qm', 'lib');
  return dir;
}

/** A repository with one commit (a file `a`) at `rel` inside `dir`, added to `dir`'s index as a gitlink. */
function addNestedRepo(dir: string, rel: string): string {
  const sub = path.join(dir, rel);
  mkdirSync(sub);
  git(sub, 'init', '-q');
  writeFileSync(path.join(sub, 'a'), 'a\n');
  git(sub, 'add', 'a');
  git(sub, 'commit', '-qm', 'a');
  git(dir, 'add', rel);
  return sub;
}

const FSMONITOR = '[core]\n\tfsmonitor = touch /tmp/never-run; false\n';

describe('repositories inside the working tree', () => {
  it('nothing changed: no violation; the gitlinks read under an unchanged index are kept', async () => {
    const dir = withSubmodule();
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    expect([...held.held.keys()]).toEqual(['lib']);
    const key = held.links.key;
    expect(await restoreNestedGits(held)).toBeUndefined();
    expect(held.links.key).toBe(key);
  });

  it("an existing submodule's configuration the agent changed is put back; a repository it made at a gitlink is removed", async () => {
    const dir = withSubmodule();
    const config = path.join(dir, '.git/modules/lib/config');
    const before = readFileSync(config);
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    appendFileSync(config, FSMONITOR);
    // A second gitlink, with a repository of the agent's in its folder.
    const tool = addNestedRepo(dir, 'tool');
    writeFileSync(path.join(tool, '.git/config'), FSMONITOR, { flag: 'a' });
    const v = await restoreNestedGits(held);
    expect(v?.reason).toContain('(lib/.git, tool/.git)');
    expect(readFileSync(config).equals(before)).toBe(true);
    expect(existsSync(path.join(tool, '.git'))).toBe(false);
    expect(readFileSync(path.join(tool, 'a'), 'utf8')).toBe('a\n'); // the files stay; only the repository goes
    // Set aside, never deleted: a nested clone of yours that `git add -A` staged keeps its history.
    const aside = readdirSync(tool).filter((n) => n.startsWith('.git-set-aside-by-ralph-'));
    expect(aside).toHaveLength(1);
    expect(git(tool, `--git-dir=${path.join(tool, aside[0])}`, 'log', '--format=%s')).toBe('a');
    expect(await restoreNestedGits(held)).toBeUndefined();
  });

  it("a submodule's git folder sent to another folder's configuration (a commondir the agent adds) is put back", async () => {
    const dir = withSubmodule();
    const modules = path.join(dir, '.git/modules');
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    const evil = path.join(modules, '.common-lib');
    mkdirSync(evil);
    writeFileSync(path.join(evil, 'config'), FSMONITOR);
    writeFileSync(path.join(modules, 'lib', 'commondir'), '../.common-lib\n');
    const v = await restoreNestedGits(held);
    expect(v?.reason).toContain('(lib/.git)');
    expect(existsSync(path.join(modules, 'lib', 'commondir'))).toBe(false);
    // And one the loop started with is held with the configuration it leads to.
    writeFileSync(path.join(modules, 'lib', 'commondir'), '../.common-lib\n');
    const again = await holdNestedGits(dir, path.join(dir, '.git'));
    appendFileSync(path.join(evil, 'config'), '[core]\n\thooksPath = /elsewhere\n');
    expect((await restoreNestedGits(again))?.reason).toContain('(lib/.git)');
    expect(readFileSync(path.join(evil, 'config'), 'utf8')).toBe(FSMONITOR);
  });

  it("a submodule's .git file pointed elsewhere, or made a link, is put back with its git folder's configuration; a configuration made a link is replaced, not written through", async () => {
    const dir = withSubmodule();
    const dotGit = path.join(dir, 'lib', '.git');
    const config = path.join(dir, '.git/modules/lib/config');
    const [fileBefore, configBefore] = [readFileSync(dotGit), readFileSync(config)];
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    const outside = path.join(testdir(), 'yours.txt');
    writeFileSync(outside, 'yours\n');
    const restored = async () => {
      expect((await restoreNestedGits(held))?.reason).toMatch(
        /^the agent made or changed a git repository inside the working tree \(lib\/\.git\): .*; made ones were set aside in their folder as \.git-set-aside-by-ralph-\*, changed ones put back/,
      );
      expect(readFileSync(dotGit).equals(fileBefore)).toBe(true);
      expect(readFileSync(config).equals(configBefore)).toBe(true);
      expect(readFileSync(outside, 'utf8')).toBe('yours\n');
    };
    writeFileSync(dotGit, `gitdir: ${testdir()}\n`);
    await restored();
    rmSync(dotGit);
    symlinkSync(path.join(dir, '.git/modules/lib'), dotGit);
    await restored();
    rmSync(config);
    symlinkSync(outside, config);
    await restored();
    rmSync(config);
    await restored();
    expect(await restoreNestedGits(held)).toBeUndefined();
  });

  it("resumed: a repository at a gitlink whose .git changed after the loop's first start is not held as yours, and goes with the next sweep (a runner killed mid-iteration never swept it)", async () => {
    const dir = withSubmodule();
    const since = Date.now() + 1;
    await new Promise((r) => setTimeout(r, 20));
    const tool = addNestedRepo(dir, 'tool');
    const held = await holdNestedGits(dir, path.join(dir, '.git'), since);
    expect([...held.held.keys()]).toEqual(['lib']);
    expect((await restoreNestedGits(held))?.reason).toContain('(tool/.git)');
    expect(existsSync(path.join(tool, '.git'))).toBe(false);
  });

  it('a gitlink whose path is not UTF-8 is found by its bytes, and its repository set aside', async () => {
    const dir = gitdir({ 'README.md': 'top\n' });
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    const name = Buffer.concat([Buffer.from('t'), Buffer.from([0xff])]);
    const sub = Buffer.concat([Buffer.from(`${dir}/`), name]);
    // A repository made under a plain name, then moved to one that is not UTF-8 and staged as a gitlink.
    renameSync(addNestedRepo(dir, 'plain'), sub);
    git(dir, 'add', '-A');
    expect((await restoreNestedGits(held))?.reason).toContain('"tÿ"/.git');
    expect(existsSync(Buffer.concat([sub, Buffer.from('/.git')]))).toBe(false);
  });

  it('a gitlink whose folder is a link leads nowhere it is written or removed: named, left as it is', async () => {
    const dir = gitdir({ 'README.md': 'top\n' });
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    // A repository of yours elsewhere, and a gitlink at a path the agent made a link to it.
    const yours = gitdir({ 'mine.txt': 'mine\n' });
    const ext = addNestedRepo(dir, 'ext');
    git(dir, 'commit', '-qm', 'ext');
    const moved = path.join(testdir(), 'moved');
    renameSync(ext, moved);
    symlinkSync(yours, ext);
    const v = await restoreNestedGits(held);
    expect(v?.reason).toContain('ext/.git (through a link: left as it is)');
    expect(existsSync(path.join(yours, '.git/config'))).toBe(true);
    expect(readFileSync(path.join(yours, 'mine.txt'), 'utf8')).toBe('mine\n');
  });
});

describe('unsplitIndex: one index file after an agent run', () => {
  it('a split index (its entries in a sharedindex file .git/index does not show changing) is made whole again', async () => {
    const dir = gitdir();
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    git(dir, 'add', 'a.txt');
    git(dir, 'update-index', '--split-index');
    const gitDir = path.join(dir, '.git');
    expect(readdirSync(gitDir).some((n) => n.startsWith('sharedindex.'))).toBe(true);
    await unsplitIndex(dir, gitDir);
    expect(readdirSync(gitDir).some((n) => n.startsWith('sharedindex.'))).toBe(false);
    expect(git(dir, 'ls-files').split('\n')).toContain('a.txt'); // the entries are all in .git/index now
  });

  it('a repository the agent makes in a folder of tracked files (git init src: no git status at the top shows it) is set aside and named; one you had there at the start is left', async () => {
    const dir = gitdir({ 'src/add.mjs': 'export {};\n', 'vendor/lib/x.txt': 'x\n', 'deep/a/b/c.txt': 'c\n' });
    git(path.join(dir, 'vendor/lib'), 'init', '-q');
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    expect([...held.plain]).toEqual(['vendor/lib/.git']);
    git(path.join(dir, 'src'), 'init', '-q');
    writeFileSync(path.join(dir, 'src/.git/config'), FSMONITOR);
    // A `.git` file naming a git folder elsewhere counts the same, a folder above the tracked file's too.
    writeFileSync(path.join(dir, 'deep/a/.git'), `gitdir: ${path.join(dir, '.git')}\n`);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const v = await restoreNestedGits(held);
    expect(v?.reason).toContain('src/.git (a repository)');
    expect(v?.reason).toContain('deep/a/.git (a repository)');
    expect(v?.reason).not.toContain('vendor');
    expect(existsSync(path.join(dir, 'src/.git'))).toBe(false);
    expect(existsSync(path.join(dir, 'deep/a/.git'))).toBe(false);
    expect(readdirSync(path.join(dir, 'src')).some((n) => n.startsWith('.git-set-aside-by-ralph-'))).toBe(true);
    expect(existsSync(path.join(dir, 'vendor/lib/.git'))).toBe(true);
    expect(await restoreNestedGits(held)).toBeUndefined();
  });

  it('a folder of tracked files made a git folder (HEAD, objects, refs: git needs no .git), and a .gitignore no commit tracks that hides itself: set aside; yours at the start left', async () => {
    const dir = gitdir({ 'src/add.mjs': 'export {};\n', 'docs/a.md': 'a\n' });
    writeFileSync(path.join(dir, 'docs/.gitignore'), '/.gitignore\n');
    const held = await holdNestedGits(dir, path.join(dir, '.git'));
    expect([...held.plain]).toEqual(['docs/.gitignore']);
    for (const d of ['objects', 'refs']) mkdirSync(path.join(dir, 'src', d));
    writeFileSync(path.join(dir, 'src/HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(path.join(dir, 'src/config'), `[core]\n\tbare = false\n\tworktree = .\n${FSMONITOR.slice(7)}`);
    writeFileSync(path.join(dir, '.gitignore'), '/.gitignore\n/evil.cjs\n/src/HEAD\n/src/config\n');
    writeFileSync(path.join(dir, 'evil.cjs'), 'planted\n');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(path.join(dir, 'src'), 'rev-parse', '--absolute-git-dir')).toBe(path.join(dir, 'src'));
    const v = await restoreNestedGits(held);
    expect(v?.reason).toContain('src/HEAD (a git folder (HEAD, objects, refs))');
    expect(v?.reason).toContain('.gitignore (a .gitignore no commit tracks, which hides files from git status)');
    expect(v?.reason).not.toContain('docs/');
    expect(git(path.join(dir, 'src'), 'rev-parse', '--absolute-git-dir')).toBe(path.join(dir, '.git'));
    expect(git(dir, 'status', '--porcelain')).toContain('?? evil.cjs');
    expect(await restoreNestedGits(held)).toBeUndefined();
  });
});
