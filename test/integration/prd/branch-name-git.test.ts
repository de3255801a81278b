import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { branchNameProblem } from '../../../src/prd/branch-name.js';
import { BRANCH_NAMES } from '../../support/branch-names.js';
import { gitEnv, testdir } from '../../support/repo.js';

/** Asks the installed git, outside any repository, whether it takes `name` as a branch name. */
function gitAccepts(name: string, cwd: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], {
      cwd,
      stdio: 'pipe',
      env: gitEnv({ GIT_CEILING_DIRECTORIES: cwd }),
    });
    return true;
  } catch {
    return false;
  }
}

describe('branchNameProblem agrees with `git check-ref-format --branch`', () => {
  // Git cannot receive a NUL in an argument; every other name in the table goes to git as it is.
  it.each(BRANCH_NAMES.filter((c) => !c.name.includes('\0')))('on %j', ({ name, stricter }) => {
    const dir = testdir();
    const ours = branchNameProblem(name) === undefined;
    if (stricter) expect([ours, gitAccepts(name, dir)]).toEqual([false, true]);
    else expect(ours).toBe(gitAccepts(name, dir));
  });
});
