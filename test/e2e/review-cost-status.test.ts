// The reviewer's runs are paid for: --max-cost counts what a Claude reviewer reports, state.json and the summary name
// its part, and `ralphkit status` shows per story what the reviewer answered (SPEC §7, §11).
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, runCli, testdir } from '../support/repo.js';
import { ralphReviewed, reviewFixture, reviewLines, reviewPlan, reviewStory } from '../support/review.js';
import type { LoopState } from '../../src/engine/store/state-types.js';
import { keyEnv } from '../support/verdict-note.js';
import type { LoopSummary } from '../../src/engine/store/summaries.js';

const REVIEWER = path.join(FIXTURES, 'review', 'reviewer.mjs');
const claudeReviewer = (cost?: string): NodeJS.ProcessEnv => ({
  REVIEW_MODE: 'claude-judge',
  RALPH_CLAUDE_BIN: REVIEWER,
  ...(cost ? { REVIEW_COST: cost } : {}),
});
const state = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8')) as LoopState;

describe("the reviewer's cost", () => {
  it('a Claude reviewer reporting $0.30 a run pushes the loop over --max-cost 0.5: exit 5 after its second run, with its part named', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1), reviewStory('US-2', 2)) });
    const r = await ralphReviewed(dir, ['--review-agent', 'claude', '--max-cost', '0.5', '6'], claudeReviewer('0.3'));
    expect(r.code, r.stderr).toBe(5);
    // Iteration 1: REVISE ($0.30, under the limit); iteration 2: SHIP ($0.60): the limit ends the loop before US-2.
    expect(reviewLines(dir).map((l) => l.verdict)).toEqual(['revise', 'ship']);
    expect(r.stderr).toContain('ralph: cost limit reached: $0.60 (reviewer $0.60) of $0.5 (exit 5)');
    expect(r.stderr).toContain("the reviewer's run cost $0.30 · cost so far $0.60 (reviewer $0.60)");
    expect(r.stderr).toContain(
      "--max-cost: an --agent-cmd agent reports no cost, so only the reviewer's runs count against this limit",
    );
    expect(state(dir)).toMatchObject({ status: 'budget', exitCode: 5, iteration: 2, costUsd: 0.6, reviewCostUsd: 0.6 });

    const status = await runCli(['status', '--cwd', dir]);
    expect(status.code, status.stderr).toBe(0);
    const row = status.stdout.split('\n').find((l) => l.startsWith('e2e '))!;
    expect(row).toContain('$0.60 (reviewer $0.60)');
    const json = JSON.parse((await runCli(['status', '--json', '--cwd', dir])).stdout) as { loops: LoopSummary[] };
    expect(json.loops[0]).toMatchObject({ costUsd: 0.6, reviewCostUsd: 0.6 });
  });

  it('a transient reviewer failure retried into a priced answer is not an unpriced run: only the answer used counts', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1)) });
    const env = {
      ...claudeReviewer('0.3'),
      REVIEW_MODE: 'flaky-claude',
      FLAKY_MARKER: path.join(testdir(), 'flaky'),
      RALPH_RETRY_MS: '1',
    };
    const r = await ralphReviewed(dir, ['--review-agent', 'claude', '3'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('US-1: the reviewer failed transiently (the agent exited 1 with no output); retrying');
    expect(reviewLines(dir).map((l) => l.verdict)).toEqual(['revise', 'ship']);
    expect(state(dir)).toMatchObject({ reviewCostUsd: 0.6 });
    expect(state(dir).reviewRunsUnpriced ?? 0).toBe(0);
  });

  it('with no iteration cap, a reviewer that reports no cost refuses the start, as an agent that reports none does', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1)) });
    const head = git(dir, 'rev-parse', 'HEAD');
    const agent = path.join(FIXTURES, 'agents', 'claude-stream.mjs');
    const r = await run(
      path.join(dir, 'ralph/ralph.sh'),
      ['--agent', 'claude', '--review-cmd', reviewFixture('reviewer.mjs'), '--max-cost', '5', '--pause', '0', '0'],
      { cwd: dir, env: { RALPH_CLAUDE_BIN: agent, IS_SANDBOX: '1' } },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--max-cost cannot bound it: a --review-cmd reviewer reports no cost');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
  });
});

describe('status shows the reviews', () => {
  it('per story: shipped by whom at which commit, and how often it was revised', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1), reviewStory('US-2', 2)) });
    const r = await ralphReviewed(
      dir,
      ['--review-cmd', reviewFixture('reviewer.mjs'), '--review-model', 'judge-1', '3'],
      {},
    );
    expect(r.code, r.stderr).toBe(1); // US-1: REVISE, SHIP; US-2: REVISE, then the iterations run out
    const shipped = reviewLines(dir).find((l) => l.verdict === 'ship')!.commit!;
    const status = await runCli(['status', '--cwd', dir]);
    expect(status.code, status.stderr).toBe(0);
    // The loop ended without a final gate, so no sealed record names the SHIP: a report.
    expect(status.stdout).toContain(
      `└ review US-1: shipped by node reviewer.mjs (judge-1) at ${shipped.slice(0, 7)} (reported); revised 1×`,
    );
    expect(status.stdout).toMatch(
      /└ review US-2: changes asked by node reviewer\.mjs \(judge-1\) at [0-9a-f]{7}; revised 1×/,
    );
    const json = JSON.parse((await runCli(['status', '--json', '--cwd', dir])).stdout) as { loops: LoopSummary[] };
    expect(json.loops[0].reviews['US-1']).toMatchObject({
      verdict: 'ship',
      reviewer: reviewFixture('reviewer.mjs'),
      model: 'judge-1',
      commit: shipped,
      revised: 1,
      invalid: 0,
    });
    expect(json.loops[0].reviews['US-2']).toMatchObject({ verdict: 'revise', revised: 1 });
  });

  it("a resumed loop's final gate seals the SHIPs of the run before the resume too", async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1), reviewStory('US-2', 2)) });
    const env = keyEnv();
    const first = await ralphReviewed(dir, ['--review-cmd', reviewFixture('reviewer.mjs'), '3'], env);
    expect(first.code, first.stderr).toBe(1); // US-1 shipped; US-2 revised, then the iterations ran out: no final gate
    // The SHIP is kept for the resume in the loop's sealed ref.
    expect(git(dir, 'rev-parse', '--verify', 'refs/ralphkit/loops/e2e/shipped')).toMatch(/^[0-9a-f]{40,64}$/);
    const resumed = await run(path.join(dir, 'ralph/ralph.sh'), ['--resume', 'e2e', '8'], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const ships = reviewLines(dir).filter((l) => l.verdict === 'ship');
    expect(ships.map((l) => l.story)).toEqual(['US-1', 'US-2']);
    const status = await runCli(['status', '--cwd', dir], { env: { ...process.env, ...env } });
    for (const l of ships)
      expect(status.stdout).toContain(
        `└ review ${l.story}: shipped by node reviewer.mjs at ${l.commit!.slice(0, 7)}; revised 1×\n`,
      );
    expect(status.stdout).not.toContain('(reported)');
  });

  it("the final gate seals the reviewer's SHIP; a SHIP line appended to the ledger afterwards (another reviewer, model or commit) is shown as reported", async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1)) });
    const env = keyEnv();
    const r = await ralphReviewed(dir, ['--review-cmd', reviewFixture('reviewer.mjs'), '3'], env);
    expect(r.code, r.stderr).toBe(0);
    const shipped = reviewLines(dir).find((l) => l.verdict === 'ship')!;
    const status = await runCli(['status', '--cwd', dir], { env: { ...process.env, ...env } });
    expect(status.stdout).toContain(
      `└ review US-1: shipped by node reviewer.mjs at ${shipped.commit!.slice(0, 7)}; revised 1×\n`,
    );
    // A later line that keeps the sealed commit but names another reviewer and model is not the sealed SHIP.
    const renamed = {
      ...shipped,
      time: new Date(Date.now() + 30_000).toISOString(),
      reviewer: 'claude',
      model: 'opus',
    };
    appendFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), `${JSON.stringify(renamed)}\n`);
    const mid = await runCli(['status', '--cwd', dir], { env: { ...process.env, ...env } });
    expect(mid.stdout).toContain(
      `└ review US-1: shipped by claude (opus) at ${shipped.commit!.slice(0, 7)} (reported); revised 1×`,
    );
    // What an agent without --sandbox could write: a later SHIP by another reviewer at another commit.
    const forged = {
      ...shipped,
      time: new Date(Date.now() + 60_000).toISOString(),
      reviewer: 'claude',
      model: 'opus',
      commit: git(dir, 'rev-parse', 'HEAD~2'),
    };
    appendFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), `${JSON.stringify(forged)}\n`);
    const after = await runCli(['status', '--cwd', dir], { env: { ...process.env, ...env } });
    expect(after.stdout).toContain(
      `└ review US-1: shipped by claude (opus) at ${forged.commit.slice(0, 7)} (reported); revised 1×`,
    );
  });
});
