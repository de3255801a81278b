// Ctrl-C while the runner is inside one of its own git commands (issue #27): a terminal sends SIGINT to its whole
// process group. A `git` first on PATH holds the marked call until the test releases it (a file, not a delay), so the
// signal lands while git runs; the loop ends with 130 and the resume hint, and --resume-last finishes it.
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { git, gitEnv, testdir, type RunResult } from '../support/repo.js';
import { waitUntil } from '../support/process.js';
import { BRANCH, fakeEnv, mergeOrder, parallelRepo } from '../support/parallel-repo.js';

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

/** A folder with a `git` that holds the `nth` call carrying `arg` until the file `release` appears there. */
function holdingGit(arg: string, nth: number): { bin: string; held: string; release: () => void } {
  const bin = testdir('ralphkit-git-hold-');
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh
dir=$(dirname "$0")
for a in "$@"; do
  if [ "$a" = ${JSON.stringify(arg)} ]; then
    echo x >> "$dir/seen"
    if [ "$(wc -l < "$dir/seen")" -eq ${nth} ]; then
      echo $$ > "$dir/held"
      while [ ! -f "$dir/release" ]; do sleep 0.05; done
    fi
    break
  fi
done
exec ${REAL_GIT} "$@"
`);
  chmodSync(path.join(bin, 'git'), 0o755);
  const release = () => writeFileSync(path.join(bin, 'release'), '');
  onTestFinished(release);
  return { bin, held: path.join(bin, 'held'), release };
}

/** ralph/ralph.sh in a process group of its own, as a terminal starts it; `interrupt` is Ctrl-C there. */
function startInGroup(repo: string, args: string[], env: NodeJS.ProcessEnv): { interrupt: () => void; done: Promise<RunResult> } {
  const child = spawn(path.join(repo, 'ralph/ralph.sh'), args, { cwd: repo, detached: true, env: { ...gitEnv(), FORCE_COLOR: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
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
    const hold = holdingGit('refs/ralphkit/loops/one/pins', 1);
    const run = startInGroup(repo, ['--name', 'one', '--agent-cmd', agent('worker'), '--pause', '0', '5'], { PATH: `${hold.bin}:${process.env.PATH}`, TMPDIR: tmp });
    await waitUntil(() => existsSync(hold.held), 60_000, 'the runner inside git update-ref');
    run.interrupt();
    hold.release();
    const r = await run.done;
    expectInterrupted(r);
    expect(onlyState(repo).status).toBe('interrupted');
    const again = await ralph(repo, ['--resume-last'], { TMPDIR: tmp }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('ralph-verify-'))).toEqual([]);
  }, 180_000);

  it('--parallel 2 interrupted inside the git commit of the merge queue\'s merge ends with 130; --resume-last merges every story, no story branch left', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const tmp = testdir('ralphkit-tmp-');
    const hold = holdingGit('--allow-empty', 1);
    const { env } = fakeEnv({ PATH: `${hold.bin}:${process.env.PATH}`, TMPDIR: tmp });
    const run = startInGroup(repo, ['--parallel', '2', '--name', 'par', '--agent-cmd', agent('story-worker'), '--pause', '0', '10'], env);
    await waitUntil(() => existsSync(hold.held), 90_000, 'the merge queue inside git commit');
    run.interrupt();
    hold.release();
    expectInterrupted(await run.done);
    expect(onlyState(repo).status).toBe('interrupted');
    const again = await ralph(repo, ['--resume-last'], { ...env, PATH: process.env.PATH }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002']);
    expect(git(repo, 'for-each-ref', '--format=%(refname:short)', `refs/heads/${BRANCH}--*`)).toBe('');
    expect(readdirSync(tmp).filter((n) => /^(ralph-verify-|ralphkit-log-)/.test(n))).toEqual([]);
  }, 180_000);
});
