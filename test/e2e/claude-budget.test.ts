// --max-cost with the real Claude Code CLI: the cost the loop adds up is the one Claude Code reports itself
// (total_cost_usd of its result event), computed from the usage the scripted server returns.
import { describe, expect, it } from 'vitest';
import { git } from '../support/repo.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude } from '../support/model-claude.js';
import { honestWork, installedRepo, ralphWithClaude, readPlan, readState, serve } from '../support/model-loop.js';

describe.skipIf(SKIP_CLAUDE)('ralph.sh --agent claude --max-cost', () => {
  it('stops with exit 5 once the reported cost crosses the budget, after the iteration that crossed it', async () => {
    requireClaude();
    const repo = await installedRepo();
    const server = await serve(ralphWorker({ decide: honestWork }), repo);

    // One scripted iteration costs a few cents at list price (the server reports ~10k input tokens per request).
    const res = await ralphWithClaude(repo, server, ['--max-cost', '0.001', '5'], 'env');

    expect(server.errors).toEqual([]);
    expect(res.code, res.stderr).toBe(5);
    expect(git(repo, 'log', '--format=%s', '--grep=^feat:')).toBe('feat: US-001 - Say one');
    expect(readPlan(repo).userStories.map((s) => s.passes)).toEqual([true, false]);
    const state = readState(repo);
    expect(state.costUsd).toBeGreaterThan(0.001);
    expect(state.exitCode).toBe(5);
  });
});
