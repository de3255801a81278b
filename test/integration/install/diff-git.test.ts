// `install --diff` against real git: the hunks ralphkit prints must be the ones `git diff` prints for
// the same two texts, including git's note about a last line without its newline.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderUnifiedDiff } from '../../../src/util/diff.js';
import { testdir } from '../../support/repo.js';

function gitHunks(oldText: string, newText: string): string {
  const dir = testdir();
  writeFileSync(path.join(dir, 'old'), oldText);
  writeFileSync(path.join(dir, 'new'), newText);
  const res = spawnSync('git', ['diff', '--no-index', '--no-color', '-U3', 'old', 'new'], {
    cwd: dir,
    encoding: 'utf8',
  });
  // git names the nearest line above each hunk after its header (a "function" heading); ralphkit does not.
  return res.stdout.slice(res.stdout.indexOf('@@')).replace(/^(@@ [^@]+ @@).*$/gm, '$1');
}

function ourHunks(oldText: string, newText: string): string {
  const diff = renderUnifiedDiff(oldText, newText, 'a/x', 'b/x');
  return diff.slice(diff.indexOf('@@'));
}

describe('renderUnifiedDiff agrees with git diff', () => {
  it.each([
    ['a line changed', 'a\nb\nc\n', 'a\nB\nc\n'],
    ['the newline added at the end', 'a\nb', 'a\nb\n'],
    ['the newline removed at the end', 'a\nb\n', 'a\nb'],
    ['a last line without newline changed', 'a\nb', 'a\nc'],
    ['lines added after a last line without newline', 'x\ny', 'x\ny\nz\n'],
    ['an empty file filled', '', 'one\ntwo\n'],
    ['a file emptied', 'one\ntwo', ''],
    ['far-apart changes', 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n', 'a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl'],
  ])('%s', (_name, oldText, newText) => {
    const git = gitHunks(oldText, newText);
    expect(git).not.toBe('');
    expect(ourHunks(oldText, newText)).toBe(git);
  });
});
