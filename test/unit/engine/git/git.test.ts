import { describe, expect, it } from 'vitest';
import { explainGitRefusal, parseBatch, parseStatusV2 } from '../../../../src/engine/git/git.js';

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
  it('reads each object by its size in bytes, and null for a name git finds nothing by', () => {
    const text = 'ü\n✓';
    const out = Buffer.concat([
      Buffer.from(`${sha} blob ${Buffer.byteLength(text)}\n${text}\n`),
      Buffer.from('HEAD:nope missing\n'),
      Buffer.from(`${sha} tree 3\nabc\n`),
      Buffer.from(`${sha} blob 0\n\n`),
    ]);
    expect(parseBatch(out, 4)).toEqual([{ sha, type: 'blob', text }, null, { sha, type: 'tree', text: 'abc' }, { sha, type: 'blob', text: '' }]);
  });

  it('gives null for output cut short or out of step, so the caller asks again', () => {
    expect(parseBatch(Buffer.from(`${sha} blob 10\nshort\n`), 1)).toBeNull();
    expect(parseBatch(Buffer.from(`${sha} blob 2\nabc\n`), 1)).toBeNull();
    expect(parseBatch(Buffer.from(''), 1)).toBeNull();
  });
});

describe('parseStatusV2 (git status --porcelain=v2 --branch -z)', () => {
  const sha = 'b'.repeat(40);
  const z = (...fields: string[]) => fields.map((f) => `${f}\0`).join('');
  it('reads paths with spaces after their fixed fields, skips a rename\'s source, and HEAD from the header', () => {
    const out = z(
      `# branch.oid ${sha}`, '# branch.head feat/x', '# branch.upstream origin/feat/x',
      `1 .M N... 100644 100644 100644 ${sha} ${sha} a b.txt`,
      `2 R. N... 100644 100644 100644 ${sha} ${sha} R100 new name.txt`, 'old name.txt',
      `u UU N... 100644 100644 100644 100644 ${sha} ${sha} ${sha} c.txt`,
      '? un tracked.txt',
    );
    expect(parseStatusV2(out)).toEqual({
      // a conflict in git's path order among the other changes, as porcelain v1 lists it
      entries: [{ path: 'a b.txt', untracked: false }, { path: 'c.txt', untracked: false }, { path: 'new name.txt', untracked: false }, { path: 'un tracked.txt', untracked: true }],
      head: { branch: 'feat/x', head: sha },
    });
  });

  it('no HEAD for "(detached)" (a branch may carry that name too) or without a header; none yet for "(initial)"', () => {
    expect(parseStatusV2(z(`# branch.oid ${sha}`, '# branch.head (detached)')).head).toBeNull();
    expect(parseStatusV2(z('? x')).head).toBeNull();
    expect(parseStatusV2(z('# branch.oid (initial)', '# branch.head main')).head).toEqual({ branch: 'main', head: null });
  });
});
