import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { storyBranch } from '../../../src/engine/run/parallel/worker-trees.js';
import { attemptRef } from '../../../src/engine/verify/baseline.js';
import { NASTY_STORY_IDS } from '../../support/story-ids.js';
import { gitEnv, testdir } from '../../support/repo.js';

/** Asks the installed git, outside any repository, whether it takes `args`' name. */
function gitAccepts(args: string[], cwd: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', ...args], {
      cwd,
      stdio: 'pipe',
      env: gitEnv({ GIT_CEILING_DIRECTORIES: cwd }),
    });
    return true;
  } catch {
    return false;
  }
}

describe('storyBranch and attemptRef: git takes both refs --parallel names after any story id', () => {
  it.each(NASTY_STORY_IDS.map((id) => [id]))('%j', (id) => {
    const dir = testdir();
    const refs = [
      ['--branch', storyBranch('ralph/demo', id)],
      [attemptRef('20260101-000000-abcd', id, '0123456789abcdef')],
    ];
    expect(refs.map((args) => gitAccepts(args, dir))).toEqual([true, true]);
  });

  it('the ids the old cleanup broke or merged: git refuses them as they are', () => {
    const dir = testdir();
    expect(['US..6', 'x.lock', '../x'].map((id) => gitAccepts(['--branch', `ralph/demo--${id}`], dir))).toEqual([
      false,
      false,
      false,
    ]);
  });
});
