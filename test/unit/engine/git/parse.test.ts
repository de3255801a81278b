// The pure readers of git's machine output (src/engine/git/parse.ts): sizes in bytes, paths with spaces, conflicts in
// git's order, and the answers they cannot give plainly left to the caller.
import { describe, expect, it } from 'vitest';
import { isObjectId, parseBatch, parseConfigList, parseStatusV2 } from '../../../../src/engine/git/parse.js';

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
    expect(parseBatch(out, 4)).toEqual([
      { sha, type: 'blob', text },
      null,
      { sha, type: 'tree', text: 'abc' },
      { sha, type: 'blob', text: '' },
    ]);
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
  it("reads paths with spaces after their fixed fields, skips a rename's source, and HEAD from the header", () => {
    const out = z(
      `# branch.oid ${sha}`,
      '# branch.head feat/x',
      '# branch.upstream origin/feat/x',
      `1 .M N... 100644 100644 100644 ${sha} ${sha} a b.txt`,
      `2 R. N... 100644 100644 100644 ${sha} ${sha} R100 new name.txt`,
      'old name.txt',
      `u UU N... 100644 100644 100644 100644 ${sha} ${sha} ${sha} c.txt`,
      '? un tracked.txt',
    );
    expect(parseStatusV2(out)).toEqual({
      // a conflict in git's path order among the other changes, as porcelain v1 lists it
      entries: [
        { path: 'a b.txt', untracked: false },
        { path: 'c.txt', untracked: false },
        { path: 'new name.txt', untracked: false },
        { path: 'un tracked.txt', untracked: true },
      ],
      head: { branch: 'feat/x', head: sha },
    });
  });

  it('no HEAD for "(detached)" (a branch may carry that name too) or without a header; none yet for "(initial)"', () => {
    expect(parseStatusV2(z(`# branch.oid ${sha}`, '# branch.head (detached)')).head).toBeNull();
    expect(parseStatusV2(z('? x')).head).toBeNull();
    expect(parseStatusV2(z('# branch.oid (initial)', '# branch.head main')).head).toEqual({
      branch: 'main',
      head: null,
    });
  });
});

describe('parseConfigList (git config -z --list --show-scope --show-origin)', () => {
  it('reads scope, the file, key and value, a value with a line break, a key without a value, an origin that is no file', () => {
    expect(
      parseConfigList(
        'local\0file:.git/config\0core.hookspath\nhooks\0global\0file:/home/u/.gitconfig\0alias.x\n!a\nb\0local\0file:.git/config\0core.bare2\0command\0command line:\0user.name\nx\0',
      ),
    ).toEqual([
      { scope: 'local', file: '.git/config', key: 'core.hookspath', value: 'hooks' },
      { scope: 'global', file: '/home/u/.gitconfig', key: 'alias.x', value: '!a\nb' },
      { scope: 'local', file: '.git/config', key: 'core.bare2', value: null },
      { scope: 'command', key: 'user.name', value: 'x' },
    ]);
  });
});

describe('isObjectId', () => {
  it('takes a whole sha1 or sha256 id, and nothing else', () => {
    expect(isObjectId('a'.repeat(40))).toBe(true);
    expect(isObjectId('0123456789abcdef'.repeat(4))).toBe(true);
    for (const bad of [
      'a'.repeat(39),
      'a'.repeat(41),
      'a'.repeat(50),
      'a'.repeat(63),
      'a'.repeat(65),
      'A'.repeat(40),
      `${'a'.repeat(40)}\n`,
      ` ${'a'.repeat(40)}`,
      'HEAD',
      '',
      null,
      40,
    ])
      expect(isObjectId(bad), JSON.stringify(bad)).toBe(false);
  });
});
