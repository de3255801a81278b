// How the loop ends when the agent is the real Claude Code CLI: the tags are read from the `result` event's
// final message, and the cost from its total_cost_usd (computed by Claude Code from the usage the server reports).
import { describe, expect, it } from 'vitest';
import { git } from '../support/repo.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude } from '../support/model-claude.js';
import { honestWork, installedRepo, ralphWithClaude, readPlan, readState, serve } from '../support/model-loop.js';

describe.skipIf(SKIP_CLAUDE)('ralph.sh --agent claude: how the loop ends', () => {
  it('stops with exit 5 once the reported cost crosses --max-cost, after the iteration that crossed it', async () => {
    requireClaude();
    const repo = await installedRepo();
    const server = await serve(ralphWorker({ decide: honestWork }), repo);

    // One scripted iteration costs a few cents at list price (the server reports ~10k input tokens per request).
    const res = await ralphWithClaude(repo, server, ['--max-cost', '0.001', '5'], { via: 'env' });

    expect(server.errors).toEqual([]);
    expect(res.code, res.stderr).toBe(5);
    expect(git(repo, 'log', '--format=%s', '--grep=^feat:')).toBe('feat: US-001 - Say one');
    expect(readPlan(repo).userStories.map((s) => s.passes)).toEqual([true, false]);
    const state = readState(repo);
    expect(state.costUsd).toBeGreaterThan(0.001);
    expect(state.exitCode).toBe(5);
  });

  it('exits 3 when the final message has STUCK on a line of its own, not when a tool merely printed it', async () => {
    requireClaude();
    const repo = await installedRepo();
    // Iteration 1: a tool prints the tag on its own line (so it is in the stream-json events), the final message
    // does not have it. Iteration 2: the final message has it.
    const server = await serve(({ turn, call }) => {
      if (call === 1)
        return {
          blocks: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: "printf '<promise>STUCK</promise>\\n'", description: 'Print a tag' },
            },
          ],
        };
      if (call === 2) return { blocks: [{ type: 'text', text: 'Still looking into one.txt.' }] };
      return {
        blocks: [{ type: 'text', text: `turn ${turn}: one.txt cannot be written here.\n<promise>STUCK</promise>` }],
      };
    }, repo);

    const res = await ralphWithClaude(repo, server, ['3']);

    expect(server.errors).toEqual([]);
    expect(server.mainRequests()[1].messages!.at(-1)!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', content: '<promise>STUCK</promise>' }),
    ]);
    expect(res.code, res.stderr).toBe(3);
    expect(readState(repo).iteration).toBe(2);
  });
  it('repeats an iteration, without counting it, when Claude Code reports an API error (HTTP 529 overloaded)', async () => {
    requireClaude();
    const repo = await installedRepo();
    const worker = ralphWorker({ decide: honestWork });
    const server = await serve(
      (ctx) =>
        ctx.call === 1 ? { apiError: { status: 529, type: 'overloaded_error', message: 'Overloaded' } } : worker(ctx),
      repo,
    );

    const res = await ralphWithClaude(repo, server, ['1'], { env: { RALPH_RETRY_MS: '10' } });

    expect(server.errors).toEqual([]);
    expect(res.stderr).toMatch(/529.*retry|retry.*529/i);
    // The one counted iteration still did US-001: the failed run was repeated, not spent.
    expect(res.code, res.stderr).toBe(1);
    expect(readPlan(repo).userStories.map((s) => s.passes)).toEqual([true, false]);
    expect(readState(repo).iteration).toBe(1);
  });
});
