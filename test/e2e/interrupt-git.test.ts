// Ctrl-C while the runner is inside one of its own git commands (issue #27): a terminal sends SIGINT to its whole
// process group. A `git` first on PATH holds the marked call until the test releases it (a file, not a delay), so the
// signal lands while git runs; the loop ends with 130 and the resume hint, and --resume-last finishes it.
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { git, gitEnv, runnerArgs, testdir, type RunResult } from '../support/repo.js';
import { until } from '../support/process.js';
import { BRANCH, fakeEnv, mergeOrder, parallelArgs, parallelRepo } from '../support/parallel-repo.js';

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

interface HoldingGit {
  bin: string;
  held: string;
  /** From now on, the `nth` call carrying `arg` waits until release(). */
  arm: (arg: string, nth: number) => void;
  release: () => void;
}

/** A folder with a `git` that holds a marked call (see arm) until the file `release` appears there. */
function holdingGit(): HoldingGit {
  const bin = testdir('ralphkit-git-hold-');
  const file = (name: string) => path.join(bin, name);
  writeFileSync(
    file('git'),
    `#!/bin/sh
dir=$(dirname "$0")
if [ -f "$dir/arg" ]; then
  want=$(cat "$dir/arg")
  for a in "$@"; do
    if [ "$a" = "$want" ]; then
      echo x >> "$dir/seen"
      if [ "$(wc -l < "$dir/seen")" -eq "$(cat "$dir/nth")" ]; then
        echo $$ > "$dir/held"
        while [ ! -f "$dir/release" ]; do sleep 0.05; done
      fi
      break
    fi
  done
fi
exec ${REAL_GIT} "$@"
`,
  );
  chmodSync(file('git'), 0o755);
  const release = () => writeFileSync(file('release'), '');
  onTestFinished(release);
  const arm = (arg: string, nth: number) => {
    for (const name of ['seen', 'held', 'release']) rmSync(file(name), { force: true });
    writeFileSync(file('nth'), String(nth));
    writeFileSync(file('arg'), arg);
  };
  return { bin, held: file('held'), arm, release };
}

/** ralph/ralph.sh in a process group of its own, as a terminal starts it; `interrupt` is Ctrl-C there. */
function startInGroup(
  repo: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { interrupt: () => void; done: Promise<RunResult> } {
  const child = spawn(path.join(repo, 'ralph/ralph.sh'), runnerArgs('ralph.sh', args), {
    cwd: repo,
    detached: true,
    env: { ...gitEnv(), FORCE_COLOR: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, 'SIGKILL');
    await done;
  });
  return { interrupt: () => process.kill(-child.pid!, 'SIGINT'), done };
}

function expectInterrupted(r: RunResult): void {
  expect(r.code, r.stderr).toBe(130);
  expect(r.stderr).not.toContain('unexpected error');
  expect(r.stderr).toContain('continue with: ./ralph/ralph.sh --resume-last');
}

describe('Ctrl-C while the runner runs git', () => {
  it('a single loop interrupted inside the git update-ref that records its pins ends with 130; --resume-last finishes', async () => {
    const repo = loopRepo({ stories: 2, checks: ['test -f README.md'] });
    const tmp = testdir('ralphkit-tmp-');
    const hold = holdingGit();
    // The start's first update-ref: the pins and the plan ref, in one transaction after their seal (verify/anchors.ts).
    hold.arm('update-ref', 1);
    const run = startInGroup(repo, ['--name', 'one', '--agent-cmd', agent('worker'), '--pause', '0', '5'], {
      PATH: `${hold.bin}:${process.env.PATH}`,
      TMPDIR: tmp,
    });
    await until('the runner inside git update-ref', () => existsSync(hold.held), 60_000);
    run.interrupt();
    hold.release();
    const r = await run.done;
    expectInterrupted(r);
    expect(onlyState(repo).status).toBe('interrupted');
    const again = await ralph(repo, ['--resume-last'], { TMPDIR: tmp }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('ralph-verify-'))).toEqual([]);
  }, 180_000);

  it('--parallel 2 interrupted inside git while its worktree is made, then inside the git commit of a merge: 130 each time; --resume-last merges every story, no story branch left', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const tmp = testdir('ralphkit-tmp-');
    const hold = holdingGit();
    const { env } = fakeEnv({ PATH: `${hold.bin}:${process.env.PATH}`, TMPDIR: tmp });
    const interruptAt = async (args: string[], what: string) => {
      const run = startInGroup(repo, args, env);
      await until(what, () => existsSync(hold.held), 90_000);
      run.interrupt();
      hold.release();
      expectInterrupted(await run.done);
      expect(onlyState(repo).status).toBe('interrupted');
    };
    // Before the loop is recorded: the run's own worktree (where the merge queue works) is being added.
    hold.arm(`${repo}.ralph-worktrees/par`, 1);
    await interruptAt(parallelArgs(2, 10, ['--name', 'par']), 'the start inside git worktree add');
    hold.arm('--allow-empty', 1);
    await interruptAt(['--resume-last'], 'the merge queue inside git commit');
    const again = await ralph(repo, ['--resume-last'], { ...env, PATH: process.env.PATH }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002']);
    expect(git(repo, 'for-each-ref', '--format=%(refname:short)', `refs/heads/${BRANCH}--*`)).toBe('');
    expect(readdirSync(tmp).filter((n) => /^(ralph-verify-|ralphkit-log-)/.test(n))).toEqual([]);
  }, 240_000);
});
