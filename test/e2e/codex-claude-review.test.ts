// Cross-model review with real clients (SPEC §11): the installed loop runs the real Codex CLI as the implementer,
// against the scripted Responses API server, and the real Claude Code CLI as the reviewer, against the scripted
// Messages API server. Both "models" decide only from what their CLI sent them: Codex fixes the work only if the
// reviewer's reasons reached it (through the plan it reads), Claude Code ships only a diff that meets the criterion.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { git, run } from '../support/repo.js';
import { requestText, type Scenario } from '../support/model-server.js';
import { renderStoryCommand, type PlanStory } from '../support/model-scenarios.js';
import { CLAUDE_BIN, SKIP_CLAUDE, claudeEnv, requireClaude } from '../support/model-claude.js';
import { CODEX_BIN, SKIP_CODEX, codexEnv, requireCodex } from '../support/model-codex.js';
import { responsesRequestText, startResponsesServer, type ResponsesScenario } from '../support/responses-server.js';
import { readLedger, readPlan, serve } from '../support/model-loop.js';

const PLAN = {
  project: 'Greeter',
  branchName: 'ralph/greeter',
  userStories: [
    {
      id: 'US-001',
      title: 'Greet the world',
      description: 'As a visitor I am greeted.',
      acceptanceCriteria: ['hello.txt starts with hello', 'hello.txt greets the world: it says hello, world'],
      priority: 1,
      passes: false,
      notes: '',
      // Only the first criterion is checked by a command: the second is the reviewer's to judge.
      checks: ['grep -q ^hello hello.txt'],
    },
  ],
};

/** The reviewer's reason; the implementer looks for its last words in what Codex read, the way a model would. */
const REASON = '- criterion "hello.txt greets the world": hello.txt says only hello; it must say hello, world';
const FIX_HINT = 'it must say hello, world';

/**
 * Codex's model: first it reads progress.txt and the plan (where a rejection leaves its reasons), then writes hello.txt,
 * claims the story, runs its check and commits, then ends with COMPLETE when no story is open on disk.
 */
const implementer: ResponsesScenario = (ctx) => {
  const plan = JSON.parse(readFileSync(path.join(ctx.repo!, 'ralph/prd.json'), 'utf8')) as { userStories: PlanStory[] };
  const story = plan.userStories[0];
  if (ctx.turn === 0) return { items: [{ type: 'message', text: 'Reading the plan first.' }, { type: 'exec', cmd: 'cat ralph/progress.txt ralph/prd.json' }] };
  if (ctx.turn === 1) {
    const told = ctx.toolOutputs[0].output.includes(FIX_HINT);
    const action = { files: { 'hello.txt': told ? 'hello, world\n' : 'hello\n' }, claim: true, runChecks: true, commit: true, progress: `## ${story.id}\n- wrote hello.txt` };
    return { items: [{ type: 'exec', cmd: renderStoryCommand(plan, story, action, 'ralph/prd.json') }] };
  }
  const done = plan.userStories.every((s) => s.passes) ? '\n<promise>COMPLETE</promise>' : '';
  return { items: [{ type: 'message', text: `Committed ${story.id}.${done}` }] };
};

/** Claude Code's model as the reviewer: SHIP a diff that greets the world, else REVISE with the reason. */
const reviewer: Scenario = (ctx) => {
  const ship = requestText(ctx.body).includes('+hello, world');
  const text = ship ? 'Every criterion is met.\n<promise>SHIP</promise>' : `One criterion is not met.\n<promise>REVISE</promise>\n${REASON}`;
  return { blocks: [{ type: 'text', text }] };
};

describe.skipIf(SKIP_CODEX || SKIP_CLAUDE)('Codex implements, Claude Code reviews (real CLIs, scripted models)', () => {
  it('REVISE sends the reasons to the next Codex run, which fixes the work; the second review SHIPs; exit 0', { timeout: 150_000 }, async () => {
    requireCodex();
    requireClaude();
    const repo = installedRepo({ skills: false, plan: PLAN });
    const anthropic = await serve(reviewer, repo);
    const responses = await startResponsesServer({ scenario: implementer, repo });
    onTestFinished(() => responses.close());
    const env = codexEnv(responses, claudeEnv(anthropic, { RALPH_CODEX_BIN: CODEX_BIN, RALPH_CLAUDE_BIN: CLAUDE_BIN }));
    const args = ['--agent', 'codex', '--review-agent', 'claude', '--review-model', 'claude-reviewer-test', '--pause', '0', '--iteration-timeout', '60s', '4'];

    const r = await run(path.join(repo, 'ralph/ralph.sh'), args, { cwd: repo, env, timeoutMs: 140_000 });

    expect([responses.errors, anthropic.errors]).toEqual([[], []]);
    expect(r.code, r.stderr).toBe(0);
    // Two Codex runs (a run's first request holds no tool call), each handed ralph/prompt.md; each ran real commands.
    const codexRuns = responses.mainRequests().filter((b) => !b.input!.some((i) => i.type === 'function_call'));
    expect(codexRuns).toHaveLength(2);
    expect(responsesRequestText(codexRuns[0])).toContain('# Your task: one story from the plan');
    expect(r.stderr).toContain("· Shell: /bin/bash -c 'cat ralph/progress.txt ralph/prd.json'");
    // The first run never saw the reason; the second read it in progress.txt and the plan's notes, and sent it to its model.
    const sawReason = responses.mainRequests().map((b) => responsesRequestText(b).includes(FIX_HINT));
    expect(sawReason.indexOf(true)).toBeGreaterThan(responses.mainRequests().indexOf(codexRuns[1]));

    // Claude Code reviewed twice, with the model asked for: first the bare hello (REVISE), then the fix (SHIP).
    const reviews = anthropic.mainRequests();
    expect(reviews.map((b) => requestText(b).includes('+hello, world'))).toEqual([false, true]);
    expect(reviews.every((b) => b.model === 'claude-reviewer-test')).toBe(true);
    expect(requestText(reviews[0])).toContain('# Your task: review one story before it counts');

    const ledger = readLedger(repo).filter((l) => l.kind === 'review');
    const fixed = git(repo, 'log', '-1', '--format=%H', '--grep=^feat: US-001');
    expect(ledger.map((l) => l.verdict)).toEqual(['revise', 'ship']);
    expect(ledger[0].reason).toContain('it must say hello, world');
    expect(ledger[1]).toMatchObject({ story: 'US-001', reviewer: 'claude', model: 'claude-reviewer-test', commit: fixed });
    expect(git(repo, 'show', `${fixed}:hello.txt`)).toBe('hello, world');
    expect(readPlan(repo).userStories[0]).toMatchObject({ passes: true });
    expect(readFileSync(path.join(repo, 'ralph/progress.txt'), 'utf8')).toContain(REASON);
  });
});
