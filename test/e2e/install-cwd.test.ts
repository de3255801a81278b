// `--cwd` on every command that has it (install, skill add, validate, view, status, cancel), through the
// built CLI: a folder that is not there, a file, and a repository git refuses must each be named as such.
import { describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitdir, runCli, testdir } from '../support/repo.js';

const COMMANDS: [string, string[]][] = [
  ['install', ['install']],
  ['skill add', ['skill', 'add', 'notes.md']],
  ['validate', ['validate']],
  ['view', ['view', '--port', '0']],
  ['status', ['status']],
  ['cancel', ['cancel', 'some-loop']],
];

describe('--cwd that is not a usable folder', () => {
  it.each(COMMANDS)(
    '%s --cwd <missing folder>: says it does not exist (exit 2), and starts nothing',
    async (_name, args) => {
      const missing = path.join(testdir(), 'nope');
      // A view that started anyway would serve until killed; the timeout turns that into code null.
      const result = await runCli([...args, '--cwd', missing], { timeoutMs: 15_000 });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `error: the folder ${missing} does not exist\nhint: pass --cwd <folder of your repository>\n`,
      );
      expect(result.stdout).toBe('');
      expect(existsSync(missing)).toBe(false);
    },
  );

  it.each(COMMANDS)('%s --cwd <a file>: says it is a file, not a folder (exit 2)', async (_name, args) => {
    const file = path.join(testdir(), 'package.json');
    writeFileSync(file, '{}\n');
    const result = await runCli([...args, '--cwd', file], { timeoutMs: 15_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${file} is a file, not a folder\n`);
  });

  it('install --json with a missing folder still prints one JSON document', async () => {
    const missing = path.join(testdir(), 'nope');
    const result = await runCli(['install', '--cwd', missing, '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'install',
      status: 'refused',
      error: `the folder ${missing} does not exist`,
    });
  });
});

describe('--cwd and git', () => {
  it.each([
    ['status', ['status']],
    ['cancel', ['cancel', 'some-loop']],
  ])(
    "%s in a repository git refuses as not owned by this user: git's reason and its safe.directory advice",
    async (_name, args) => {
      const repo = gitdir();
      // git's own switch for its ownership check, so the test needs no second user account.
      const result = await runCli([...args, '--cwd', repo], { env: { GIT_TEST_ASSUME_DIFFERENT_OWNER: '1' } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `error: git refuses ${repo}: detected dubious ownership in repository at '${repo}'`,
      );
      expect(result.stderr).toContain(
        `hint: To add an exception for this directory, call: git config --global --add safe.directory ${repo}`,
      );
      expect(result.stderr).not.toContain('not a git repository');
    },
  );

  it('status in a folder outside any repository still says so, with the git init advice', async () => {
    const dir = testdir();
    const result = await runCli(['status', '--cwd', dir], { env: { GIT_CEILING_DIRECTORIES: path.dirname(dir) } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: not a git repository: ${dir}\nhint: the loop needs git: run \`git init\` and commit once, then start again\n`,
    );
  });

  it('status --cwd <repository> works as before', async () => {
    const repo = gitdir();
    const result = await runCli(['status', '--json', '--cwd', repo]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ loops: [], leftoverWorktrees: [] });
  });
});
