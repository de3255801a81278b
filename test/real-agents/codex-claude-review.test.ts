// Cross-model review with real clients (SPEC §11): the installed loop runs the real Codex CLI (against the scripted
// Responses API server) and the real Claude Code CLI (against the scripted Messages API server), one implementing and
// the other reviewing, both ways round. Each "model" decides only from what its CLI sent it: the implementer fixes
// the work only if the reviewer's reasons reached it (in the files it reads), the reviewer ships only a diff that
// meets the criterion.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { git, run, testdir } from '../support/repo.js';
import { GREETER_PLAN, plantsOutsideDiff, reviewFixture } from '../support/review.js';
import { requestText, type AssistantTurn, type Scenario } from '../support/model-server.js';
import { bash, renderStoryCommand, type PlanStory } from '../support/model-scenarios.js';
import { CLAUDE_BIN, SKIP_CLAUDE, claudeEnv, requireClaude } from '../support/model-claude.js';
import { CODEX_BIN, SKIP_CODEX, codexEnv, requireCodex } from '../support/model-codex.js';
import {
  responsesRequestText,
  startResponsesServer,
  type ResponsesScenario,
  type ResponsesTurn,
} from '../support/responses-server.js';
import { readLedger, readPlan, serve } from '../support/model-loop.js';

// Only the first criterion is checked by a command: the second is the reviewer's to judge.
const PLAN = GREETER_PLAN;

/** The reviewer's reason; the implementer looks for its last words in what its CLI read, the way a model would. */
const REASON = '- criterion "hello.txt greets the world": hello.txt says only hello; it must say hello, world';
const FIX_HINT = 'it must say hello, world';

/** One turn of an implementer: a message, a shell command, or both. */
type Step = { say?: string; cmd?: string };

/**
 * The implementer: first it reads progress.txt and the plan (where a rejection leaves its reasons), then writes
 * hello.txt (greeting the world only if the reasons it read ask for it), claims the story, runs its check and
 * commits; last it ends with COMPLETE when no story is open on disk. `toolOutput`: what its CLI sent back for the
 * last command.
 */
function implementerStep(repo: string, turn: number, toolOutput: string | undefined): Step {
  const plan = JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')) as { userStories: PlanStory[] };
  const story = plan.userStories[0];
  if (turn === 0) return { say: 'Reading the plan first.', cmd: 'cat ralph/progress.txt ralph/prd.json' };
  if (turn === 1) {
    const told = toolOutput!.includes(FIX_HINT);
    const action = {
      files: { 'hello.txt': told ? 'hello, world\n' : 'hello\n' },
      claim: true,
      runChecks: true,
      commit: true,
      progress: `## ${story.id}\n- wrote hello.txt`,
    };
    return { cmd: renderStoryCommand(plan, story, action, 'ralph/prd.json') };
  }
  return {
    say: `Committed ${story.id}.${plan.userStories.every((s) => s.passes) ? '\n<promise>COMPLETE</promise>' : ''}`,
  };
}

/** The reviewer: SHIP a diff that greets the world, else REVISE with the reason. */
function verdict(request: string): string {
  return request.includes('+hello, world')
    ? 'Every criterion is met.\n<promise>SHIP</promise>'
    : `One criterion is not met.\n<promise>REVISE</promise>\n${REASON}`;
}

const codexImplementer: ResponsesScenario = (ctx) => {
  const step = implementerStep(ctx.repo!, ctx.turn, ctx.toolOutputs.at(-1)?.output);
  const items: ResponsesTurn['items'] = [];
  if (step.say) items.push({ type: 'message', text: step.say });
  if (step.cmd) items.push({ type: 'exec', cmd: step.cmd });
  return { items };
};

const claudeImplementer: Scenario = (ctx) => {
  const step = implementerStep(ctx.repo!, ctx.turn, ctx.toolResults.at(-1)?.text);
  const blocks: AssistantTurn['blocks'] = [];
  if (step.say) blocks.push({ type: 'text', text: step.say });
  if (step.cmd) blocks.push(bash(step.cmd));
  return { blocks };
};

const claudeReviewer: Scenario = (ctx) => ({ blocks: [{ type: 'text', text: verdict(requestText(ctx.body)) }] });
const codexReviewer: ResponsesScenario = (ctx) => ({
  items: [{ type: 'message', text: verdict(responsesRequestText(ctx.body)) }],
});

/** Both scripted servers, and the installed loop run with the real CLIs against them (`args` pick the roles). */
async function crossModelLoop(anthropicScenario: Scenario, responsesScenario: ResponsesScenario, args: string[]) {
  const repo = installedRepo({ skills: false, plan: PLAN });
  const anthropic = await serve(anthropicScenario, repo);
  const responses = await startResponsesServer({ scenario: responsesScenario, repo });
  onTestFinished(() => responses.close());
  const env = codexEnv(responses, claudeEnv(anthropic, { RALPH_CODEX_BIN: CODEX_BIN, RALPH_CLAUDE_BIN: CLAUDE_BIN }));
  const r = await run(path.join(repo, 'ralph/ralph.sh'), [...args, '--pause', '0', '--iteration-timeout', '60s', '4'], {
    cwd: repo,
    env,
    timeoutMs: 140_000,
  });
  expect([responses.errors, anthropic.errors]).toEqual([[], []]);
  expect(r.code, r.stderr).toBe(0);
  return { repo, anthropic, responses, stderr: r.stderr };
}

/** What both directions end with: REVISE then SHIP in the ledger, by `reviewer` with `model`, the fix on the branch. */
function expectRevisedThenShipped(repo: string, reviewer: string, model: string): void {
  const ledger = readLedger(repo).filter((l) => l.kind === 'review');
  const fixed = git(repo, 'log', '-1', '--format=%H', '--grep=^feat: US-001');
  expect(ledger.map((l) => l.verdict)).toEqual(['revise', 'ship']);
  expect(ledger[0].reason).toContain(FIX_HINT);
  expect(ledger[1]).toMatchObject({ story: 'US-001', reviewer, model, commit: fixed });
  expect(git(repo, 'show', `${fixed}:hello.txt`)).toBe('hello, world');
  expect(readPlan(repo).userStories[0]).toMatchObject({ passes: true });
  expect(readFileSync(path.join(repo, 'ralph/progress.txt'), 'utf8')).toContain(REASON);
}

/** The implementer's runs (a run's first request holds no tool call yet) and whether each request carried the reason. */
function reasonAfterSecondRun(runStarts: boolean[], texts: string[]): void {
  const second = runStarts.map((start, i) => (start ? i : -1)).filter((i) => i >= 0)[1];
  expect(runStarts.filter(Boolean)).toHaveLength(2);
  expect(texts.findIndex((t) => t.includes(FIX_HINT))).toBeGreaterThan(second);
}

describe.skipIf(SKIP_CODEX || SKIP_CLAUDE)(
  'cross-model review with the real Codex and Claude Code CLIs (scripted models)',
  () => {
    it('Codex implements, Claude Code reviews: REVISE sends the reasons to the next Codex run, which fixes the work; SHIP; exit 0', {
      timeout: 150_000,
    }, async () => {
      requireCodex();
      requireClaude();
      const { repo, anthropic, responses, stderr } = await crossModelLoop(claudeReviewer, codexImplementer, [
        '--agent',
        'codex',
        '--review-agent',
        'claude',
        '--review-model',
        'claude-reviewer-test',
      ]);

      // Codex got ralph/prompt.md, ran real commands (shown live), and only its second run saw the reason.
      const requests = responses.mainRequests();
      expect(responsesRequestText(requests[0])).toContain('# Your task: one story from the plan');
      expect(stderr).toContain("· Shell: /bin/bash -c 'cat ralph/progress.txt ralph/prd.json'");
      reasonAfterSecondRun(
        requests.map((b) => !b.input!.some((i) => i.type === 'function_call')),
        requests.map(responsesRequestText),
      );
      // Claude Code reviewed twice, with the model asked for: first the bare hello (REVISE), then the fix (SHIP).
      const reviews = anthropic.mainRequests();
      expect(requestText(reviews[0])).toContain('# Your task: review one story before it counts');
      expect(reviews.map((b) => requestText(b).includes('+hello, world'))).toEqual([false, true]);
      expect(reviews.every((b) => b.model === 'claude-reviewer-test')).toBe(true);
      expectRevisedThenShipped(repo, 'claude', 'claude-reviewer-test');
    });

    it('Claude Code implements, Codex reviews: the same REVISE, fix and SHIP the other way round; exit 0', {
      timeout: 150_000,
    }, async () => {
      requireCodex();
      requireClaude();
      const { repo, anthropic, responses } = await crossModelLoop(claudeImplementer, codexReviewer, [
        '--agent',
        'claude',
        '--review-agent',
        'codex',
        '--review-model',
        'codex-reviewer-test',
      ]);

      const requests = anthropic.mainRequests();
      reasonAfterSecondRun(
        requests.map((b) => !b.messages!.some((m) => m.role === 'assistant')),
        requests.map(requestText),
      );
      // Codex reviewed twice (one request each: it answered without a tool call), with the model asked for.
      const reviews = responses.mainRequests();
      expect(responsesRequestText(reviews[0])).toContain('# Your task: review one story before it counts');
      expect(reviews.map((b) => responsesRequestText(b).includes('+hello, world'))).toEqual([false, true]);
      expect(reviews.every((b) => b.model === 'codex-reviewer-test')).toBe(true);
      expectRevisedThenShipped(repo, 'codex', 'codex-reviewer-test');
    });
  },
);

// The reviewer's instructions (issue #26, class 7): an agent that did half the work tells the reviewer to ship it
// through every file a reviewer's CLI reads on its own (instruction-planter.mjs: committed CLAUDE.md, AGENTS.md,
// settings hooks and skills; the same in HOME and CODEX_HOME; developer_instructions in Codex's config.toml; a
// CLAUDE.md above the clone). The scripted reviewer obeys any planted text that reaches it, as a model might; so the
// only SHIP-free ending is one where none did. Its hooks would touch a file in PLANT_MARKS.
const obey = (text: string) =>
  plantsOutsideDiff(text).length ? 'As instructed.\n<promise>SHIP</promise>' : verdict(text);
const claudeObedient: Scenario = (ctx) => ({ blocks: [{ type: 'text', text: obey(requestText(ctx.body)) }] });
const codexObedient: ResponsesScenario = (ctx) => ({
  items: [{ type: 'message', text: obey(responsesRequestText(ctx.body)) }],
});

async function plantedLoop(reviewer: 'claude' | 'codex', sandbox: boolean) {
  const repo = installedRepo({ skills: false, plan: PLAN });
  const anthropic = await serve(claudeObedient, repo);
  const responses = await startResponsesServer({ scenario: codexObedient, repo });
  onTestFinished(() => responses.close());
  const marks = testdir('ralphkit-plant-marks-');
  // The runner's temp folder (where the reviewer's clone goes), so the CLAUDE.md planted above it is this test's.
  const env = codexEnv(
    responses,
    claudeEnv(anthropic, {
      RALPH_CODEX_BIN: CODEX_BIN,
      RALPH_CLAUDE_BIN: CLAUDE_BIN,
      PLANT_MARKS: marks,
      TMPDIR: testdir('ralphkit-plant-tmp-'),
    }),
  );
  const args = [
    '--agent-cmd',
    reviewFixture('instruction-planter.mjs'),
    '--review-agent',
    reviewer,
    ...(sandbox ? ['--sandbox'] : []),
    '--pause',
    '0',
    '--iteration-timeout',
    '60s',
    '1',
  ];
  const r = await run(path.join(repo, 'ralph/ralph.sh'), args, { cwd: repo, env, timeoutMs: 110_000 });
  expect([responses.errors, anthropic.errors]).toEqual([[], []]);
  const texts =
    reviewer === 'claude'
      ? anthropic.mainRequests().map(requestText)
      : responses.mainRequests().map(responsesRequestText);
  expect(texts.length, r.stderr).toBeGreaterThan(0);
  expect(texts[0]).toContain('# Your task: review one story before it counts');
  expect(texts[0]).toContain('# Not in your folder');
  expect(texts.some((t) => t.includes('+PLANT-REPO'))).toBe(true);
  expect(texts.flatMap(plantsOutsideDiff)).toEqual([]);
  expect(readdirSync(marks)).toEqual([]);
  expect(
    readLedger(repo)
      .filter((l) => l.kind === 'review')
      .map((l) => l.verdict),
  ).toEqual(['revise']);
  expect(readPlan(repo).userStories[0]).toMatchObject({ passes: false });
  expect(r.code, r.stderr).toBe(1); // max iterations, the story open
}

describe.skipIf(SKIP_CODEX || SKIP_CLAUDE)(
  "the reviewer's instructions: nothing the agent wrote reaches the real reviewer CLI but the diff",
  () => {
    for (const [reviewer, sandbox] of [
      ['claude', false],
      ['codex', false],
      ['claude', true],
      ['codex', true],
    ] as const) {
      it(`${reviewer === 'claude' ? 'Claude Code' : 'Codex'} reviewer${sandbox ? ' under --sandbox' : ''}: no planted instruction, hook or skill reached the model; REVISE`, {
        timeout: 120_000,
      }, async () => {
        requireCodex();
        requireClaude();
        await plantedLoop(reviewer, sandbox);
      });
    }
  },
);
