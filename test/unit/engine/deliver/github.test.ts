import { describe, expect, it } from 'vitest';
import {
  apiBaseUrl,
  envToken,
  parseRemoteUrl,
  planRateLimitWait,
  renderApiComplaint,
} from '../../../../src/engine/deliver/github.js';

describe('parseRemoteUrl', () => {
  it.each([
    ['https://github.com/acme/demo.git', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['https://github.com/acme/demo', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['https://github.com/acme/demo/', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['https://x-access-token:ghs_secret@github.com/acme/demo.git', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['http://GHE.corp.example:8080/team/my.repo.git', { host: 'ghe.corp.example', owner: 'team', repo: 'my.repo' }],
    ['git@github.com:acme/demo.git', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['github.com:acme/demo', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['ssh://git@github.com/acme/demo.git', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['ssh://git@ghe.corp.example:2222/team/tool.git', { host: 'ghe.corp.example', owner: 'team', repo: 'tool' }],
    ['git://github.com/acme/demo.git', { host: 'github.com', owner: 'acme', repo: 'demo' }],
    ['  https://github.com/acme/demo.git\n', { host: 'github.com', owner: 'acme', repo: 'demo' }],
  ])('%s', (url, want) => {
    expect(parseRemoteUrl(url)).toEqual(want);
  });

  it.each([
    ['/srv/git/demo.git'],
    ['../demo.git'],
    ['file:///srv/git/acme/demo.git'],
    ['C:/repos/acme/demo'],
    ['https://gitlab.example/group/sub/demo.git'],
    ['https://github.com/acme'],
    ['git@github.com:acme/../demo.git'],
    ['https://github.com/acme/de mo.git'],
    [''],
  ])('%s is not a GitHub repository', (url) => {
    expect(parseRemoteUrl(url)).toBeNull();
  });
});

describe('apiBaseUrl and envToken', () => {
  it('GITHUB_API_URL wins; else api.github.com, or /api/v3 on another host', () => {
    expect(apiBaseUrl('github.com', {})).toBe('https://api.github.com');
    expect(apiBaseUrl('ghe.corp.example', {})).toBe('https://ghe.corp.example/api/v3');
    expect(apiBaseUrl('github.com', { GITHUB_API_URL: 'http://127.0.0.1:9/' })).toBe('http://127.0.0.1:9');
  });

  it('GH_TOKEN, then GITHUB_TOKEN for github.com; the enterprise variables for other hosts', () => {
    const env = { GH_TOKEN: 'a', GITHUB_TOKEN: 'b', GH_ENTERPRISE_TOKEN: 'c', GITHUB_ENTERPRISE_TOKEN: 'd' };
    expect(envToken('github.com', env)).toBe('a');
    expect(envToken('github.com', { ...env, GH_TOKEN: ' ' })).toBe('b');
    expect(envToken('ghe.corp.example', env)).toBe('c');
    expect(envToken('ghe.corp.example', { GITHUB_ENTERPRISE_TOKEN: 'd' })).toBe('d');
    expect(envToken('ghe.corp.example', { GH_TOKEN: 'a' })).toBeNull();
    expect(envToken('github.com', {})).toBeNull();
  });
});

describe('renderApiComplaint', () => {
  it("GitHub's message and the messages of its errors, with the status, on one line", () => {
    const body = {
      message: 'Validation Failed',
      errors: [{ resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for acme:ralph/x.' }],
    };
    expect(renderApiComplaint({ status: 422, body })).toBe(
      'GitHub answered HTTP 422: Validation Failed: A pull request already exists for acme:ralph/x.',
    );
    expect(renderApiComplaint({ status: 502, body: '<html>\nbad gateway' })).toBe('GitHub answered HTTP 502: <html>');
    expect(renderApiComplaint({ status: 500, body: null })).toBe('GitHub answered HTTP 500');
    expect(renderApiComplaint({ status: 401, body: { message: 'Bad\u001b[31m\ncredentials' } })).toBe(
      'GitHub answered HTTP 401: Bad credentials',
    );
  });
});

describe('planRateLimitWait (GitHub REST docs, "Rate limits": retry-after, then x-ratelimit-reset, else a minute)', () => {
  const NOW = 1_800_000_000_000;
  it.each([
    ['403, retry-after 30', 403, { 'retry-after': '30' }, 'You have exceeded a secondary rate limit', NOW + 30_000],
    [
      '429, retry-after 5 beside a reset',
      429,
      { 'retry-after': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000900' },
      '',
      NOW + 5_000,
    ],
    [
      '403, remaining 0: until the reset',
      403,
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000900' },
      'API rate limit exceeded',
      1_800_000_900_000,
    ],
    [
      '403, remaining 0, a reset already past: now',
      403,
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1700000000' },
      '',
      NOW,
    ],
    ['403, remaining 0 without a reset: a minute', 403, { 'x-ratelimit-remaining': '0' }, '', NOW + 60_000],
    [
      '403, only the words of a secondary limit: a minute',
      403,
      {},
      'GitHub answered HTTP 403: You have exceeded a secondary rate limit',
      NOW + 60_000,
    ],
    ['429, nothing more: a minute', 429, {}, '', NOW + 60_000],
    [
      '403, remaining 4999: a refusal',
      403,
      { 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': '1800000900' },
      'Resource not accessible by integration',
      null,
    ],
    ['404 with retry-after: not a rate limit', 404, { 'retry-after': '30' }, 'Not Found', null],
    ["502 with retry-after: GitHub's trouble, retried as such", 502, { 'retry-after': '30' }, '', null],
  ] as const)('%s', (_what, status, headers, message, until) => {
    expect(planRateLimitWait(status, headers, message, NOW)).toBe(until);
  });
});
