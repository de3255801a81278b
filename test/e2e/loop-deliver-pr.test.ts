// --deliver pr with real git and a scripted GitHub REST API on 127.0.0.1 (SPEC §10), in the repository of
// test/support/deliver-repo.ts (origin github.com/acme/demo, pushed to a bare repository on disk). Asserts the
// requests (list, then create; later pushes update the same pull request), the body, and that the token shows up
// nowhere but in the Authorization header. Needs `npm run build` first (npm test does it).
import { chmodSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, testdir } from '../support/repo.js';
import { renderPlan, ralph } from '../support/loop-repo.js';
import { startGitHubServer } from '../support/github-server.js';
import { apiEnv, BRANCH, deliverRepo, expectNoToken, lines, TOKEN } from '../support/deliver-repo.js';

const FAST = ['--pause', '0'];
const setup = deliverRepo;

describe('--deliver pr', () => {
  it('pushes, lists by head, opens one pull request to the default branch, then updates its body on later pushes', async () => {
    const s = setup();
    const server = await startGitHubServer({ owner: 'acme', repo: 'demo', defaultBranch: 'main' });
    const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '5'], apiEnv(server));
    expect(r.code, r.stderr).toBe(0);
    expect(git(s.remote, 'rev-parse', `refs/heads/${BRANCH}`)).toBe(git(s.dir, 'rev-parse', BRANCH));
    expect(server.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      `GET /repos/acme/demo/pulls?head=acme%3Aralph%2Ftest&state=open&per_page=10`,
      'GET /repos/acme/demo',
      'POST /repos/acme/demo/pulls',
      `GET /repos/acme/demo/pulls?head=acme%3Aralph%2Ftest&state=open&per_page=10`,
      'PATCH /repos/acme/demo/pulls/101',
      `GET /repos/acme/demo/pulls?head=acme%3Aralph%2Ftest&state=open&per_page=10`,
      'PATCH /repos/acme/demo/pulls/101',
    ]);
    for (const q of server.requests) {
      expect(q.headers).toMatchObject({
        authorization: `Bearer ${TOKEN}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      });
    }
    expect(server.requests[2].body).toMatchObject({ title: 'Test', head: BRANCH, base: 'main' });
    expect(server.requests[6].body).toEqual({ body: expect.any(String) });
    expect(server.pulls).toHaveLength(1);
    const body = server.pulls[0].body;
    const sha = git(s.dir, 'log', '--format=%H', '--grep', 'US-002', '-1', BRANCH);
    expect(body).toContain('**2/2 stories verified**');
    expect(body).toMatch(/- `US-001` Story 1: \*\*verified\*\* at [0-9a-f]{12}/);
    expect(body).toContain(`- \`US-002\` Story 2: **verified** at ${sha.slice(0, 12)}`);
    expect(body).toContain('check `test -f README.md`: passed');
    expect(body).toContain('None: the branch changes no pinned test file.');
    // The first body, after iteration 1, showed US-002 not verified yet.
    expect(server.requests[2].body?.body).toContain('`US-002` Story 2: **not verified yet**');
    expect(lines(r.stderr, /pull request #101/)).toEqual([
      `ralph: opened pull request #101 (${BRANCH} into main) after iteration 1: https://github.example/acme/demo/pull/101`,
      `ralph: updated pull request #101 (${BRANCH} into main) after iteration 2: https://github.example/acme/demo/pull/101`,
      `ralph: updated pull request #101 (${BRANCH} into main) at the end of the loop: https://github.example/acme/demo/pull/101`,
    ]);
    expectNoToken(s, r);
  });

  it("an open pull request for the branch is updated, never a second one; base is the plan's baseBranch; the token comes from gh", async () => {
    const plan = JSON.parse(renderPlan({ stories: 1 })) as Record<string, unknown>;
    const s = setup(`${JSON.stringify({ ...plan, baseBranch: 'main', description: 'the demo' }, null, 2)}\n`);
    const server = await startGitHubServer({
      owner: 'acme',
      repo: 'demo',
      pulls: [{ number: 7, head: BRANCH, base: 'main', title: 'mine', body: 'old' }],
    });
    // A gh on PATH that is logged in: its token is the one used, asked for the remote's host.
    const bin = testdir('ralphkit-bin-');
    const ghLog = path.join(bin, 'gh-args');
    writeFileSync(path.join(bin, 'gh'), `#!/bin/sh\necho "$@" >> '${ghLog}'\necho ${TOKEN}\n`);
    chmodSync(path.join(bin, 'gh'), 0o755);
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '3'],
      apiEnv(server, { GH_TOKEN: '', PATH: `${bin}:${process.env.PATH}` }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(ghLog, 'utf8').trim().split('\n')[0]).toBe('auth token --hostname github.com');
    expect(server.requests.filter((q) => q.method === 'POST')).toEqual([]);
    expect(server.requests.filter((q) => q.method === 'PATCH').map((q) => q.path)).toEqual([
      '/repos/acme/demo/pulls/7',
      '/repos/acme/demo/pulls/7',
    ]);
    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(server.pulls[0]).toMatchObject({ number: 7, title: 'mine' });
    expect(server.pulls[0].body).toContain('`US-001` Story 1: **verified**');
    expect(r.stderr).toContain(`ralph: updated pull request #7 (${BRANCH} into main) at the end of the loop`);
    expectNoToken(s, r);
  });

  it.each([
    [401, 'Bad credentials', 'the token was refused'],
    [500, 'Server Error', 'the next push tries again'],
  ])(
    'GitHub answering %i: one warning with its message and a hint, the branch pushed, exit code unchanged',
    async (status, message, hint) => {
      const s = setup();
      const server = await startGitHubServer({ owner: 'acme', repo: 'demo', fail: { status, message } });
      const r = await ralph(s.dir, ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '5'], apiEnv(server));
      expect(r.code, r.stderr).toBe(0);
      const warned = lines(r.stderr, /^ralph: warning: --deliver pr/);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain(
        `--deliver pr: no pull request after iteration 1: GitHub answered HTTP ${status}: ${message}; ${hint}`,
      );
      expect(warned[0]).toContain('the branch is pushed and the exit code is unchanged');
      // 401 ends the tries; 500 is tried again after each push, and the same warning is not repeated.
      expect(server.requests).toHaveLength(status === 401 ? 1 : 3);
      expect(git(s.remote, 'rev-parse', `refs/heads/${BRANCH}`)).toBe(git(s.dir, 'rev-parse', BRANCH));
      expectNoToken(s, r);
    },
  );

  it('an Enterprise remote uses GH_ENTERPRISE_TOKEN, never the github.com token', async () => {
    const s = setup(renderPlan({ stories: 1 }), 'https://ghe.corp.example/team/tool.git');
    const server = await startGitHubServer({ owner: 'team', repo: 'tool', defaultBranch: 'trunk' });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '3'],
      apiEnv(server, { GH_TOKEN: 'ghp_theGithubComToken', GH_ENTERPRISE_TOKEN: TOKEN }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests.map((q) => q.headers.authorization)).toEqual(
      Array(server.requests.length).fill(`Bearer ${TOKEN}`),
    );
    expect(server.pulls).toMatchObject([{ head: BRANCH, base: 'trunk', title: 'Test' }]);
    expectNoToken(s, r);
  });

  // The real gh (Debian's 2.23; .ci/run installs it): its login in GH_CONFIG_DIR/hosts.yml is the token used, for
  // the remote's host only. Without gh here this is skipped with a reason; in CI a missing gh fails it.
  const realGh = ['/usr/bin/gh', '/usr/local/bin/gh'].find((p) => existsSync(p));
  if (!realGh && process.env.CI)
    throw new Error('CI needs the gh CLI for loop-deliver-pr.test.ts: apt-get install -y gh');
  it.skipIf(!realGh)(
    "the real gh CLI's login (hosts.yml) gives the token; no environment token is needed",
    async () => {
      const s = setup(renderPlan({ stories: 1 }));
      const server = await startGitHubServer({ owner: 'acme', repo: 'demo' });
      const config = testdir('ralphkit-gh-');
      writeFileSync(
        path.join(config, 'hosts.yml'),
        `github.com:\n    oauth_token: ${TOKEN}\n    user: octo\n    git_protocol: https\n`,
      );
      const bin = testdir('ralphkit-bin-');
      symlinkSync(realGh!, path.join(bin, 'gh'));
      const r = await ralph(
        s.dir,
        ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '3'],
        apiEnv(server, { GH_TOKEN: '', GH_CONFIG_DIR: config, PATH: `${bin}:${process.env.PATH}` }),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(server.requests.length).toBeGreaterThan(0);
      expect(server.requests.map((q) => q.headers.authorization)).toEqual(
        Array(server.requests.length).fill(`Bearer ${TOKEN}`),
      );
      expect(server.pulls).toHaveLength(1);
      expectNoToken(s, r);
    },
  );

  it('a gh the agent puts on PATH during the loop never runs: gh is the one found at the start', async () => {
    const s = setup(renderPlan({ stories: 1 }));
    const server = await startGitHubServer({ owner: 'acme', repo: 'demo' });
    // A folder on PATH, empty at the start (as ~/.local/bin may be); the agent plants a gh in it.
    const bin = testdir('ralphkit-bin-');
    const ran = path.join(testdir(), 'planted-gh-ran');
    const planter = path.join(testdir('ralphkit-agent-'), 'planter.sh');
    writeFileSync(
      planter,
      `#!/bin/sh\nprintf '#!/bin/sh\\ntouch ${ran}\\necho ${TOKEN}\\n' > '${bin}/gh'\nchmod 755 '${bin}/gh'\nexec '${s.agentCmd}'\n`,
    );
    chmodSync(planter, 0o755);
    const r = await ralph(
      s.dir,
      ['--agent-cmd', planter, '--deliver', 'pr', ...FAST, '3'],
      apiEnv(server, { GH_TOKEN: '', PATH: `${bin}:${process.env.PATH}` }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(bin, 'gh'))).toBe(true);
    expect(existsSync(ran)).toBe(false);
    expect(lines(r.stderr, /^ralph: warning: --deliver pr/)[0]).toContain('no GitHub token for github.com');
    expect(server.requests).toEqual([]);
  });

  it('without a token: one warning that says how to log in, nothing sent', async () => {
    const s = setup(renderPlan({ stories: 1 }));
    const server = await startGitHubServer({ owner: 'acme', repo: 'demo' });
    const r = await ralph(
      s.dir,
      ['--agent-cmd', s.agentCmd, '--deliver', 'pr', ...FAST, '3'],
      apiEnv(server, { GH_TOKEN: '' }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr, /^ralph: warning: --deliver pr/)).toEqual([
      'ralph: warning: --deliver pr: no pull request after iteration 1: no GitHub token for github.com; log in with: gh auth login --hostname github.com, or set GH_TOKEN; the branch is pushed and the exit code is unchanged',
    ]);
    expect(server.requests).toEqual([]);
  });
});
