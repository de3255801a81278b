// The one git runner (src/engine/git/git.ts) against real git: a command that does not end is stopped at its
// timeout and reported as a failure, stdin reaches git, and a git that cannot be started is told apart.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { appendFileSync, cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GIT_MISSING, gitOk, runGit } from '../../../../src/engine/git/git.js';
import { runnerIdentity, writeVerdictNote } from '../../../../src/engine/git/commit.js';
import { RunnerFileError } from '../../../../src/engine/errors.js';
import { git, gitdir } from '../../../support/repo.js';
import { goneWithin, pidFrom } from '../../../support/process.js';
import { TMPFS_SKIP, fillUp, tmpfs } from '../../../support/tmpfs.js';

describe('runGit', () => {
  it('stops a git command at its timeout and reports a failure, not its exit 0', async () => {
    const dir = gitdir();
    // An alias runs a shell command: this one would succeed after 5 s.
    const r = await runGit(dir, ['-c', 'alias.slow=!sleep 5', 'slow'], { timeoutMs: 200 });
    expect(r.code).toBe(1);
    const quick = await runGit(dir, ['-c', 'alias.quick=!true', 'quick'], { timeoutMs: 10_000 });
    expect(quick.code).toBe(0);
  });

  it('at the timeout, stops what git started too (its whole process group)', async () => {
    const dir = gitdir();
    const pidFile = path.join(dir, '.git', 'child.pid');
    const r = await runGit(dir, ['-c', `alias.spawner=!sleep 30 & echo $! > ${pidFile}; wait`, 'spawner'], {
      timeoutMs: 300,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('git spawner did not finish within 300ms and was stopped');
    expect(await goneWithin(await pidFrom(pidFile))).toBe(true);
  });

  it.skipIf(process.platform !== 'linux')(
    'runs git in a process group of its own: a Ctrl-C at the terminal (its group) does not reach it',
    async () => {
      const dir = gitdir();
      const group = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2];
      const r = await runGit(dir, ['-c', 'alias.group=!cat /proc/$$/stat', 'group']);
      expect(r.code, r.stderr).toBe(0);
      expect(group(r.stdout)).not.toBe(group(readFileSync('/proc/self/stat', 'utf8')));
    },
  );

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

describe.skipIf(TMPFS_SKIP)('git on a full disk', () => {
  it('a git command that cannot write is a RunnerFileError saying the disk is full (exit 1), not an Error with a stack', async () => {
    const mount = tmpfs(1024);
    const repo = path.join(mount, 'repo');
    cpSync(gitdir(), repo, { recursive: true });
    appendFileSync(path.join(repo, 'README.md'), 'more\n');
    fillUp(mount);
    const err = await gitOk(repo, ['add', 'README.md']).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunnerFileError);
    expect(err).toMatchObject({
      code: 1,
      status: 'failed',
      diskFull: true,
      hint: `free some space on the disk that holds ${repo}, then continue with: ./ralph/ralph.sh --resume-last`,
    });
    expect((err as Error).message).toMatch(
      /^the disk is full: git add could not write \(.*(Out of diskspace|No space left on device).*\)$/,
    );
  });
});

describe('writeVerdictNote', () => {
  it('loses no note when loops of one repository write theirs at the same moment', async () => {
    const dir = gitdir();
    const commits: string[] = [];
    for (let i = 0; i < 8; i++) {
      await gitOk(dir, ['commit', '-q', '--allow-empty', '-m', `c${i}`]);
      commits.push((await gitOk(dir, ['rev-parse', 'HEAD'])).trim());
    }
    // A bare `git notes add` from eight writers at once keeps only some of the notes.
    await Promise.all(commits.map((c, i) => writeVerdictNote(dir, c, `record ${i}\n`)));
    const listed = (await gitOk(dir, ['notes', '--ref=ralphkit', 'list'])).trim().split('\n');
    expect(listed).toHaveLength(8);
    for (const [i, c] of commits.entries())
      expect(await gitOk(dir, ['notes', '--ref=ralphkit', 'show', c])).toBe(`record ${i}\n`);
    // The scratch refs are gone.
    expect((await gitOk(dir, ['for-each-ref', 'refs/notes/'])).trim().split('\n')).toHaveLength(1);
  });
});

describe('runnerIdentity', () => {
  it('is asked of git until it finds one, then kept for the repository: a missing one configured mid-loop is used from then on', async () => {
    const dir = gitdir();
    git(dir, 'config', '--unset', 'user.name');
    git(dir, 'config', '--unset', 'user.email');
    // No identity from anywhere: HOME without a config, no guessing from the host name.
    vi.stubEnv('HOME', dir);
    vi.stubEnv('XDG_CONFIG_HOME', dir);
    for (const v of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'EMAIL'])
      vi.stubEnv(v, undefined);
    vi.stubEnv('GIT_CONFIG_COUNT', '1');
    vi.stubEnv('GIT_CONFIG_KEY_0', 'user.useConfigOnly');
    vi.stubEnv('GIT_CONFIG_VALUE_0', 'true');
    onTestFinished(() => void vi.unstubAllEnvs());
    expect(await runnerIdentity(dir)).toEqual(['-c', 'user.name=ralphkit', '-c', 'user.email=ralphkit@localhost']);
    git(dir, 'config', 'user.name', 'Owner');
    git(dir, 'config', 'user.email', 'owner@example.com');
    expect(await runnerIdentity(dir)).toEqual([]);
    // Found once, it is kept: the two `git var` processes are not spent on every commit of the loop.
    git(dir, 'config', '--unset', 'user.name');
    expect(await runnerIdentity(dir)).toEqual([]);
  });
});
