// The runner's own cost per iteration, counted in git processes (not milliseconds: machines are noisy, and the
// benchmark owns timings). A logging `git` first on PATH records every call; the agent writes a marker into the
// same log, so the calls between two markers are exactly one iteration's worth of runner work.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, testdir } from '../support/repo.js';
import { agent, loopRepo, ralph } from '../support/loop-repo.js';
import { fakeEnv, parallelRalph, parallelRepo } from '../support/parallel-repo.js';

const MARKER = '-- agent ran';

/** PATH and env under which every git call is appended to a log file. */
function loggingGit(): { env: NodeJS.ProcessEnv; log: string } {
  const dir = testdir();
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const log = path.join(dir, 'git.log');
  writeFileSync(log, '');
  writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> "$RALPH_TEST_GITLOG"\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(path.join(dir, 'git'), 0o755);
  return { env: { PATH: `${dir}${path.delimiter}${process.env.PATH}`, RALPH_TEST_GITLOG: log }, log };
}

/** The runner's git calls between one agent run and the next, per iteration. */
function perIteration(log: string): Array<{ all: number; head: number; topLevel: number; status: number }> {
  const segments = readFileSync(log, 'utf8').split(`${MARKER}\n`).slice(1, -1);
  return segments.map((s) => {
    // The runner puts its hardening (`-c key=value` pairs) before every command: the command is what follows.
    const calls = s
      .split('\n')
      .filter(Boolean)
      .map((c) => c.replace(/^(-c \S+ )+/, ''));
    return {
      all: calls.length,
      head: calls.filter((c) => /^rev-parse --verify\b.*\bHEAD\b/.test(c)).length,
      topLevel: calls.filter((c) => c.includes('--show-toplevel')).length,
      status: calls.filter((c) => c.startsWith('status ')).length,
    };
  });
}

const marked = (cmd: string) => `echo '${MARKER}' >> "$RALPH_TEST_GITLOG"${cmd ? `; ${cmd}` : ''}`;

describe('git processes per iteration', () => {
  it('an agent that does nothing costs no git process at all: git is asked only when its files changed', async () => {
    const dir = loopRepo({ stories: 1 });
    const { env, log } = loggingGit();
    const r = await ralph(dir, ['--agent-cmd', marked(''), '--pause', '0', '--no-progress-limit', '100', '4'], env);
    expect(r.code, r.stderr).toBe(1);
    const counts = perIteration(log);
    expect(counts).toHaveLength(3);
    // The first iteration's status of the runner's own files is remembered with git's files as they were.
    expect(counts[0]).toEqual({ all: 1, head: 0, topLevel: 0, status: 1 });
    for (const c of counts.slice(1))
      expect(c, readFileSync(log, 'utf8')).toEqual({ all: 0, head: 0, topLevel: 0, status: 0 });
  });

  it('a branch switched by writing .git/HEAD by hand (no git command) is still seen, and undone', async () => {
    const dir = loopRepo({ stories: 1 });
    git(dir, 'branch', 'elsewhere');
    const { env, log } = loggingGit();
    // Iterations 1 and 2 do nothing; iteration 3 moves HEAD with a plain file write, as no git command would.
    const cmd = marked(`if [ "$RALPH_ITERATION" = 3 ]; then printf 'ref: refs/heads/elsewhere\\n' > .git/HEAD; fi`);
    const r = await ralph(dir, ['--agent-cmd', cmd, '--pause', '0', '--no-progress-limit', '100', '4'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /iteration 3[\s\S]*the agent left the loop's branch: it switched from ralph\/test to elsewhere/,
    );
    expect(r.stderr).toMatch(/switched back to ralph\/test and rejected this iteration's claims/);
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD'), r.stderr).toBe('ralph/test');
    // The quiet iteration asked git nothing; the one after the hand-made switch asked again.
    const counts = perIteration(log);
    expect(counts[1].all).toBe(0);
    expect(counts[2].all).toBeGreaterThan(0);
  });

  it('a claimed story is verified at the real HEAD after the agent, with no HEAD or status read twice', async () => {
    const dir = loopRepo({ stories: 3, checks: ['true'] });
    const { env, log } = loggingGit();
    const r = await ralph(dir, ['--agent-cmd', marked(`node '${agent('worker')}'`), '--pause', '0', '5'], env);
    expect(r.code, r.stderr).toBe(0);
    const counts = perIteration(log);
    expect(counts).toHaveLength(2);
    for (const c of counts) {
      expect(c.topLevel).toBe(0);
      expect(c.head).toBeLessThanOrEqual(2);
      expect(c.status).toBeLessThanOrEqual(2);
    }
    // Each verdict names the commit the agent made, read after it exited (not a stale or guessed sha).
    const runDir = path.join(
      dir,
      'ralph/.runs',
      readdirSync(path.join(dir, 'ralph/.runs')).find((n) => n !== 'locks' && !n.includes('.'))!,
    );
    const ledger = readFileSync(path.join(runDir, 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; story: string; commit: string; status?: string });
    // No reviewer, so no SHIP: the loop's SHIPs ref is never written (two git processes an iteration it was).
    expect(() =>
      git(dir, 'rev-parse', '--verify', '--quiet', `refs/ralphkit/loops/${path.basename(runDir)}/shipped`),
    ).toThrow();
    for (const id of ['US-001', 'US-002', 'US-003']) {
      const verdict = ledger.find((l) => l.kind === 'verdict' && l.story === id);
      expect(verdict?.status).toBe('verified');
      expect(verdict?.commit).toBe(git(dir, 'log', '-1', '--format=%H', `--grep=^feat: ${id} `));
    }
  });
});

/** The runner's git calls before its first agent run, as commands (hardening stripped, object names and loop ids generic). */
function beforeFirstAgent(log: string): string[] {
  const text = readFileSync(log, 'utf8');
  return text
    .slice(0, text.indexOf(`${MARKER}\n`))
    .split('\n')
    .filter(Boolean)
    .map((c) =>
      c
        .replace(/^(-c \S+ )+/, '')
        .replace(/\b[0-9a-f]{40,64}\b/g, '<sha>')
        .replace(/loops\/[^/ ]+\//g, 'loops/<id>/'),
    );
}

describe('git processes at start', () => {
  it('engine start-up: 13 git processes before the first agent (23 before the batching, with less verified)', async () => {
    const dir = loopRepo({ stories: 2 });
    const { env, log } = loggingGit();
    const r = await ralph(dir, ['--agent-cmd', marked(''), '1'], env, 100_000);
    expect(r.code, r.stderr).toBe(1);
    const calls = beforeFirstAgent(log).map((c) =>
      c.replace(/\S*\/ralph-verify-\S+/, '<tmp>/ralph-verify-<loop>').replace(/--template= \S+/, '--template= <repo>'),
    );
    expect(calls).toEqual([
      // where the repository and git's folders are (before the plan is read and the locks taken), and its hash
      'rev-parse --show-toplevel --path-format=absolute --git-dir --git-common-dir --show-object-format',
      // under the locks: the clean-tree check, with HEAD's branch and commit in its header
      'status --porcelain=v2 --branch --no-ahead-behind -z --untracked-files=all --ignore-submodules=dirty',
      // the plan, the log and the prompt as committed at HEAD, and whether the plan's branch exists
      'cat-file --batch',
      'checkout --quiet -b ralph/test HEAD --',
      // every ref: what the loop's refs name now, for their seal (verify/anchors.ts), whether an earlier loop of its
      // name left a SHIPs record (written over, never read, by this one), your branches and the refs held for the end
      'for-each-ref --format=%(refname) %(objectname)',
      // the includes and hooksPath the runner's guard holds (before the check environment, whose PATH folders the pins need)
      'config -z --list --show-scope --show-origin --includes',
      // the pins and the plan ref, in one transaction, after the seal is written
      'update-ref --stdin',
      // the pinned bytes, read from the plan commit down with every object hashed against its id (the hash as the
      // first rev-parse printed it): the trees git lists (a guess of what to fetch), the commit with its trees, then
      // the pinned blobs (git/objects.ts, verify/pin-capture.ts)
      'ls-tree -r -t -z --full-tree <sha>',
      'cat-file --batch',
      'cat-file --batch',
      // the index as the loop starts: the flags that hide a file from git status set then are yours, and its gitlinks
      // your repositories (verify/index-flags.ts, verify/nested-git.ts)
      'ls-files --stage -v -z',
      // the start-up probe: the plan-level check once on the plan commit, in a fresh checkout (verify/weak-checks.ts)
      'clone --quiet --shared --no-checkout --template= <repo> <tmp>/ralph-verify-<loop>',
      'checkout --quiet --detach <sha> --',
      'ls-files -s -z',
      // the first iteration's refs (the branch, HEAD, the branch tips the agent's new commits are told from)
      'for-each-ref --format=%(HEAD)%(objectname) %(refname) %(symref) refs/heads',
    ]);
    // The refs hold what they held when each was written alone: the plan commit, and the plan committed there.
    const id = readdirSync(path.join(dir, 'ralph/.runs')).find((n) => n !== 'locks' && !n.includes('.'))!;
    expect(git(dir, 'rev-parse', `refs/ralphkit/loops/${id}/pins`)).toBe(git(dir, 'rev-parse', 'main'));
    expect(git(dir, 'rev-parse', `refs/ralphkit/loops/${id}/plan`)).toBe(git(dir, 'rev-parse', 'main:ralph/prd.json'));
  }, 120_000);
});

describe('git processes of a --parallel worker', () => {
  it("a worker's attempt asks git for no configuration (the run's guard holds it), and each worker tree's git folders are asked once", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const { env, log } = loggingGit();
    const r = await parallelRalph(repo, 2, 10, { ...fakeEnv().env, ...env });
    expect(r.code, r.stderr).toBe(0);
    const calls = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((c) => c.replace(/^(-c \S+ )+/, ''));
    // Each attempt (three at least) has its own guard over its tree: the configuration's includes and hooks are read
    // once, at the start, and each worker tree's git folders once, in one process, when the tree is made (there were
    // three processes per attempt: config, one per folder; then one per attempt).
    expect(calls.filter((c) => c.startsWith('config -z --list'))).toHaveLength(1);
    expect(calls.filter((c) => /^rev-parse --path-format=absolute --git-(common-)?dir$/.test(c))).toEqual([]);
    const attempts = calls.filter((c) => /^checkout -q --force -B |^worktree add /.test(c)).length;
    expect(attempts).toBeGreaterThanOrEqual(3);
    // The run's own tree once (its guard at the start), and each of the two worker trees once.
    const folders = calls.filter((c) => c === 'rev-parse --path-format=absolute --git-dir --git-common-dir');
    expect(folders).toHaveLength(3);
  }, 120_000);
});
