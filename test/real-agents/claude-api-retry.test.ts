// The real Claude Code CLI waiting out a passing 429 by itself (CLAUDE_CODE_MAX_RETRIES > 0): the API, a proxy in
// front of the scripted model server, answers 429 with retry-after for the first second. Claude Code then prints
// `api_retry` events on its stream and tries again; the loop shows each one as a live line instead of going
// silent, and the iteration finishes normally. Also pins the event's fields (docs/agents.md).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { jsonEvents } from '../support/loop-repo.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude } from '../support/model-claude.js';
import { honestWork, installedRepo, onlyRunDir, ralphWithClaude, serve } from '../support/model-loop.js';
import { startLimitProxy } from '../support/limit-proxy.js';

describe.skipIf(SKIP_CLAUDE)('ralph.sh --agent claude while Claude Code retries a 429 itself', () => {
  it('shows each api_retry event as a live line and finishes the iteration', async () => {
    requireClaude();
    const repo = await installedRepo();
    const server = await serve(ralphWorker({ decide: honestWork }), repo);
    const proxy = await startLimitProxy(server.url, 1000, { retryAfterSeconds: 1 });

    const res = await ralphWithClaude(repo, { ...server, url: proxy.url }, ['--json', '1'], {
      env: { CLAUDE_CODE_MAX_RETRIES: '3' },
    });

    expect(server.errors).toEqual([]);
    expect(proxy.rejected).toBeGreaterThan(0);
    expect(proxy.passed).toBeGreaterThan(0);
    const raw = readFileSync(path.join(onlyRunDir(repo), 'iteration-1.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"api_retry"'))
      .map((l) => JSON.parse(l));
    expect(raw.length, res.stdout).toBeGreaterThan(0);
    expect(raw[0]).toMatchObject({
      type: 'system',
      subtype: 'api_retry',
      attempt: 1,
      max_retries: 3,
      error_status: 429,
      error: 'rate_limit',
    });
    expect(typeof raw[0].retry_delay_ms).toBe('number');
    const lines = jsonEvents(res.stdout)
      .filter((e) => e.type === 'tool')
      .map((e) => String(e.text));
    const retries = lines.filter((t) => t.startsWith('Claude Code is retrying'));
    expect(retries, res.stdout).toHaveLength(raw.length);
    expect(retries[0]).toMatch(
      /^Claude Code is retrying after a rate limit \(429\): attempt 1 of 3, waiting \d+(ms|s)$/,
    );
    expect(jsonEvents(res.stdout).find((e) => e.type === 'agent-exit')).toMatchObject({ iteration: 1, exitCode: 0 });
  });
});
