// The one git runner (src/engine/git/git.ts) against real git: a command that does not end is stopped at its
// timeout and reported as a failure, stdin reaches git, and a git that cannot be started is told apart.
import { describe, expect, it } from 'vitest';
import { GIT_MISSING, gitOk, runGit } from '../../../../src/engine/git/git.js';
import { gitdir } from '../../../support/repo.js';

describe('runGit', () => {
  it('stops a git command at its timeout and reports a failure, not its exit 0', async () => {
    const dir = gitdir();
    // An alias runs a shell command: this one would succeed after 5 s.
    const r = await runGit(dir, ['-c', 'alias.slow=!sleep 5', 'slow'], { timeoutMs: 200 });
    expect(r.code).toBe(1);
    const quick = await runGit(dir, ['-c', 'alias.quick=!true', 'quick'], { timeoutMs: 10_000 });
    expect(quick.code).toBe(0);
  });

  it('passes input on stdin', async () => {
    const dir = gitdir();
    const sha = (await gitOk(dir, ['hash-object', '--stdin'], 'hello\n')).trim();
    expect(sha).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('says when git cannot be started at all', async () => {
    const dir = gitdir();
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const r = await runGit(dir, ['status']);
      expect(r.code).toBe(GIT_MISSING);
    } finally {
      process.env.PATH = saved;
    }
  });
});
