// The refs held for the loop's end (replace refs, tags, your stash) put back as the loop found them. The stash is
// what the runner's own hint has you pop after the loop (`git stash -u`, then `git stash pop`): an agent's entry
// there would put its files into your tree.
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLoopRefs } from '../../../../src/engine/verify/anchors.js';
import {
  isEndRef,
  lastCheckoutFrom,
  readHeldRefs,
  restoreEndRefs,
} from '../../../../src/engine/verify/replace-refs.js';
import { git, gitdir, testdir } from '../../../support/repo.js';

/** A repository with a stash of yours (one entry), and what the loop's start holds. */
async function withStash() {
  const dir = gitdir({ 'a.txt': 'a\n' });
  writeFileSync(path.join(dir, 'a.txt'), 'my work in progress\n');
  git(dir, 'stash', '-q');
  const { held } = await readLoopRefs(dir, 'L1');
  return { dir, held: readHeldRefs(held, path.join(dir, '.git')), keep: testdir('ralphkit-keep-') };
}

describe('restoreEndRefs: your stash', () => {
  it("an agent's stash pushed on top of yours: refs/stash and the stash list put back, the agent's kept", async () => {
    const { dir, held, keep } = await withStash();
    expect(held.refs.get('refs/stash')).toBe(git(dir, 'rev-parse', 'refs/stash'));
    const mine = git(dir, 'stash', 'list', '--format=%H');
    writeFileSync(path.join(dir, 'a.txt'), "the agent's engine\n");
    git(dir, 'stash', '-q');
    const agents = git(dir, 'rev-parse', 'refs/stash');
    const put = await restoreEndRefs(dir, 'L1', held, keep);
    expect(put).toEqual(['refs/stash', 'the stash list (.git/logs/refs/stash)']);
    expect(git(dir, 'stash', 'list', '--format=%H')).toBe(mine);
    expect(git(dir, 'rev-parse', 'refs/ralphkit/loops/L1/moved/refs/stash')).toBe(agents);
    expect(readFileSync(path.join(keep, 'stash-reflog'), 'utf8')).toContain(agents);
    git(dir, 'stash', 'pop', '-q');
    expect(readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('my work in progress\n');
  });

  it('your stash dropped by the agent: back, with its place in the list', async () => {
    const { dir, held, keep } = await withStash();
    const mine = git(dir, 'stash', 'list', '--format=%H %gs');
    git(dir, 'stash', 'drop', '-q');
    expect(await restoreEndRefs(dir, 'L1', held, keep)).toEqual([
      'refs/stash',
      'the stash list (.git/logs/refs/stash)',
    ]);
    expect(git(dir, 'stash', 'list', '--format=%H %gs')).toBe(mine);
  });

  it('an entry slipped under yours in the stash list, refs/stash not moved: the list put back', async () => {
    const { dir, held, keep } = await withStash();
    const log = path.join(dir, '.git/logs/refs/stash');
    const before = readFileSync(log);
    writeFileSync(log, `${git(dir, 'rev-parse', 'HEAD')} ${'1'.repeat(40)} x <x> 0 +0000\tWIP\n${before}`);
    expect(await restoreEndRefs(dir, 'L1', held, keep)).toEqual(['the stash list (.git/logs/refs/stash)']);
    expect(readFileSync(log).equals(before)).toBe(true);
  });

  it('no stash at the start: one the agent made is deleted with its list; a link at logs/refs is refused, not followed', async () => {
    const dir = gitdir({ 'a.txt': 'a\n' });
    const held = readHeldRefs((await readLoopRefs(dir, 'L1')).held, path.join(dir, '.git'));
    expect(held.stashLog).toBeNull();
    writeFileSync(path.join(dir, 'a.txt'), "the agent's\n");
    git(dir, 'stash', '-q');
    // git deletes a ref's reflog with it.
    expect(await restoreEndRefs(dir, 'L1', held)).toEqual(['refs/stash']);
    expect(git(dir, 'stash', 'list')).toBe('');
    expect(existsSync(path.join(dir, '.git/logs/refs/stash'))).toBe(false);
    // The agent's link: logs/refs leads out of the common dir.
    const out = testdir('ralphkit-out-');
    writeFileSync(path.join(out, 'stash'), 'planted\n');
    rmSync(path.join(dir, '.git/logs/refs'), { recursive: true });
    symlinkSync(out, path.join(dir, '.git/logs/refs'));
    await expect(restoreEndRefs(dir, 'L1', held)).rejects.toThrow("is a link: stash's reflog was not put back");
    expect(readFileSync(path.join(out, 'stash'), 'utf8')).toBe('planted\n');
  });

  it("isEndRef: every ref but branches, remote-tracking and prefetched refs, and the runner's own", () => {
    for (const ref of [
      'refs/tags/v1',
      'refs/replace/abc',
      'refs/stash',
      'refs/ralph/add',
      'refs/notes/commits',
      'refs/x',
      'refs/remotes/b6b9ddd',
      'refs/remotes/B6B9DDD4/HEAD',
    ])
      expect(isEndRef(ref), ref).toBe(true);
    for (const ref of [
      'refs/heads/main',
      'refs/remotes/origin/main',
      'refs/remotes/b6b9ddd/main',
      'refs/prefetch/remotes/origin/main',
      'refs/ralphkit/loops/L1/pins',
      'refs/notes/ralphkit',
      'refs/notes/ralphkit-pending/12-ab',
    ])
      expect(isEndRef(ref), ref).toBe(false);
  });

  it("git checkout -: a checkout line the agent adds to the HEAD reflog is answered with one of the runner's that goes where the start's went", async () => {
    const dir = gitdir({ 'a.txt': 'a\n' });
    git(dir, 'checkout', '-q', '-b', 'loop');
    const { held } = await readLoopRefs(dir, 'L1');
    const logs = readHeldRefs(held, path.join(dir, '.git'), path.join(dir, '.git'));
    expect(lastCheckoutFrom(logs.headLog!.bytes)).toBe('main');
    const evil = git(dir, 'commit-tree', '-m', 'evil', 'HEAD^{tree}');
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(
      path.join(dir, '.git/logs/HEAD'),
      `${readFileSync(path.join(dir, '.git/logs/HEAD'), 'utf8')}${head} ${head} x <x> 1 +0000\tcheckout: moving from ${evil} to loop\n`,
    );
    expect(lastCheckoutFrom(readFileSync(path.join(dir, '.git/logs/HEAD')))).toBe(evil);
    expect(await restoreEndRefs(dir, 'L1', logs)).toEqual(['where git checkout - goes (.git/logs/HEAD)']);
    git(dir, 'checkout', '-q', '-');
    expect(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    // An honest loop's commits on its branch change nothing of it.
    git(dir, 'checkout', '-q', 'loop');
    const again = readHeldRefs(held, path.join(dir, '.git'), path.join(dir, '.git'));
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'work');
    expect(await restoreEndRefs(dir, 'L1', again)).toEqual([]);
  });

  it("a commit's short id shadowed by a remote-tracking ref or a file at git's folder (git takes both for the id before the commit): both go at the end", async () => {
    const dir = gitdir({ 'a.txt': 'a\n' });
    const held = readHeldRefs((await readLoopRefs(dir, 'L1')).held, path.join(dir, '.git'));
    const id = git(dir, 'rev-parse', 'HEAD');
    const decoy = git(dir, 'commit-tree', '-m', 'decoy', 'HEAD^{tree}');
    git(dir, 'update-ref', `refs/remotes/${id.slice(0, 7)}`, decoy);
    writeFileSync(path.join(dir, '.git', id.slice(0, 8)), `${decoy}\n`);
    expect(git(dir, 'rev-parse', id.slice(0, 8))).toBe(decoy);
    const keep = testdir('ralphkit-keep-');
    const put = await restoreEndRefs(dir, 'L1', held, keep);
    expect(put).toEqual([
      expect.stringContaining(`.git/${id.slice(0, 8)} (a file in git's folder`),
      `refs/remotes/${id.slice(0, 7)}`,
    ]);
    expect(git(dir, 'rev-parse', id.slice(0, 7))).toBe(id);
    expect(git(dir, 'rev-parse', id.slice(0, 8))).toBe(id);
    expect(readFileSync(path.join(keep, 'shadows', id.slice(0, 8)), 'utf8')).toBe(`${decoy}\n`);
  });
});
