// What --deliver pr and pr-merge make of GitHub's less usual answers, against the scripted GitHub server: a rate
// limit (a 403 or 429 with GitHub's headers) is waited out, not read as a refused token; a success whose body is not
// JSON, or a pull request list that is not a list, is an error; a merge request without an answer is read back.
import { describe, expect, it } from 'vitest';
import { createClient, GitHubError, type GitHubRepo } from '../../../../src/engine/deliver/github.js';
import { openOrUpdatePull } from '../../../../src/engine/deliver/pull-request.js';
import { mergePull, MergeUnknown, waitForCi } from '../../../../src/engine/deliver/merge.js';
import { planPullFailure } from '../../../../src/engine/deliver/deliver-pr.js';
import { startGitHubServer, type GitHubServerOptions } from '../../../support/github-server.js';
import type { Clock } from '../../../../src/engine/types.js';

const REPO: GitHubRepo = { host: 'github.com', owner: 'acme', repo: 'demo' };
const SHA = 'a'.repeat(40);
const PLAN = { branch: 'ralph/x', base: 'main', title: 'Ralph: x', body: async () => 'body' };
const RATE_LIMITED = { status: 403, json: { message: 'API rate limit exceeded for user ID 1.' } };

async function server(opts: Partial<GitHubServerOptions> = {}) {
  const s = await startGitHubServer({ owner: 'acme', repo: 'demo', ...opts });
  return { ...s, client: createClient(s.url, 'ghp_token', 500) };
}

async function failure(p: Promise<unknown>): Promise<GitHubError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GitHubError);
  return err as GitHubError;
}

/** A clock whose sleeps pass at once and move its time on. */
function fakeClock(): Clock & { slept: number[] } {
  let now = Date.now();
  const slept: number[] = [];
  return {
    slept,
    now: () => new Date(now),
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

describe('a rate limit is not a refused token', () => {
  it('403 with x-ratelimit-remaining: 0: wait until x-ratelimit-reset; the next push tries again', async () => {
    const reset = Math.floor(Date.now() / 1000) + 900;
    const { client } = await server({
      script: () => ({
        ...RATE_LIMITED,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      }),
    });
    const err = await failure(openOrUpdatePull(client, REPO, PLAN));
    expect([err.status, err.rateLimitedUntil]).toEqual([403, reset * 1000]);
    const plan = planPullFailure(err, 'github.com', 'ralph/x');
    expect(plan.final).toBe(false);
    expect(plan.hint).toMatch(
      /^GitHub's rate limit for this token is used up until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: the next push after that tries again/,
    );
    expect(plan.hint).not.toContain('permission');
  });

  it('403 with retry-after (a secondary rate limit): wait that many seconds', async () => {
    const { client } = await server({
      script: () => ({
        status: 403,
        headers: { 'retry-after': '30' },
        json: { message: 'You have exceeded a secondary rate limit.' },
      }),
    });
    const before = Date.now();
    const err = await failure(openOrUpdatePull(client, REPO, PLAN));
    expect(err.rateLimitedUntil! - before).toBeGreaterThanOrEqual(30_000);
    expect(err.rateLimitedUntil! - before).toBeLessThan(40_000);
  });

  it("a 403 without rate-limit headers or words is still the token's permissions, and ends the tries", async () => {
    const { client } = await server({ fail: { status: 403, message: 'Resource not accessible by integration' } });
    const err = await failure(openOrUpdatePull(client, REPO, PLAN));
    expect(err.rateLimitedUntil).toBeNull();
    expect(planPullFailure(err, 'github.com', 'ralph/x')).toMatchObject({
      final: true,
      hint: expect.stringContaining('"pull requests: write"'),
    });
  });

  it("pr-merge's wait for CI waits a rate limit out until its reset, then merges on two passing looks", async () => {
    const reset = Math.floor(Date.now() / 1000) + 600;
    const passed = { runs: [{ name: 'test', status: 'completed', conclusion: 'success' }] };
    const { client } = await server({
      ci: () => passed,
      script: (_m, path, call) =>
        call === 1 && path.includes('/check-runs')
          ? { ...RATE_LIMITED, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } }
          : undefined,
    });
    const clock = fakeClock();
    const log: string[] = [];
    const waited = await waitForCi({
      client,
      repo: REPO,
      sha: SHA,
      timeoutMs: 3_600_000,
      signal: new AbortController().signal,
      clock,
      log: (m) => log.push(m),
    });
    expect(waited.outcome).toBe('passed');
    expect(clock.slept[0]).toBeGreaterThanOrEqual(reset * 1000 - Date.now() - 1000);
    expect(log[0]).toMatch(/^GitHub's rate limit: the next look at the checks is in \d+s$/);
  });
});

describe('answers that say nothing are not taken as news', () => {
  it('a 201 whose body is not JSON is an error, not "opened pull request #0"', async () => {
    const { client } = await server({
      script: (method) => (method === 'POST' ? { status: 201, text: '<html>Created</html>' } : undefined),
    });
    const err = await failure(openOrUpdatePull(client, REPO, PLAN));
    expect(err.message).toBe('GitHub answered HTTP 201 with a body that is not JSON: <html>Created</html>');
  });

  it('a pull request list that is not a list is an error: no second pull request is opened', async () => {
    const gh = await server({
      script: (method, path) =>
        method === 'GET' && path.includes('/pulls?') ? { json: { message: 'Moved' } } : undefined,
    });
    const err = await failure(openOrUpdatePull(gh.client, REPO, PLAN));
    expect(err.message).toMatch(/^GitHub's answer to the list of open pull requests of acme:ralph\/x is not a list/);
    expect(gh.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('a merge request that gets no answer', () => {
  it('is read back: merged on GitHub is merged', async () => {
    const hung = await server({
      pulls: [{ number: 7, head: 'ralph/x', base: 'main', title: 't', body: 'b' }],
      script: (method) => (method === 'PUT' ? { hang: true } : undefined),
    });
    hung.pulls[0].merged = true; // GitHub merged it; its answer never came
    expect(await mergePull(hung.client, REPO, 7, SHA)).toEqual({ sha: 'f'.repeat(40) });
  });

  it('not merged when read back: unknown, not "refused"', async () => {
    const hung = await server({
      pulls: [{ number: 7, head: 'ralph/x', base: 'main', title: 't', body: 'b' }],
      script: (method) => (method === 'PUT' ? { hang: true } : undefined),
    });
    const err = await failure(mergePull(hung.client, REPO, 7, SHA));
    expect(err).toBeInstanceOf(MergeUnknown);
    expect(err.message).toMatch(
      /^the merge request got no clear answer \(no answer from 127\.0\.0\.1:\d+ within 0\.5s\); read again, it is not merged yet, but GitHub may still merge it$/,
    );
  });
});
