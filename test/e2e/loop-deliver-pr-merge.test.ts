// --deliver pr-merge with real git, the installed runner, fake agents and a scripted GitHub REST API on 127.0.0.1
// (SPEC §10): the pull request is merged only when the loop is done with every story verified, the loop's commits left
// its pinned tests alone, and the repository's CI passed on the verified head; the merge names that sha, so a push
// that raced in is refused by GitHub. Otherwise exit 7 (not-merged) with the reason, nothing local lost, and the
// token nowhere but in the Authorization header. Needs `npm run build` first (npm test does it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../support/repo.js';
import { onlyState, ralph, renderPlan, startRalph } from '../support/loop-repo.js';
import { until } from '../support/process.js';
import {
  startGitHubServer,
  type FakeCi,
  type GitHubServer,
  type GitHubServerOptions,
} from '../support/github-server.js';
import { apiEnv, BRANCH, deliverRepo, expectNoToken, lines, type DeliverRepo } from '../support/deliver-repo.js';

const FAST = ['--pause', '0'];
const PASSED: FakeCi = {
  runs: [{ name: 'test', status: 'completed', conclusion: 'success' }],
  statuses: [{ context: 'ci/legacy', state: 'success' }],
};

async function serve(s: DeliverRepo, opts: Partial<GitHubServerOptions> = {}): Promise<GitHubServer> {
  // "GitHub" sees the branch where the bare remote has it: a merge naming another sha gets GitHub's 409.
  return startGitHubServer({
    owner: 'acme',
    repo: 'demo',
    headSha: (branch) => git(s.remote, 'rev-parse', `refs/heads/${branch}`),
    compareIn: s.dir,
    ...opts,
  });
}

const calls = (server: GitHubServer, method: string, re: RegExp) =>
  server.requests.filter((q) => q.method === method && re.test(q.path));
const checkLooks = (server: GitHubServer) => calls(server, 'GET', /\/commits\/[0-9a-f]{40}\/check-runs/);
const merges = (server: GitHubServer) => calls(server, 'PUT', /\/merge$/);

describe('--deliver pr-merge', () => {
  it('waits while the checks run, then merges the pull request at the verified head once they passed', async () => {
    const s = deliverRepo();
    // The first look finds the check still running, the second finds it done.
    const server = await serve(s, {
      ci: (_sha, call) => (call === 1 ? { runs: [{ name: 'test', status: 'in_progress', conclusion: null }] } : PASSED),
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '5'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(0);
    const head = git(s.dir, 'rev-parse', BRANCH);
    expect(git(s.remote, 'rev-parse', `refs/heads/${BRANCH}`)).toBe(head);
    // Passed on two looks in a row, one interval apart, before the merge.
    expect(checkLooks(server).map((q) => q.path)).toEqual(
      [1, 2, 3].map(() => `/repos/acme/demo/commits/${head}/check-runs?per_page=100&page=1`),
    );
    expect(calls(server, 'GET', /\/status\?/).map((q) => q.path)).toEqual(
      [1, 2, 3].map(() => `/repos/acme/demo/commits/${head}/status?per_page=100`),
    );
    expect(calls(server, 'GET', /\/check-suites\?/).map((q) => q.path)).toEqual(
      [1, 2, 3].map(() => `/repos/acme/demo/commits/${head}/check-suites?per_page=100`),
    );
    expect(merges(server)).toHaveLength(1);
    expect(merges(server)[0]).toMatchObject({
      path: '/repos/acme/demo/pulls/101/merge',
      body: { sha: head, merge_method: 'merge' },
    });
    // The merge is the last request: after the checks passed, never before.
    expect(server.requests.at(-1)?.method).toBe('PUT');
    expect(server.pulls[0]).toMatchObject({ number: 101, merged: true });
    expect(r.stderr).toContain(`checks on ${head.slice(0, 7)}: 1 check, still running: test`);
    expect(r.stderr).toContain(`checks on ${head.slice(0, 7)}: 2 checks, all passed`);
    expect(r.stderr).toMatch(
      new RegExp(`merged pull request #101 into main at ${head.slice(0, 7)} \\(merge commit fffffff\\)`),
    );
    expect(onlyState(s.dir)).toMatchObject({ status: 'complete', exitCode: 0 });
    expectNoToken(s, r);
  });

  it('a quick check that passed before the real CI reported is not enough: the second look sees the failure, nothing merged', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const labeler = { name: 'labeler', status: 'completed', conclusion: 'success' };
    const server = await serve(s, {
      ci: (_sha, call) =>
        call === 1
          ? { runs: [labeler] }
          : { runs: [labeler, { name: 'test', status: 'completed', conclusion: 'failure' }] },
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(checkLooks(server)).toHaveLength(2);
    expect(r.stderr).toContain('2 checks, failed: test (failure)');
  });

  it('runs that were all skipped are no evidence: not merged', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, {
      ci: () => ({ runs: [{ name: 'test', status: 'completed', conclusion: 'skipped' }] }),
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '1s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(r.stderr).toContain('no check passed on');
  });

  it('no checks reported is not a pass: waits until --merge-timeout, exit 7, nothing merged, the pull request open', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s);
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '1s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(checkLooks(server).length).toBeGreaterThan(0);
    expect(merges(server)).toEqual([]);
    expect(server.pulls[0].merged).toBeUndefined();
    expect(r.stderr).toContain('pull request #101 was not merged: no checks were reported on');
    expect(r.stderr).toContain('(no checks is not a pass)');
    expect(r.stderr).toContain('pull request #101 stays open');
    expect(onlyState(s.dir)).toMatchObject({ status: 'not-merged', exitCode: 7 });
    // Nothing local is lost: the verified branch is where the loop left it, and pushed.
    expect(git(s.remote, 'rev-parse', `refs/heads/${BRANCH}`)).toBe(git(s.dir, 'rev-parse', BRANCH));
    expectNoToken(s, r);
  });

  it.each([
    [
      'a check run',
      {
        runs: [
          { name: 'test', status: 'completed', conclusion: 'success' },
          { name: 'lint', status: 'completed', conclusion: 'failure' },
        ],
      },
      'lint (failure)',
    ],
    [
      'a commit status',
      {
        runs: [{ name: 'test', status: 'completed', conclusion: 'success' }],
        statuses: [{ context: 'ci/jenkins', state: 'error' }],
      },
      'ci/jenkins (error)',
    ],
  ])('%s failed: exit 7 with the failing check named, nothing merged', async (_what, ci, named) => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, { ci: () => ci });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'], apiEnv(server));
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(r.stderr).toContain(
      `its checks failed on ${git(s.dir, 'rev-parse', BRANCH).slice(0, 7)}: 2 checks, failed: ${named}`,
    );
    expect(r.stderr).toContain('look at the failing checks on GitHub (https://github.example/acme/demo/pull/101)');
    expectNoToken(s, r);
  });

  it('never merges a branch whose commits changed a pinned test file, and the pull request body lists it', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }), undefined, {
      files: { 'test/pinned.test.js': 'assert(true)\n' },
      before: `echo '// skipped' >> test/pinned.test.js && git commit -qam 'weaken the test'`,
    });
    const server = await serve(s, { ci: () => PASSED });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'], apiEnv(server));
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    // Refused before waiting: the checks are never looked at.
    expect(checkLooks(server)).toEqual([]);
    expect(r.stderr).toMatch(
      /the loop's commits changed pinned test files since the plan commit [0-9a-f]{7} \(M test\/pinned\.test\.js\)/,
    );
    expect(server.pulls[0].body).toContain('Changed by the loop since its plan commit');
    expect(server.pulls[0].body).toContain('- `M test/pinned.test.js`');
    expect(readFileSync(path.join(s.dir, 'test/pinned.test.js'), 'utf8')).toContain('// skipped');
    expectNoToken(s, r);
  });

  it.each([
    ["--resume after the agent moved the loop's pins ref", []],
    ['--resume --repin', ['--repin']],
  ])(
    "pinned tests are judged from the plan at GitHub's merge base: %s still never merges a weakened test",
    async (_what, extra) => {
      // The agent weakens a pinned test and points the runner's own record of its pins at its commit.
      const s = deliverRepo(renderPlan({ stories: 1 }), undefined, {
        files: { 'test/pinned.test.js': 'assert(true)\n' },
        before: `echo '// skipped' >> test/pinned.test.js && git commit -qam 'weaken the test' && git update-ref "$(git for-each-ref --format='%(refname)' refs/ralphkit/loops/ | grep '/pins$')" HEAD`,
      });
      const server = await serve(s, { ci: () => PASSED });
      const first = await ralph(
        s.dir,
        ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'],
        apiEnv(server),
      );
      expect(first.code, first.stderr).toBe(7);
      const r = await ralph(
        s.dir,
        ['--resume', onlyState(s.dir).id, '--deliver', 'pr-merge', ...extra, ...FAST],
        apiEnv(server),
      );
      expect(merges(server)).toEqual([]);
      expect(server.pulls[0].merged).toBeUndefined();
      // Without --repin the moved pins ref stops the resume before anything else (the runner sealed the pins it set).
      if (!extra.length) return void expect(r.code, r.stderr).toBe(6);
      expect(r.code, r.stderr).toBe(7);
      expect(r.stderr).toMatch(
        /the branch changed tests pinned by the plan on main \(merge base [0-9a-f]{7}\): M test\/pinned\.test\.js/,
      );
      expect(calls(server, 'GET', /\/compare\/main\.\.\.[0-9a-f]{40}$/).length).toBeGreaterThan(0);
    },
  );

  it('--accept-pin-changes, typed on the resume, merges the changed pinned test with a warning; it is never stored', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }), undefined, {
      files: { 'test/pinned.test.js': 'assert(true)\n' },
      before: `echo '// reviewed' >> test/pinned.test.js && git commit -qam 'change the test'`,
    });
    const server = await serve(s, { ci: () => PASSED });
    const first = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(first.code, first.stderr).toBe(7);
    expect(first.stderr).toContain('--accept-pin-changes');
    const { id } = onlyState(s.dir);
    const r = await ralph(
      s.dir,
      ['--resume', id, '--deliver', 'pr-merge', '--accept-pin-changes', '--merge-timeout', '20s', ...FAST],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr, /--accept-pin-changes: merging although/)).toHaveLength(2);
    expect(merges(server)).toHaveLength(1);
    expect(readFileSync(path.join(s.dir, 'ralph/.runs', id, 'state.json'), 'utf8')).not.toContain('acceptPinChanges');
  });

  it("never merges a branch that changes the repository's CI configuration", async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }), undefined, {
      files: {
        '.github/workflows/ci.yml':
          'on: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n',
      },
      before: `printf 'on: [pull_request]\\njobs:\\n  test:\\n    runs-on: ubuntu-latest\\n    steps:\\n      - run: "true"\\n' > .github/workflows/ci.yml && git commit -qam 'make CI a pass'`,
    });
    const server = await serve(s, { ci: () => PASSED });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'], apiEnv(server));
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(r.stderr).toContain("the branch changes the repository's CI configuration (.github/workflows/ci.yml)");
    expect(server.pulls[0].body).toContain('## CI configuration');
    expect(server.pulls[0].body).toContain('- `M .github/workflows/ci.yml`');
  });

  it('never merges an open pull request it reused whose base is another branch', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, {
      ci: () => PASSED,
      pulls: [{ number: 7, head: BRANCH, base: 'release', title: 'x', body: '' }],
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(server.pulls[0].merged).toBeUndefined();
    expect(r.stderr).toContain("pull request #7 was not merged: it is into release, not the loop's base main");
  });

  it('never merges when a story is unverified (no check covers it): exit 7, though the loop alone would exit 0', async () => {
    const s = deliverRepo(renderPlan({ stories: 1, checks: [] }));
    const server = await serve(s, { ci: () => PASSED });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'], apiEnv(server));
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toEqual([]);
    expect(r.stderr).toContain("some stories are unverified (no check covers them: accepted on the agent's word)");
    expect(server.pulls).toHaveLength(1);
    expectNoToken(s, r);
  });

  it("a push that races in after the runner's: the pull request read again before the merge shows it, nothing merged", async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, {
      ci: (sha, call) => {
        // Someone pushes to the branch on "GitHub" while the checks run.
        if (call === 1)
          git(
            s.remote,
            'update-ref',
            `refs/heads/${BRANCH}`,
            git(s.remote, 'commit-tree', `${sha}^{tree}`, '-p', sha, '-m', 'raced in'),
          );
        return PASSED;
      },
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    const verified = git(s.dir, 'rev-parse', BRANCH);
    // Seen when the pull request is read again right before the merge (GitHub's 409 stays the last word on a race
    // between that read and the merge).
    expect(merges(server)).toEqual([]);
    expect(r.stderr).toContain(
      `its head on GitHub is ${git(s.remote, 'rev-parse', `refs/heads/${BRANCH}`).slice(0, 7)}, not the commit the final gate verified (${verified.slice(0, 7)})`,
    );
    expect(server.pulls[0].merged).toBeUndefined();
    expect(git(s.remote, 'rev-parse', `refs/heads/${BRANCH}^`)).toBe(verified);
    expectNoToken(s, r);
  });

  it('GitHub refusing the merge for its own rules (405): its words and a hint, exit 7', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, {
      ci: () => PASSED,
      mergeFail: { status: 405, message: 'Pull Request is not mergeable' },
    });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '3'],
      apiEnv(server),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(merges(server)).toHaveLength(1);
    expect(r.stderr).toContain('GitHub refused the merge: GitHub answered HTTP 405: Pull Request is not mergeable');
    expect(r.stderr).toContain("GitHub's rules for this repository do not allow this merge now");
    expectNoToken(s, r);
  });

  it('--resume of a loop that was done but not merged runs no agent: the final gate again, then the wait and the merge', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    let ciDone = false;
    const server = await serve(s, { ci: () => (ciDone ? PASSED : {}) });
    // One iteration is all it has: the resume must not be refused as out of iterations.
    const first = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '1s', ...FAST, '1'],
      apiEnv(server),
    );
    expect(first.code, first.stderr).toBe(7);
    const { id } = onlyState(s.dir);
    expect(first.stderr).toContain(`to verify and try again: ./ralph/ralph.sh --resume ${id} --deliver pr-merge`);
    // The merge is never taken from state.json: a resume that does not type it again is refused, nothing changed.
    const untyped = await ralph(s.dir, ['--resume', id, ...FAST], apiEnv(server));
    expect(untyped.code, untyped.stderr).toBe(2);
    expect(untyped.stderr).toContain('add --deliver pr-merge to merge once CI passes');
    ciDone = true;
    const agentRuns = readFileSync(s.envDump, 'utf8').split('RALPH_RUNNER=1').length;
    const gateVerdicts = () =>
      readFileSync(path.join(s.dir, 'ralph/.runs', id, 'ledger.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => /"kind":"verdict"/.test(l) && /"gate":true/.test(l)).length;
    const gatesBefore = gateVerdicts();
    const r = await ralph(s.dir, ['--resume', id, '--deliver', 'pr-merge', ...FAST], apiEnv(server));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(s.envDump, 'utf8').split('RALPH_RUNNER=1').length).toBe(agentRuns);
    // The final gate really ran again: one more gate verdict in the ledger.
    expect(gatesBefore).toBeGreaterThan(0);
    expect(gateVerdicts()).toBe(gatesBefore + 1);
    expect(merges(server).map((q) => q.body?.sha)).toEqual([git(s.dir, 'rev-parse', BRANCH)]);
    expect(onlyState(s.dir)).toMatchObject({ status: 'complete', exitCode: 0 });
    expectNoToken(s, r);
  });

  it('Ctrl-C while waiting stops the wait: exit 130, the pull request open and unmerged', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const server = await serve(s, { ci: () => ({ runs: [{ name: 'test', status: 'queued', conclusion: null }] }) });
    const { child, done } = startRalph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', ...FAST, '3'],
      apiEnv(server),
    );
    await until('a look at the checks', () => checkLooks(server).length > 0);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code, r.stderr).toBe(130);
    expect(merges(server)).toEqual([]);
    expect(lines(r.stderr, /interrupted while waiting/)).toEqual([
      expect.stringContaining(
        'interrupted while waiting for the checks of pull request #101; it stays open, not merged',
      ),
    ]);
    expect(onlyState(s.dir)).toMatchObject({ status: 'interrupted', exitCode: 130 });
  });

  it('Ctrl-C while waiting with no iteration left: the hinted --resume-last is not refused, runs no agent, and merges', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    let ciDone = false;
    const server = await serve(s, {
      ci: () => (ciDone ? PASSED : { runs: [{ name: 'test', status: 'queued', conclusion: null }] }),
    });
    const { child, done } = startRalph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr-merge', '--merge-timeout', '20s', ...FAST, '1'],
      apiEnv(server),
    );
    await until('a look at the checks', () => checkLooks(server).length > 0);
    child.kill('SIGINT');
    const first = await done;
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toContain('or wait again with: ./ralph/ralph.sh --resume-last --deliver pr-merge');
    ciDone = true;
    const agentRuns = readFileSync(s.envDump, 'utf8').split('RALPH_RUNNER=1').length;
    const r = await ralph(s.dir, ['--resume-last', '--deliver', 'pr-merge', ...FAST], apiEnv(server));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(s.envDump, 'utf8').split('RALPH_RUNNER=1').length).toBe(agentRuns);
    expect(merges(server).map((q) => q.body?.sha)).toEqual([git(s.dir, 'rev-parse', BRANCH)]);
    expect(onlyState(s.dir)).toMatchObject({ status: 'complete', exitCode: 0 });
    expect(onlyState(s.dir)).not.toHaveProperty('mergePending');
  });

  it('--merge-timeout without --deliver pr-merge is refused', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr', '--merge-timeout', '5m', ...FAST, '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--merge-timeout is how long --deliver pr-merge waits for CI: add --deliver pr-merge');
  });
});
