// The runner writes its files in the repository (the plan, progress.txt) only through folders of the repository: an
// agent can put a link where ralph/ was, and the runner's next note would land in the folder it leads to.
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardWrite, LoopExit } from '../../../src/engine/errors.js';
import { appendOwnFileSync } from '../../../src/util/atomic.js';
import { testdir } from '../../support/repo.js';

describe('guardWrite', () => {
  it('refuses (exit 6) a write whose folder in the repository is a link, and writes nothing there', () => {
    const repo = testdir();
    const elsewhere = testdir('ralphkit-elsewhere-');
    mkdirSync(path.join(repo, 'ralph'));
    renameSync(path.join(repo, 'ralph'), path.join(repo, 'ralph.old'));
    symlinkSync(elsewhere, path.join(repo, 'ralph'));
    const file = path.join(repo, 'ralph/progress.txt');
    let thrown: unknown;
    try {
      guardWrite(file, repo, () => appendOwnFileSync(file, 'note\n'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(LoopExit);
    expect((thrown as LoopExit).code).toBe(6);
    expect((thrown as LoopExit).message).toContain(`ralph is a link (to ${elsewhere})`);
    expect(existsSync(path.join(elsewhere, 'progress.txt'))).toBe(false);
  });

  it('writes through real folders, and outside the repository (the runner folder in HOME) is not its business', () => {
    const repo = testdir();
    mkdirSync(path.join(repo, 'ralph'));
    const file = path.join(repo, 'ralph/progress.txt');
    writeFileSync(file, 'a\n');
    guardWrite(file, repo, () => appendOwnFileSync(file, 'b\n'));
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n');
    const other = path.join(testdir(), 'x.txt');
    guardWrite(other, repo, () => appendOwnFileSync(other, 'c\n'));
    expect(existsSync(other)).toBe(true);
  });
});
