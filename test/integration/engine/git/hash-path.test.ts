// hashPathObject is how the runner holds a checkout's files against the commit's blob ids (sealed-checkout.ts) and
// the pinned files against theirs (pin-apply.ts): the id must be git's own, for a file read in pieces and for a link,
// and what no blob can be (a folder, a pipe, a file gone) gives no id, without waiting on a pipe's writer.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashObject, hashPathObject } from '../../../../src/engine/git/objects.js';
import { git, testdir } from '../../../support/repo.js';

describe('hashPathObject', () => {
  it("gives git's blob id of a file larger than one piece, an empty file, and a link (its target)", () => {
    const dir = testdir();
    git(dir, 'init', '-q');
    writeFileSync(path.join(dir, 'big.bin'), randomBytes(2.5 * 1024 * 1024 + 7));
    writeFileSync(path.join(dir, 'empty'), '');
    symlinkSync('big.bin', path.join(dir, 'link'));
    for (const name of ['big.bin', 'empty'])
      expect(hashPathObject('sha1', path.join(dir, name))).toBe(git(dir, 'hash-object', name));
    git(dir, 'add', 'link');
    expect(hashPathObject('sha1', path.join(dir, 'link'))).toBe(git(dir, 'rev-parse', ':link'));
    expect(hashPathObject('sha256', Buffer.from(path.join(dir, 'empty')))).toBe(
      hashObject('sha256', 'blob', Buffer.alloc(0)),
    );
  });

  it('gives no id for a folder, a file that is gone, or a named pipe (which it does not wait on)', () => {
    const dir = testdir();
    mkdirSync(path.join(dir, 'folder'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    expect(hashPathObject('sha1', path.join(dir, 'folder'))).toBeNull();
    expect(hashPathObject('sha1', path.join(dir, 'gone'))).toBeNull();
    expect(hashPathObject('sha1', path.join(dir, 'pipe'))).toBeNull();
  });
});
