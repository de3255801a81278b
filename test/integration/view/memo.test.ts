// The dashboard's plan body made once per change (view/memo.ts): the same bytes between two changes, and a new body
// after any change to what /api/prd reads, the sealed records' notes ref included, in real git repositories.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitdir, testdir } from '../../support/repo.js';
import { gitCommonDir, memoJson, prdInputsKey } from '../../../src/view/memo.js';
import { resolveViewPaths } from '../../../src/view/snapshot.js';

describe('memoJson', () => {
  it('reads once per key, and again when the key changes', () => {
    let key = 'a';
    let reads = 0;
    const body = memoJson(
      () => ({ n: ++reads }),
      () => key,
    );
    expect([body(), body(), body()]).toEqual(['{"n":1}', '{"n":1}', '{"n":1}']);
    key = 'b';
    expect([body(), body()]).toEqual(['{"n":2}', '{"n":2}']);
    key = 'a';
    expect(body()).toBe('{"n":3}');
    expect(reads).toBe(3);
  });
});

describe('prdInputsKey', () => {
  it('changes with the plan, a loop folder, the verdict key and the notes ref (loose or packed), and only then', () => {
    const repo = gitdir();
    mkdirSync(path.join(repo, 'ralph'), { recursive: true });
    const prd = path.join(repo, 'ralph/prd.json');
    writeFileSync(prd, '{"userStories":[]}\n');
    const keys = testdir('ralphkit-key-');
    const env = { RALPH_KEY_DIR: keys };
    const paths = resolveViewPaths(repo);
    const key = () => prdInputsKey(paths, env);
    const seen = [key()];
    const changed = (what: string) => {
      const now = key();
      expect(now, what).not.toBe(seen.at(-1));
      seen.push(now);
    };
    expect(key()).toBe(seen[0]);
    // The plan written again, same bytes, by temp file and rename.
    writeFileSync(`${prd}.tmp`, '{"userStories":[]}\n');
    renameSync(`${prd}.tmp`, prd);
    changed('the plan rewritten');
    // Written in place with the same size, and its old mtime put back: ctime still moves.
    const { mtimeNs } = statSync(prd, { bigint: true });
    writeFileSync(prd, '{"userStories":[ ]}');
    const ns = String(mtimeNs % 1_000_000_000n).padStart(9, '0');
    execFileSync('touch', ['-m', '-d', `@${mtimeNs / 1_000_000_000n}.${ns}`, prd]);
    expect(statSync(prd, { bigint: true }).mtimeNs).toBe(mtimeNs);
    changed('the plan written in place, its mtime put back');
    mkdirSync(path.join(repo, 'ralph/.runs/L1'), { recursive: true });
    writeFileSync(path.join(repo, 'ralph/.runs/L1/state.json'), '{}\n');
    changed("a loop's state");
    writeFileSync(path.join(keys, 'verdict.key'), Buffer.alloc(32, 1));
    changed('the verdict key');
    git(repo, 'notes', '--ref=ralphkit', 'add', '-m', 'a record', 'HEAD');
    changed('a note sealed');
    git(repo, 'pack-refs', '--all');
    changed('the notes ref packed');
    git(repo, 'notes', '--ref=ralphkit', 'add', '-f', '-m', 'another record', 'HEAD');
    changed('a note sealed over a packed ref');
    expect(key()).toBe(seen.at(-1));
    // Something the body does not read: no change.
    writeFileSync(path.join(repo, 'README.md'), 'edited\n');
    expect(key()).toBe(seen.at(-1));
  });

  it("a linked worktree's notes are its repository's: the common folder is found from its .git file", () => {
    const repo = gitdir();
    const tree = path.join(testdir('ralphkit-wt-'), 'tree');
    git(repo, 'worktree', 'add', '-q', tree);
    expect(gitCommonDir(tree)).toBe(path.join(repo, '.git'));
    expect(gitCommonDir(repo)).toBe(path.join(repo, '.git'));
    expect(gitCommonDir(testdir('ralphkit-nogit-'))).toBeNull();
    // A .git file naming a git folder with no commondir (a submodule's): that folder.
    const sub = testdir('ralphkit-sub-');
    writeFileSync(path.join(sub, '.git'), `gitdir: ${path.join(repo, '.git')}\n`);
    expect(gitCommonDir(sub)).toBe(path.join(repo, '.git'));
    writeFileSync(path.join(sub, '.git'), 'not a pointer\n');
    expect(gitCommonDir(sub)).toBeNull();
    // A .git folder with a commondir file: git follows it, and so does the key.
    const redirected = gitdir();
    writeFileSync(path.join(redirected, '.git/commondir'), `${path.join(repo, '.git')}\n`);
    expect(gitCommonDir(redirected)).toBe(path.join(repo, '.git'));
  });

  it('refs git keeps elsewhere count too: packed-refs rewritten alone, a reftable list; a folder with no git still has a key', () => {
    const repo = gitdir();
    const paths = resolveViewPaths(repo);
    const env = { RALPH_KEY_DIR: testdir('ralphkit-key-') };
    git(repo, 'notes', '--ref=ralphkit', 'add', '-m', 'a record', 'HEAD');
    git(repo, 'pack-refs', '--all');
    const packed = path.join(repo, '.git/packed-refs');
    const before = prdInputsKey(paths, env);
    // A fetch may rewrite packed-refs alone (no loose ref): the key changes with it.
    writeFileSync(
      packed,
      readFileSync(packed, 'utf8').replace(
        /^([0-9a-f]{40}) refs\/notes\/ralphkit$/m,
        `${'0'.repeat(40)} refs/notes/ralphkit`,
      ),
    );
    const afterPacked = prdInputsKey(paths, env);
    expect(afterPacked).not.toBe(before);
    // git 2.45+ may keep refs in a reftable, listed in reftable/tables.list.
    mkdirSync(path.join(repo, '.git/reftable'));
    writeFileSync(path.join(repo, '.git/reftable/tables.list'), '0x000000000001-0x000000000002-aaaa.ref\n');
    expect(prdInputsKey(paths, env)).not.toBe(afterPacked);
    // The notes ref made symbolic (a chain of them, as git follows): no key of file stats can follow it, so none
    // repeats and every request makes the body anew.
    const sym = gitdir();
    const symPaths = resolveViewPaths(sym);
    git(sym, 'symbolic-ref', 'refs/notes/ralphkit', 'refs/notes/a');
    git(sym, 'symbolic-ref', 'refs/notes/a', 'refs/notes/b');
    const beforeNote = prdInputsKey(symPaths, env);
    expect(prdInputsKey(symPaths, env)).not.toBe(beforeNote);
    git(sym, 'notes', '--ref=b', 'add', '-m', 'a record', 'HEAD');
    expect(prdInputsKey(symPaths, env)).not.toBe(beforeNote);
    const plain = testdir('ralphkit-nogit-');
    mkdirSync(path.join(plain, 'ralph'));
    const plainPaths = resolveViewPaths(plain);
    const empty = prdInputsKey(plainPaths, env);
    writeFileSync(path.join(plain, 'ralph/prd.json'), '{}\n');
    expect(prdInputsKey(plainPaths, env)).not.toBe(empty);
  });
});
