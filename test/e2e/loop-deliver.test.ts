// --deliver push with real git (SPEC §10): the plan branch pushed to a bare repository on disk after each iteration
// that accepted a story and at the end, with the runner's hardened git (this repository's pre-push hook never runs);
// a remote that refuses is one warning per push with git's own words, the local commits stay and the exit code is the
// loop's. Needs `npm run build` first (npm test does it).
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, testdir } from '../support/repo.js';
import { agent, loopRepo, onlyState, ralph, startRalph } from '../support/loop-repo.js';
import { until } from '../support/process.js';
import { deliverRepo } from '../support/deliver-repo.js';
import { renderPlan } from '../support/loop-repo.js';

const FAST = ['--pause', '0'];
const BRANCH = 'ralph/test';

/** A bare repository to push to; `preReceive` (a shell script body) becomes its pre-receive hook. */
function bareRemote(preReceive?: string): string {
  const remote = path.join(testdir('ralphkit-remote-'), 'remote.git');
  git(path.dirname(remote), 'init', '-q', '--bare', remote);
  if (preReceive) hook(path.join(remote, 'hooks'), 'pre-receive', preReceive);
  return remote;
}

function hook(dir: string, name: string, body: string): void {
  writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(path.join(dir, name), 0o755);
}

function remoteRef(remote: string, ref: string): string | null {
  try {
    return git(remote, 'rev-parse', '--verify', '--quiet', ref);
  } catch {
    return null;
  }
}

const lines = (stderr: string, re: RegExp) => stderr.split('\n').filter((l) => re.test(l));

describe('--deliver push', () => {
  it("warns once when the pushed branch changes CI configuration (a workflow there may run with the repository's secrets)", async () => {
    const s = deliverRepo(renderPlan({ stories: 2 }), undefined, {
      before:
        'mkdir -p .github/workflows && echo "on: push" >> .github/workflows/x.yml && git add -A && git commit -qm ci',
    });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'push', ...FAST, '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr, /changes CI configuration/)).toEqual([
      expect.stringContaining(
        `--deliver push: the pushed ${BRANCH} changes CI configuration (.github/workflows/x.yml); on origin it may run with the repository's secrets`,
      ),
    ]);
  });

  it('pushes the plan branch after each accepted story and at the end; a pre-push hook in the repository never runs', async () => {
    const dir = loopRepo({ stories: 2 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    const marker = path.join(testdir(), 'pre-push-ran');
    hook(path.join(dir, '.git/hooks'), 'pre-push', `touch ${marker}; exit 1`);
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'push', ...FAST, '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr, /^ralph: pushed /)).toEqual([
      `ralph: pushed ${BRANCH} to origin after iteration 1`,
      `ralph: pushed ${BRANCH} to origin after iteration 2`,
      `ralph: pushed ${BRANCH} to origin at the end of the loop`,
    ]);
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBe(git(dir, 'rev-parse', BRANCH));
    expect(existsSync(marker)).toBe(false);
    // The runner wrote no upstream into .git/config (it holds that file against the agent).
    expect(readFileSync(path.join(dir, '.git/config'), 'utf8')).not.toContain('[branch "ralph/test"]');
    expect(onlyState(dir).options).toMatchObject({ deliver: 'push' });
  });

  it("pushes to the branch's upstream remote when the upstream is the same branch there", async () => {
    const dir = loopRepo({ stories: 1 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'up', remote);
    git(dir, 'config', `branch.${BRANCH}.remote`, 'up');
    git(dir, 'config', `branch.${BRANCH}.merge`, `refs/heads/${BRANCH}`);
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'push', ...FAST, '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`ralph: pushed ${BRANCH} to up at the end of the loop`);
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBe(git(dir, 'rev-parse', BRANCH));
  });

  it('an agent that points the upstream at origin/main: main on the remote is untouched, the branch goes under its own name', async () => {
    const dir = loopRepo({ stories: 2 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    git(dir, 'push', '-q', 'origin', 'main');
    const main = remoteRef(remote, 'refs/heads/main');
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), '--deliver', 'push', ...FAST, '5'], {
      FAKE_MISBEHAVE: 'upstream',
      FAKE_AT: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('(as main)');
    expect(remoteRef(remote, 'refs/heads/main')).toBe(main);
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBe(git(dir, 'rev-parse', BRANCH));
  });

  it('an upstream whose remote is a URL, or another branch: pushed to origin under its own name', async () => {
    const dir = loopRepo({ stories: 1 });
    const remote = bareRemote();
    const elsewhere = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    git(dir, 'config', `branch.${BRANCH}.remote`, elsewhere);
    git(dir, 'config', `branch.${BRANCH}.merge`, `refs/heads/${BRANCH}`);
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'push', ...FAST, '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`ralph: pushed ${BRANCH} to origin at the end of the loop`);
    expect(remoteRef(elsewhere, `refs/heads/${BRANCH}`)).toBeNull();
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBe(git(dir, 'rev-parse', BRANCH));
  });

  it("a remote that refuses: one warning per push with git's own words and a hint, local commits intact, exit code unchanged", async () => {
    const dir = loopRepo({ stories: 2 });
    const remote = bareRemote('echo "policy: no pushes to this remote" >&2; exit 1');
    git(dir, 'remote', 'add', 'origin', remote);
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'push', ...FAST, '5']);
    expect(r.code, r.stderr).toBe(0);
    const warned = lines(r.stderr, /^ralph: warning: --deliver push/);
    expect(warned).toHaveLength(3);
    expect(warned[0]).toContain(
      `could not push ${BRANCH} to origin after iteration 1: remote: policy: no pushes to this remote | ! [remote rejected]`,
    );
    expect(warned[0]).toContain('(pre-receive hook declined)');
    expect(warned[2]).toContain(
      `your commits are safe on the local branch ${BRANCH}, and the exit code is unchanged; once fixed, push it with: git push origin ${BRANCH}`,
    );
    // git's "To <url>" line is left out (a URL can carry a token).
    expect(r.stderr).not.toMatch(/\| To \//);
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBeNull();
    expect(git(dir, 'log', '--format=%s', BRANCH)).toMatch(/feat: US-002[\s\S]*feat: US-001/);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', exitCode: 0 });
  });

  it('without any remote: a warning that says how to add one, exit code unchanged', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'push', ...FAST, '3']);
    expect(r.code).toBe(0);
    expect(lines(r.stderr, /^ralph: warning: --deliver push/).at(-1)).toBe(
      `ralph: warning: --deliver push: could not push ${BRANCH} at the end of the loop: the branch has no upstream and there is no remote named origin; your commits are safe on the local branch ${BRANCH}, and the exit code is unchanged; once fixed, push it with: git remote add origin <url>, then git push origin ${BRANCH}`,
    );
  });

  it('after Ctrl-C nothing is pushed at the end, and it says so', async () => {
    const dir = loopRepo({ stories: 1 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    const pids = path.join(testdir(), 'pids');
    const loop = startRalph(dir, ['--agent-cmd', agent('sleeper'), '--deliver', 'push', ...FAST, '3'], {
      FAKE_PIDS_FILE: pids,
    });
    await until(
      'the agent to start',
      () => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 2,
      20_000,
    );
    loop.child.kill('SIGINT');
    const r = await loop.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(
      `ralph: --deliver push: ${BRANCH} not pushed at the end (the loop is interrupted); the next run pushes it`,
    );
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBeNull();
  });

  it('an agent that rewrites the history: the end push is skipped, the remote keeps what was pushed after iteration 1', async () => {
    const dir = loopRepo({ stories: 2 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    const r = await ralph(dir, ['--agent-cmd', agent('misbehaver'), '--deliver', 'push', ...FAST, '5'], {
      FAKE_MISBEHAVE: 'reset',
      FAKE_AT: '2',
    });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`ralph: pushed ${BRANCH} to origin after iteration 1`);
    expect(r.stderr).toContain(
      `ralph: --deliver push: ${BRANCH} not pushed at the end (the loop is protected); look at the branch first, as the hint says`,
    );
    // HEAD before the agent's reset: the verified work, as pushed after iteration 1.
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBe(git(dir, 'rev-parse', 'HEAD@{1}'));
  });

  it("a loop that ends before the guard ran (the last rate-limit hit): git's configuration is put back and the push skipped", async () => {
    const dir = loopRepo({ stories: 1 });
    const remote = bareRemote();
    const evil = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    // Every run rewrites pushes to origin into another repository, then hits a rate limit: the 25th hit ends the loop.
    const script = path.join(testdir(), 'limited.sh');
    writeFileSync(
      script,
      `#!/bin/sh\ncat >/dev/null\ngit config url.${evil}.pushInsteadOf ${remote}\necho 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'\n`,
    );
    chmodSync(script, 0o755);
    const r = await ralph(dir, ['--agent-cmd', script, '--deliver', 'push', ...FAST, '3'], { RALPH_RETRY_MS: '0' });
    expect(r.code, r.stderr).toBe(5);
    expect(lines(r.stderr, /not pushed at the end of the loop: git's configuration had changed/)).toHaveLength(1);
    expect(remoteRef(evil, `refs/heads/${BRANCH}`)).toBeNull();
    expect(readFileSync(path.join(dir, '.git/config'), 'utf8')).not.toContain('pushInsteadOf');
  });

  it('a resume that is refused pushes nothing, and says so', async () => {
    const dir = loopRepo({ stories: 2 });
    const remote = bareRemote();
    git(dir, 'remote', 'add', 'origin', remote);
    const first = await ralph(dir, ['--agent-cmd', agent('worker'), ...FAST, '1']);
    expect(first.code, first.stderr).toBe(1);
    // The runner's record of the loop's pins, gone: the resume is refused once on the branch.
    const id = onlyState(dir).id;
    git(dir, 'for-each-ref', '--format=%(refname)')
      .split('\n')
      .filter((ref) => ref.endsWith(`/${id}/pins`))
      .forEach((ref) => git(dir, 'update-ref', '-d', ref));
    const r = await ralph(dir, ['--resume-last', '--deliver', 'push', ...FAST, '5']);
    // Its refs are sealed (verify/anchors.ts): a pins ref gone since is work to protect, exit 6.
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain('own refs are not what the runner recorded');
    expect(r.stderr).toContain('ralph: --deliver push: nothing pushed at the end (the loop is protected)');
    expect(remoteRef(remote, `refs/heads/${BRANCH}`)).toBeNull();
  });

  it('accepts only commit, push, pr and pr-merge', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--deliver', 'merge', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--deliver must be one of commit, push, pr, pr-merge (got "merge")');
  });
});
