import { describe, expect, it } from 'vitest';
import { explainGitRefusal, parseBatch } from '../../../../src/engine/git/git.js';

describe('explainGitRefusal: what git said about --cwd, for the user', () => {
  it.each([
    ['fatal: not a git repository (or any of the parent directories): .git\n', 'not a git repository: /r', /git init/],
    ['', 'not a git repository: /r', /git init/],
    [
      "fatal: detected dubious ownership in repository at '/r'\nTo add an exception for this directory, call:\n\n\tgit config --global --add safe.directory /r\n",
      "git refuses /r: detected dubious ownership in repository at '/r'",
      /^To add an exception for this directory, call: git config --global --add safe\.directory \/r$/,
    ],
    ['fatal: invalid gitfile format: /r/.git\n', 'git refuses /r: invalid gitfile format: /r/.git', undefined],
  ])('%j', (stderr, message, hint) => {
    const refusal = explainGitRefusal('/r', stderr);
    expect(refusal.message).toBe(message);
    if (hint) expect(refusal.hint).toMatch(hint);
    else expect(refusal.hint).toBeUndefined();
  });
});

describe('parseBatch (cat-file --batch output)', () => {
  const sha = 'a'.repeat(40);
  it('reads each blob by its size in bytes, nothing for a missing name, null for another type', () => {
    const text = 'ü\n✓';
    const out = Buffer.concat([
      Buffer.from(`${sha} blob ${Buffer.byteLength(text)}\n${text}\n`),
      Buffer.from('HEAD:nope missing\n'),
      Buffer.from(`${sha} tree 3\nabc\n`),
      Buffer.from(`${sha} blob 0\n\n`),
    ]);
    expect(parseBatch(out, 4)).toEqual([{ sha, text }, null, null, { sha, text: '' }]);
  });

  it('gives null for output cut short or out of step, so the caller asks again', () => {
    expect(parseBatch(Buffer.from(`${sha} blob 10\nshort\n`), 1)).toBeNull();
    expect(parseBatch(Buffer.from(`${sha} blob 2\nabc\n`), 1)).toBeNull();
    expect(parseBatch(Buffer.from(''), 1)).toBeNull();
  });
});
