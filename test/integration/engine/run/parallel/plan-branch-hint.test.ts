// The exit-6 hint of a --parallel run whose plan branch moved names the branch in commands to paste. The branch name
// comes from the plan, which the agent can write, and git takes `$(...)` in one: pasted, the commands must name the
// branch and run nothing else.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitdir, gitEnv, testdir } from '../../../../support/repo.js';
import { PlanBranch } from '../../../../../src/engine/run/parallel/plan-branch.js';
import { WorkProtected } from '../../../../../src/engine/errors.js';
import { shellQuote } from '../../../../../src/util/shell-quote.js';
import type { LoopState } from '../../../../../src/engine/store/state-types.js';
import type { RunContext } from '../../../../../src/engine/types.js';
import type { RunTrust } from '../../../../../src/engine/verify/trust.js';
import type { Prd } from '../../../../../src/prd/types.js';

const BRANCH = 'ralph/x$(>pwned)';

/** The commands a hint gives after "with:" or "moved it:", each up to the next ";". */
function commandsIn(hint: string): string[] {
  return [...hint.matchAll(/(?:with|moved it): ((?:git|\.\/ralph)[^;]*)/g)].map((m) => m[1].trim());
}

describe('hints name values as one shell word each', () => {
  it('the plan branch moved: git reflog and git update-ref, pasted into sh, run on the branch and nothing else', async () => {
    const repo = gitdir();
    git(repo, 'checkout', '-q', '-b', BRANCH);
    const tip = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'moved by the agent');
    const run = { branch: BRANCH, paths: { repoRoot: repo } } as RunContext;
    const plan = new PlanBranch(run, { id: 'loop-1' } as LoopState, {} as RunTrust, tip, {
      userStories: [],
    } as unknown as Prd);
    const err = await plan.refuseMoved().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkProtected);
    const [reflog, updateRef] = commandsIn((err as WorkProtected).hint!);
    const pasted = [reflog, updateRef].map((command) =>
      spawnSync('sh', ['-c', command], { cwd: repo, env: gitEnv(), encoding: 'utf8' }),
    );
    expect(existsSync(path.join(repo, 'pwned'))).toBe(false);
    expect(pasted.map((r) => [r.status, r.stderr])).toEqual([
      [0, ''],
      [0, ''],
    ]);
    expect([reflog, updateRef]).toEqual([
      `git reflog 'ralph/x$(>pwned)'`,
      `git update-ref 'refs/heads/ralph/x$(>pwned)' ${tip}`,
    ]);
    expect(git(repo, 'rev-parse', `refs/heads/${BRANCH}`)).toBe(tip);
  });

  it.each([BRANCH, 'ralph/`>pwned`', "it's", 'a b', 'x;>pwned', '"$(>pwned)"', '\\', '~', '!x', '\n'])(
    'shellQuote(%j) reads back as itself in sh',
    (value) => {
      const dir = testdir();
      const r = spawnSync('sh', ['-c', `printf %s ${shellQuote(value)}`], { cwd: dir, encoding: 'utf8' });
      expect(r.stdout).toBe(value);
      expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    },
  );
});
