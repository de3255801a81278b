// A runner killed (kill -9) after its sandboxed agent committed: the commit's objects are only in that runner's
// quarantine, HEAD already names it. The next run moves a dead runner's quarantine into the store before its first
// git call (run/sandbox.ts adoptDeadQuarantines), so the resume's status works instead of failing "bad object HEAD".
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptDeadQuarantines } from '../../../../src/engine/run/sandbox.js';
import { listQuarantines, makeQuarantine } from '../../../../src/engine/git/quarantine.js';
import type { RunContext } from '../../../../src/engine/types.js';
import { git, gitdir, gitEnv } from '../../../support/repo.js';

describe('adoptDeadQuarantines', () => {
  it("moves a dead runner's quarantine into the store, so HEAD at the agent's commit reads again; a live runner's is left", async () => {
    const repo = gitdir({ 'a.txt': 'a\n' });
    const store = path.join(repo, '.git/objects');
    // No process has this pid (above pid_max): the runner that made the quarantine is gone.
    const dead = makeQuarantine(store, '4194305~1');
    const live = makeQuarantine(store, `${process.pid}~`);
    writeFileSync(path.join(repo, 'a.txt'), "the agent's work\n");
    const env = { ...gitEnv(), GIT_OBJECT_DIRECTORY: dead, GIT_ALTERNATE_OBJECT_DIRECTORIES: store };
    const commit = (args: string[]) => spawnSync('git', args, { cwd: repo, env, encoding: 'utf8' });
    expect(commit(['commit', '-qam', 'feat: the work']).status).toBe(0);
    expect(spawnSync('git', ['status', '--short'], { cwd: repo, env: gitEnv(), encoding: 'utf8' }).status).not.toBe(0);
    const warnings: string[] = [];
    const run = { emit: (e: { message: string }) => warnings.push(e.message) } as unknown as RunContext;
    await adoptDeadQuarantines(run, repo, path.join(repo, '.git'));
    expect(git(repo, 'log', '--format=%s', '-1')).toBe('feat: the work');
    expect(git(repo, 'status', '--short')).toBe('');
    expect(listQuarantines(store)).toEqual([live]);
    expect(warnings).toEqual([]);
  });
});
