// A subscription limit hit by the real Claude Code CLI, driven by the installed loop: the API (a proxy in front of
// the scripted model server) answers 429 with the unified rate-limit headers until a reset a few seconds ahead.
// Claude Code reports it its own way (a rate_limit_event and "You've hit your 5-hour limit · resets ..."); the
// loop must wait for that reset, repeat the iteration without spending it, and finish the plan.
import { describe, expect, it } from 'vitest';
import { git, run } from '../support/repo.js';
import { jsonEvents } from '../support/loop-repo.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { CLAUDE_BIN, SKIP_CLAUDE, claudeEnv, requireClaude } from '../support/model-claude.js';
import { honestWork, installedRepo, readPlan, readState, serve } from '../support/model-loop.js';
import { startLimitProxy } from '../support/limit-proxy.js';
import { detectRateLimit } from '../../src/engine/budget/ratelimit.js';

// The tests wait for the processes to end, not for a time: these bounds only stop a hung run, so they are far
// above what three Claude Code starts take on a loaded machine (about 35 s seen on a shared two-core one).
const RUN_BOUND_MS = 240_000;
const TEST_BOUND_MS = RUN_BOUND_MS + 30_000;

describe.skipIf(SKIP_CLAUDE)('ralph.sh --agent claude hitting the subscription limit', () => {
  it(
    'waits for the announced reset, repeats iteration 1 uncounted, and completes two stories in two iterations',
    async () => {
      requireClaude();
      const repo = await installedRepo();
      const server = await serve(ralphWorker({ decide: honestWork }), repo);
      const proxy = await startLimitProxy(server.url, 3000);
      // A subscriber's login (OAuth), not an API key: only then does Claude Code read the unified limit headers.
      const env = claudeEnv(
        { ...server, url: proxy.url },
        {
          RALPH_CLAUDE_BIN: CLAUDE_BIN,
          ANTHROPIC_API_KEY: undefined,
          CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-subscriber',
          RALPH_RETRY_MS: '10',
        },
      );

      const res = await run(
        'bash',
        ['ralph/ralph.sh', '--agent', 'claude', '--pause', '0', '--iteration-timeout', '3m', '--json', '2'],
        { cwd: repo, env, timeoutMs: RUN_BOUND_MS },
      );

      expect(server.errors).toEqual([]);
      expect(res.code, res.stderr).toBe(0);
      expect(proxy.rejected).toBeGreaterThan(0);
      const events = jsonEvents(res.stdout);
      const limit = events.find((e) => e.type === 'rate-limit');
      expect(limit, res.stdout).toMatchObject({ iteration: 1, resetAt: new Date(proxy.resetAt! * 1000).toISOString() });
      // The repeat happens inside iteration 1: two iterations for two stories, within the limit of 2.
      expect(events.filter((e) => e.type === 'iteration-start').map((e) => e.iteration)).toEqual([1, 2]);
      expect(events.filter((e) => e.type === 'agent-exit').map((e) => e.iteration)).toEqual([1, 2]);
      expect(readPlan(repo).userStories.map((s) => s.passes)).toEqual([true, true]);
      expect(git(repo, 'log', '--format=%s', '--grep=^feat:').split('\n')).toEqual([
        'feat: US-002 - Say two',
        'feat: US-001 - Say one',
      ]);
      expect(readState(repo)).toMatchObject({ iteration: 2, exitCode: 0 });
    },
    TEST_BOUND_MS,
  );
});

describe.skipIf(SKIP_CLAUDE)("Claude Code's own limit message", () => {
  it(
    'is recognised by detectRateLimit with the reset it names',
    async () => {
      requireClaude();
      const repo = await installedRepo();
      const server = await serve(ralphWorker({ decide: honestWork }), repo);
      const proxy = await startLimitProxy(server.url, 2 * 3_600_000);
      const env = claudeEnv(
        { ...server, url: proxy.url },
        { ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-subscriber', TZ: 'UTC' },
      );

      const res = await run(
        CLAUDE_BIN,
        ['--print', '--dangerously-skip-permissions', '--output-format', 'stream-json', '--verbose'],
        { cwd: repo, env, input: 'Say hi.', timeoutMs: RUN_BOUND_MS },
      );

      const result = jsonEvents(
        res.stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .join('\n'),
      ).find((e) => e.type === 'result');
      expect(result, res.stdout).toMatchObject({ is_error: true });
      const hit = detectRateLimit(String(result!.result), new Date(), { timeZone: 'UTC' });
      expect(hit, String(result!.result)).not.toBeNull();
      // The message shows the reset to the minute.
      expect(Math.floor(hit!.resetAt!.getTime() / 60_000)).toBe(Math.floor((proxy.resetAt! * 1000) / 60_000));
    },
    TEST_BOUND_MS,
  );
});
