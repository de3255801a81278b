// git's synchronous form (src/engine/git/program.ts), what status and the dashboard read the sealed record and the
// loop's plan through: hardened like runGit, and the git found once on PATH, not one dropped into PATH later.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitProgram, gitSync, gitSyncBytes } from '../../../../src/engine/git/program.js';
import { git, gitdir, testdir } from '../../../support/repo.js';

const PATH = process.env.PATH;
afterEach(() => {
  process.env.PATH = PATH;
});

describe('gitSync', () => {
  it('reads what is committed: a replace ref the agent wrote does not show another object', () => {
    const dir = gitdir({ 'a.txt': 'committed\n' });
    const forged = git(dir, 'rev-parse', 'HEAD:README.md');
    git(dir, 'replace', git(dir, 'rev-parse', 'HEAD:a.txt'), forged);
    expect(git(dir, 'cat-file', 'blob', 'HEAD:a.txt')).toBe('# test repo');
    expect(gitSync(dir, ['cat-file', 'blob', 'HEAD:a.txt'])).toBe('committed\n');
    expect(gitSyncBytes(dir, ['cat-file', 'blob', 'HEAD:a.txt'])?.toString()).toBe('committed\n');
  });

  it('null when git fails; stdin reaches git', () => {
    const dir = gitdir();
    expect(gitSync(dir, ['rev-parse', '--verify', '--quiet', 'refs/heads/none'])).toBeNull();
    expect(gitSync(dir, ['hash-object', '--stdin'], 'x\n')?.trim()).toMatch(/^[0-9a-f]{40}$/);
  });

  it('runs the git found on PATH at the first call, not one planted later in an earlier PATH folder', () => {
    const dir = gitdir();
    const early = testdir('ralphkit-path-');
    const marker = path.join(early, 'ran');
    process.env.PATH = `${early}${path.delimiter}${PATH}`;
    expect(gitSync(dir, ['rev-parse', 'HEAD'])).toMatch(/^[0-9a-f]{40}\n$/);
    mkdirSync(early, { recursive: true });
    writeFileSync(path.join(early, 'git'), `#!/bin/sh\ntouch '${marker}'\necho forged\n`);
    chmodSync(path.join(early, 'git'), 0o755);
    expect(gitSync(dir, ['rev-parse', 'HEAD'])).toMatch(/^[0-9a-f]{40}\n$/);
    expect(existsSync(marker)).toBe(false);
    expect(path.isAbsolute(gitProgram())).toBe(true);
  });
});
