// git/fingerprint.ts on real repositories: equal fingerprints only while every file git answers from is the same,
// so the runner may skip asking git; anything it cannot see gives null (ask git).
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprintFiles, fingerprintRefs, sameFingerprint } from '../../../../src/engine/git/fingerprint.js';
import { git, gitdir } from '../../../support/repo.js';

function dirsOf(dir: string) {
  return { top: dir, own: path.join(dir, '.git'), common: path.join(dir, '.git') };
}

describe('fingerprintRefs', () => {
  it('stays equal while nothing changes, and differs after each way refs move', () => {
    const dir = gitdir();
    const dirs = dirsOf(dir);
    const first = fingerprintRefs(dirs, {});
    expect(first).not.toBeNull();
    expect(sameFingerprint(first, fingerprintRefs(dirs, {}))).toBe(true);
    const changes: Array<[string, () => void]> = [
      ['a new branch', () => git(dir, 'branch', 'other')],
      ['a commit', () => git(dir, 'commit', '-q', '--allow-empty', '-m', 'more')],
      ['HEAD written by hand', () => writeFileSync(path.join(dir, '.git/HEAD'), 'ref: refs/heads/other\n')],
      ['packed refs', () => git(dir, 'pack-refs', '--all')],
      [
        'a loose ref written by hand in a sub-folder',
        () => {
          mkdirSync(path.join(dir, '.git/refs/heads/x'), { recursive: true });
          writeFileSync(path.join(dir, '.git/refs/heads/x/y'), `${git(dir, 'rev-parse', 'HEAD')}\n`);
        },
      ],
    ];
    let before = fingerprintRefs(dirs, {});
    for (const [what, change] of changes) {
      change();
      const after = fingerprintRefs(dirs, {});
      expect(sameFingerprint(before, after), what).toBe(false);
      before = after;
    }
  });

  it('a HEAD that is a symlink is held by where it points: two links to refs at the same commit differ', () => {
    const dir = gitdir();
    git(dir, 'branch', 'other');
    const head = path.join(dir, '.git/HEAD');
    rmSync(head);
    symlinkSync('refs/heads/main', head);
    const a = fingerprintRefs(dirsOf(dir), {});
    rmSync(head);
    symlinkSync('refs/heads/other', head);
    expect(sameFingerprint(a, fingerprintRefs(dirsOf(dir), {}))).toBe(false);
  });

  it('gives null (ask git) for a reftable repository, whose tables can change in place', () => {
    const dir = gitdir();
    mkdirSync(path.join(dir, '.git/reftable'));
    expect(fingerprintRefs(dirsOf(dir), {})).toBeNull();
  });

  it('gives null (ask git) when the environment moves git elsewhere', () => {
    const dir = gitdir();
    expect(fingerprintRefs(dirsOf(dir), { GIT_DIR: '/elsewhere' })).toBeNull();
    expect(sameFingerprint(null, null)).toBe(false);
  });
});

describe('fingerprintFiles', () => {
  it('differs when a listed file or the index changes, not for other files', () => {
    const dir = gitdir({ 'ralph/prd.json': '{}\n' });
    const dirs = dirsOf(dir);
    const files = ['ralph/prd.json'];
    const a = fingerprintFiles(dirs, dir, files, {});
    writeFileSync(path.join(dir, 'elsewhere.txt'), 'x');
    expect(sameFingerprint(a, fingerprintFiles(dirs, dir, files, {}))).toBe(true);
    writeFileSync(path.join(dir, 'ralph/prd.json'), '{ }\n');
    const b = fingerprintFiles(dirs, dir, files, {});
    expect(sameFingerprint(a, b)).toBe(false);
    git(dir, 'update-index', '--assume-unchanged', 'ralph/prd.json');
    expect(sameFingerprint(b, fingerprintFiles(dirs, dir, files, {}))).toBe(false);
  });
});
