// Pure parsers of the loop engine: tags, command-line options, Claude Code's stream-json, agent commands.
import { describe, expect, it } from 'vitest';
import { detectTag } from '../../../src/engine/core/tags.js';
import { parseRunArgs, DEFAULT_OPTIONS } from '../../../src/engine/cli/args.js';
import { parseClaudeLine, renderToolUse } from '../../../src/engine/agents/claude.js';
import { planAgent, renderAgentCommand, renderMissingAgent } from '../../../src/engine/agents/index.js';
import { readGeminiJson } from '../../../src/engine/agents/output.js';
import type { RunOptions } from '../../../src/engine/loop-options.js';
import { LoopExit } from '../../../src/engine/errors.js';

describe('detectTag', () => {
  it.each([
    ['done\n<promise>COMPLETE</promise>', 'complete'],
    ['  <promise>COMPLETE</promise>  \r\n', 'complete'],
    ['<promise>STUCK</promise>', 'stuck'],
    ['<promise>COMPLETE</promise>\n<promise>STUCK</promise>', 'stuck'],
    ['I will say <promise>COMPLETE</promise> when done', null],
    ['`<promise>COMPLETE</promise>`', null],
    ['<promise>complete</promise>', null],
    ['', null],
  ])('%j → %s', (text, tag) => {
    expect(detectTag(text)).toBe(tag);
  });
});

function refusal(argv: string[]): unknown {
  try {
    parseRunArgs(argv);
  } catch (e) {
    return e;
  }
  return null;
}

describe('parseRunArgs', () => {
  it('--parallel takes 1 to 16 workers and implies --worktree', () => {
    const { options, given } = parseRunArgs(['--parallel', '3']);
    expect(options).toMatchObject({ parallel: 3, worktree: true });
    expect(given.has('worktree')).toBe(true);
    expect(parseRunArgs(['--parallel', '16']).options.parallel).toBe(16);
    expect(parseRunArgs([]).options.parallel).toBeUndefined();
    expect((refusal(['--parallel', '0']) as Error).message).toBe('--parallel must be a whole number ≥ 1 (got "0")');
    expect((refusal(['--parallel', '17']) as Error).message).toBe('--parallel takes at most 16 workers (got 17)');
  });

  it('--parallel takes the sandbox, by default or typed, and --no-sandbox', () => {
    expect(parseRunArgs(['--parallel', '2']).options).toMatchObject({ parallel: 2, sandbox: true });
    expect(parseRunArgs(['--parallel', '2', '--sandbox']).options).toMatchObject({ parallel: 2, sandbox: true });
    expect(parseRunArgs(['--parallel', '2', '--no-sandbox']).options).toMatchObject({ parallel: 2, sandbox: false });
  });

  it.each([
    [['--verify-in-place'], '--verify-in-place'],
    [['--deliver', 'pr'], '--deliver pr'],
    [['--review-cmd', 'x'], '--review-agent/--review-cmd'],
    [['--max-usage', '80', '--wait'], '--wait/--wait-next-session'],
    [['--verify-in-place', '--deliver', 'push'], '--verify-in-place, --deliver push'],
  ])('--parallel with %j is refused by name', (extra, named) => {
    const err = refusal(['--parallel', '2', ...extra]) as LoopExit;
    expect([err.code, err.status]).toEqual([1, 'usage']);
    expect(err.message).toBe(`--parallel cannot be combined with ${named} yet`);
    expect(err.hint).toMatch(/^run the plan with one loop \(without --parallel\) to use (it|them)$/);
  });

  it.each<[string[], Partial<RunOptions>]>([
    [[], {}],
    [['25'], { maxIterations: 25 }],
    [
      ['--agent', 'codex', '--pause', '0', '--iteration-timeout', '90s'],
      { agent: 'codex', pauseMs: 0, iterationTimeoutMs: 90_000 },
    ],
    [['--max-duration', '5h30m'], { maxDurationMs: 5.5 * 3_600_000 }],
    [['--agent-cmd', 'my-agent --yes', '5'], { agentCmd: 'my-agent --yes', maxIterations: 5 }],
    [['--max-cost', '2.5', '--max-usage', '80', '--wait'], { maxCost: 2.5, maxUsage: 80, wait: true }],
    [['--no-progress-limit', '5', '--json', '--dry-run'], { noProgressLimit: 5, json: true, dryRun: true }],
    [['--resume-last', '20'], { resumeLast: true, maxIterations: 20 }],
    [['--check-timeout', '1h30m', '--verify-in-worktree'], { checkTimeoutMs: 5_400_000, verifyInPlace: false }],
    [
      ['--verify-in-place', '--repin', '--accept-plan-edits', '--allow-modified-engine', '--no-weak-check'],
      { verifyInPlace: true, repin: true, acceptPlanEdits: true, allowModifiedEngine: true, weakCheck: false },
    ],
    [['--sandbox', '--no-network'], { sandbox: true, network: false }],
    [['--no-sandbox'], { sandbox: false }],
    [['--completion-promise', 'WORK_COMPLETE'], { completionPromise: 'WORK_COMPLETE' }],
    [['--max-cost', '5', '0'], { maxCost: 5, maxIterations: 0 }],
    [['--max-usage', '80', '0'], { maxUsage: 80, maxIterations: 0 }],
    [
      ['--max-usage', '80', '--allow-unknown-usage', '--max-cost', '9', '0'],
      { maxUsage: 80, allowUnknownUsage: true, maxCost: 9, maxIterations: 0 },
    ],
    // A resumed loop's stored budget is checked after the merge (run.ts).
    [['--resume-last', '0'], { resumeLast: true, maxIterations: 0 }],
    [
      ['--agent', 'codex', '--review-agent', 'claude', '--review-model', 'opus'],
      { agent: 'codex', reviewAgent: 'claude', reviewModel: 'opus' },
    ],
    [['--review-cmd', './review.sh', '--review-model', 'm1'], { reviewCmd: './review.sh', reviewModel: 'm1' }],
  ])('%j', (argv, expected) => {
    expect(parseRunArgs(argv).options).toEqual({ ...DEFAULT_OPTIONS, ...expected });
  });

  it.each([
    [['--agent', 'cursor'], /--agent must be one of claude, codex, amp, opencode, gemini/],
    [['--bogus'], /Unknown option '--bogus'/],
    [
      ['--completion-promise', 'STUCK'],
      /--completion-promise "STUCK" cannot be the completion tag's word: STUCK is the tag an agent gives up with/,
    ],
    [
      ['--completion-promise', '<b>'],
      /--completion-promise "<b>" cannot be the completion tag's word: use letters, digits/,
    ],
    [['--completion-promise', ''], /--completion-promise "" cannot be/],
    [['ten'], /max_iterations/],
    [['1', '2'], /at most one max_iterations/],
    [['--pause', 'soon'], /invalid duration "soon"/],
    [['--iteration-timeout', '0'], /--iteration-timeout must be more than 0/],
    [['--max-duration', '0'], /^--max-duration must be more than 0$/],
    [['--max-duration', '25d'], /^--max-duration must be at most 24d$/],
    [['--max-usage', '120'], /--max-usage must be a number from 0 to 100/],
    [['--name', '../escape'], /not a valid loop id/],
    [['--resume', 'a', '--resume-last'], /either --resume/],
    [['--agent', 'codex', '--agent-cmd', 'x'], /either --agent or --agent-cmd/],
    [['--agent-cmd'], /^--agent-cmd needs a value$/],
    [
      ['--agent-cmd', '--pause', '0'],
      /^--agent-cmd needs a value, but is followed by the option --pause; if "--pause" is the value, write --agent-cmd=--pause$/,
    ],
    [['-3'], /^max_iterations must be a whole number ≥ 0 \(got "-3"; 0 means no cap\)$/],
    [['--pause', '0', '-10'], /^max_iterations must be a whole number ≥ 0 \(got "-10"; 0 means no cap\)$/],
    [
      ['--review-agent', 'cursor'],
      /^--review-agent must be one of claude, codex, amp, opencode, gemini \(got "cursor"\); for another agent use --review-cmd$/,
    ],
    [['--review-agent', 'claude', '--review-cmd', 'x'], /^use either --review-agent or --review-cmd, not both$/],
    [['--sandbox', '--no-sandbox'], /^use either --sandbox or --no-sandbox, not both$/],
    [['--review-model', 'opus'], /^--review-model needs a reviewer: add --review-agent <name>/],
    [
      ['--review-agent', 'amp', '--review-model', 'x'],
      /^--review-model: amp has no model flag ralphkit knows; pick the model in a command instead, e.g. --review-cmd 'amp \.\.\.'$/,
    ],
  ])('refuses %j as bad usage (exit 1)', (argv, message) => {
    const err = refusal(argv);
    expect(err).toBeInstanceOf(LoopExit);
    expect((err as LoopExit).code).toBe(1);
    expect((err as LoopExit).message).toMatch(message);
  });

  it.each([
    [
      ['0'],
      /max_iterations 0 means no iteration cap: it needs a budget that ends the loop, --max-cost <usd>, --max-usage <pct> or --max-duration <time>$/,
    ],
    [
      ['--agent-cmd', './a', '--max-cost', '5', '0'],
      /--max-cost cannot bound it: an --agent-cmd agent reports no cost$/,
    ],
    [['--agent', 'codex', '--max-cost', '5', '0'], /--max-cost cannot bound it: codex reports no cost$/],
    [
      ['--max-usage', '80', '--allow-unknown-usage', '0'],
      /--max-usage with --allow-unknown-usage cannot bound it: while usage cannot be read the loop goes on$/,
    ],
  ])('refuses %j: no cap and nothing else to end it (exit 2)', (argv, message) => {
    const err = refusal(argv);
    expect(err).toMatchObject({ code: 2, status: 'refused' });
    expect((err as LoopExit).message).toMatch(message);
    expect((err as LoopExit).hint).toContain('--max-cost 20 0');
  });

  it('max_iterations 0 with --max-duration is a bounded run: the time ends it, whatever the agent reports', () => {
    expect(refusal(['--max-duration', '8h', '0'])).toBeNull();
    expect(refusal(['--agent-cmd', './a', '--max-duration', '30m', '0'])).toBeNull();
  });
});

describe('Claude Code stream-json', () => {
  const assistant = (content: unknown[]) => JSON.stringify({ type: 'assistant', message: { content } });
  it.each([
    [
      'a result event',
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'Done.\n<promise>COMPLETE</promise>',
        total_cost_usd: 0.42,
      }),
      [{ result: { text: 'Done.\n<promise>COMPLETE</promise>', costUsd: 0.42, isError: false } }],
    ],
    [
      'an error result without a result field',
      JSON.stringify({
        type: 'result',
        subtype: 'error_max_turns',
        is_error: true,
        errors: ['max turns'],
        total_cost_usd: 0.1,
      }),
      [{ result: { text: 'max turns', costUsd: 0.1, isError: true } }],
    ],
    [
      'tool uses',
      assistant([
        { type: 'text', text: 'hi' },
        { type: 'tool_use', name: 'Bash', input: { command: 'npm   test' } },
        { type: 'tool_use', name: 'Read', input: { file_path: 'src/a.ts' } },
      ]),
      [{ tool: 'Bash: npm test' }, { tool: 'Read: src/a.ts' }],
    ],
    [
      'a rejected rate limit',
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', resetsAt: 1767261600, rateLimitType: 'five_hour' },
      }),
      [{ rateLimit: { resetAt: new Date(1767261600_000), message: 'Claude Code five_hour limit reached' } }],
    ],
    [
      'a rejected rate limit while on extra usage',
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', resetsAt: 1767261600, isUsingOverage: true },
      }),
      [],
    ],
    [
      'a rejected rate limit with overage allowed',
      JSON.stringify({
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', overageStatus: 'allowed_warning' },
      }),
      [],
    ],
    ['an allowed rate limit', JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed' } }), []],
    ['a system event', JSON.stringify({ type: 'system', subtype: 'init' }), []],
    // The fields of Claude Code 2.1.332's event, as the real CLI printed it (test/real-agents/claude-api-retry.test.ts).
    [
      'a retry after a 429',
      JSON.stringify({
        type: 'system',
        subtype: 'api_retry',
        attempt: 1,
        max_retries: 10,
        retry_delay_ms: 31_200,
        error_status: 429,
        error: 'rate_limit',
        session_id: 's',
        uuid: 'u',
      }),
      [{ notice: 'Claude Code is retrying after a rate limit (429): attempt 1 of 10, waiting 31s' }],
    ],
    [
      'a retry after a 529',
      JSON.stringify({
        type: 'system',
        subtype: 'api_retry',
        attempt: 3,
        max_retries: 10,
        retry_delay_ms: 2000,
        error_status: 529,
        error: 'overloaded',
      }),
      [{ notice: 'Claude Code is retrying after an overloaded API (529): attempt 3 of 10, waiting 2s' }],
    ],
    [
      'a retry with no response at all',
      JSON.stringify({
        type: 'system',
        subtype: 'api_retry',
        attempt: 2,
        max_retries: 10,
        retry_delay_ms: 1000,
        error_status: null,
        error: 'unknown',
      }),
      [{ notice: 'Claude Code is retrying after an API error: attempt 2 of 10, waiting 1s' }],
    ],
    [
      'a result event with spaces after the colons',
      '{"type": "result", "is_error": false, "result": "ok"}',
      [{ result: { text: 'ok', costUsd: undefined, isError: false } }],
    ],
    ['a non-JSON line', 'warning: something', []],
    ['a torn JSON line', '{"type":"res', []],
  ])('%s', (_name, line, events) => {
    expect(parseClaudeLine(line)).toEqual(events);
  });

  it('keeps tool lines to one short line', () => {
    expect(renderToolUse('Write', { file_path: 'a.txt', content: 'x'.repeat(500) })).toBe('Write: a.txt');
    expect(renderToolUse('Bash', { command: 'echo ' + 'y'.repeat(200) }, 20)).toBe('Bash: echo yyyyyyyy…');
    expect(renderToolUse('TodoWrite', { todos: [] })).toBe('TodoWrite');
  });
});

describe('planAgent', () => {
  const base = { prompt: 'do it', runDir: '/r/.runs/x', iteration: 2, env: {} };
  it.each([
    ['claude', {}, 'claude --print --dangerously-skip-permissions --output-format stream-json --verbose < <prompt>'],
    [
      'claude',
      { RALPH_CLAUDE_BIN: '/opt/fake claude' },
      "'/opt/fake claude' --print --dangerously-skip-permissions --output-format stream-json --verbose < <prompt>",
    ],
    [
      'codex',
      {},
      'codex exec --json --dangerously-bypass-approvals-and-sandbox --output-last-message /r/.runs/x/iteration-2.last-message.txt - < <prompt>',
    ],
    ['amp', {}, 'amp --dangerously-allow-all --execute < <prompt>'],
    ['opencode', {}, 'opencode run --auto < <prompt>'],
    ['gemini', {}, 'gemini --skip-trust --yolo --output-format json < <prompt>'],
  ] as const)('%s %j', (agent, env, line) => {
    expect(renderAgentCommand(planAgent({ ...base, agent, env }), 'do it')).toBe(line);
  });

  // --review-model: each CLI's own model flag (docs/agents.md), an option of `codex exec` right after the subcommand.
  it.each([
    [
      'claude',
      'claude --print --dangerously-skip-permissions --output-format stream-json --verbose --model opus < <prompt>',
    ],
    [
      'codex',
      'codex exec --model opus --json --dangerously-bypass-approvals-and-sandbox --output-last-message /r/.runs/x/iteration-2.last-message.txt - < <prompt>',
    ],
    ['opencode', 'opencode run --auto --model opus < <prompt>'],
    ['gemini', 'gemini --skip-trust --yolo --output-format json --model opus < <prompt>'],
  ] as const)('%s with a model', (agent, line) => {
    expect(renderAgentCommand(planAgent({ ...base, agent, model: 'opus' }), 'do it')).toBe(line);
    // The shared argument lists are not changed by it.
    expect(renderAgentCommand(planAgent({ ...base, agent }), 'do it')).not.toContain('--model');
  });

  it.each([
    [
      '{"session_id":"s","response":"Done.\\n<promise>COMPLETE</promise>","stats":{}}',
      'Done.\n<promise>COMPLETE</promise>',
    ],
    ['Loaded cached credentials.\n{\n  "response": "ok"\n}\n', 'ok'],
    [
      '{"session_id":"s","error":{"type":"quota","message":"Usage limit reached for gemini-pro."}}',
      'Usage limit reached for gemini-pro.',
    ],
    ['not json', null],
  ])('reads Gemini CLI json output %#', (stdout, message) => {
    expect(readGeminiJson(stdout)).toBe(message);
  });

  it('runs --agent-cmd through sh -c with the prompt on stdin', () => {
    const plan = planAgent({ ...base, agent: 'claude', agentCmd: './my agent' });
    expect(plan).toMatchObject({ file: '/bin/sh', args: ['-c', './my agent'], input: 'do it', output: 'text' });
  });
});

// The refusal names what the user actually set: "not on PATH" for a path they typed sends them the wrong way.
describe('renderMissingAgent', () => {
  it.each([
    [
      'claude',
      {},
      /^the claude CLI was not found: no executable "claude" on PATH$/,
      /^install it \(npm install -g @anthropic-ai\/claude-code\), or set RALPH_CLAUDE_BIN=\/path\/to\/claude, or run another agent with --agent-cmd/,
    ],
    ['codex', {}, /no executable "codex" on PATH/, /npm install -g @openai\/codex\b.*RALPH_CODEX_BIN=/],
    ['gemini', {}, /no executable "gemini" on PATH/, /npm install -g @google\/gemini-cli\b.*RALPH_GEMINI_BIN=/],
    [
      'claude',
      { RALPH_CLAUDE_BIN: '/nope' },
      /^the claude CLI was not found: RALPH_CLAUDE_BIN is set to "\/nope", which is not an executable file$/,
      /^point RALPH_CLAUDE_BIN at the claude binary \(export RALPH_CLAUDE_BIN=\/path\/to\/claude\), unset it to use "claude" from PATH, or run another agent with --agent-cmd/,
    ],
    [
      'amp',
      { RALPH_AMP_BIN: 'amp-nightly' },
      /RALPH_AMP_BIN is set to "amp-nightly", which is not an executable on PATH$/,
      /point RALPH_AMP_BIN at the amp binary/,
    ],
    ['opencode', { RALPH_OPENCODE_BIN: '' }, /no executable "opencode" on PATH/, /npm install -g opencode-ai\b/],
  ] as const)('%s %j', (agent, env, message, hint) => {
    const r = renderMissingAgent(agent, env);
    expect(r.message).toMatch(message);
    expect(r.hint).toMatch(hint);
  });
});
