// The pure parts of reporting a failed agent: the shell's own refusal, the output tail, the first word that
// --dry-run looks up, and the cost text of an agent that reports none.
import { describe, expect, it } from 'vitest';
import type { AgentResult } from '../../../../src/engine/types.js';
import { readOutputTail, readShellRefusal, renderFailureLines } from '../../../../src/engine/agents/failure.js';
import { readFirstWord } from '../../../../src/engine/agents/check.js';
import { planAgent } from '../../../../src/engine/agents/index.js';
import { createEmitter, renderHuman } from '../../../../src/engine/events.js';

function result(over: Partial<AgentResult>): AgentResult {
  return {
    exitCode: 1,
    signal: null,
    timedOut: false,
    stdout: '',
    stderr: '',
    finalMessage: '',
    durationMs: 10,
    ...over,
  };
}

const cmdPlan = planAgent({
  agent: 'claude',
  agentCmd: 'my-agnet --yes',
  prompt: 'p',
  runDir: '/r',
  iteration: 1,
  env: {},
});
const claudePlan = planAgent({ agent: 'claude', prompt: 'p', runDir: '/r', iteration: 1, env: {} });

describe('readShellRefusal', () => {
  it.each([
    ['dash, not found', 127, 'sh: 1: my-agnet: not found\n', 'sh: 1: my-agnet: not found'],
    [
      'bash as sh, not found',
      127,
      'sh: line 1: my-agnet: command not found\n',
      'sh: line 1: my-agnet: command not found',
    ],
    ['macOS sh', 127, 'sh: my-agnet: command not found\n', 'sh: my-agnet: command not found'],
    ['full path to sh', 127, '/bin/sh: 1: my-agnet: not found\n', '/bin/sh: 1: my-agnet: not found'],
    ['not executable', 126, 'sh: 1: ./agent.sh: Permission denied\n', 'sh: 1: ./agent.sh: Permission denied'],
  ])('%s → the shell line', (_name, exitCode, stderr, line) => {
    expect(readShellRefusal(cmdPlan, result({ exitCode, stderr }))).toBe(line);
  });

  it.each([
    ['a script complaining in its own name', cmdPlan, 127, './agent.sh: 3: jq: not found\n'],
    ['bash inside the command', cmdPlan, 127, 'bash: line 1: jq: command not found\n'],
    ['another exit code', cmdPlan, 1, 'sh: 1: my-agnet: not found\n'],
    ['nothing on stderr', cmdPlan, 127, ''],
    ['a named agent (not run through sh -c)', claudePlan, 127, 'sh: 1: my-agnet: not found\n'],
  ])('%s → null', (_name, plan, exitCode, stderr) => {
    expect(readShellRefusal(plan, result({ exitCode, stderr }))).toBeNull();
  });
});

describe('readOutputTail', () => {
  const seven = Array.from({ length: 7 }, (_, i) => `line ${i + 1}`).join('\n');
  it.each([
    ['stderr first', { stderr: 'boom\n', stdout: 'out', finalMessage: 'out' }, { source: 'stderr', lines: ['boom'] }],
    [
      'the last five lines, blank ones skipped',
      { stderr: `${seven}\n\n` },
      { source: 'stderr', lines: ['line 3', 'line 4', 'line 5', 'line 6', 'line 7'] },
    ],
    ['colour codes removed', { stderr: '\u001b[31mred\u001b[0m' }, { source: 'stderr', lines: ['red'] }],
    [
      'the final message when stderr is empty',
      { finalMessage: 'API Error: 500', stdout: '{"type":"result"}' },
      { source: 'output', lines: ['API Error: 500'] },
    ],
    ['stdout last', { stdout: 'raw' }, { source: 'output', lines: ['raw'] }],
    ['nothing at all', {}, null],
  ])('%s', (_name, over, expected) => {
    expect(readOutputTail(result(over))).toEqual(expected);
  });

  it('cuts a long line', () => {
    expect(readOutputTail(result({ stderr: 'x'.repeat(500) }))!.lines[0]).toHaveLength(201);
  });
});

describe('renderFailureLines', () => {
  it.each([
    [
      'an exit code',
      result({ exitCode: 3, stderr: 'boom' }),
      ['the agent failed (exit 3); last lines of its stderr (full log: ralph/.runs/x/iteration-1.log):', '  boom'],
    ],
    [
      'a timeout',
      result({ exitCode: null, signal: 'SIGTERM', timedOut: true, stdout: 'working' }),
      ['the agent timed out; last lines of its output (full log: ralph/.runs/x/iteration-1.log):', '  working'],
    ],
    [
      'a signal',
      result({ exitCode: null, signal: 'SIGKILL', stderr: 'bye' }),
      ['the agent was killed by SIGKILL; last lines of its stderr (full log: ralph/.runs/x/iteration-1.log):', '  bye'],
    ],
    [
      'a program that could not be started',
      result({ exitCode: null, stderr: 'spawn claude ENOENT\n' }),
      [
        'the agent could not be started; last lines of its stderr (full log: ralph/.runs/x/iteration-1.log):',
        '  spawn claude ENOENT',
      ],
    ],
    [
      'silence',
      result({ exitCode: 2 }),
      ['the agent failed (exit 2) and printed nothing; log: ralph/.runs/x/iteration-1.log'],
    ],
  ])('%s', (_name, r, lines) => {
    expect(renderFailureLines(r, '/repo/ralph/.runs/x/iteration-1.log', '/repo')).toEqual(lines);
  });
});

describe('readFirstWord (what --dry-run looks up)', () => {
  it.each([
    ['my-agnet --yes', 'my-agnet'],
    ['  ./bin/agent.sh  --fast', './bin/agent.sh'],
    ['/usr/local/bin/codex exec', '/usr/local/bin/codex'],
    ['FOO=1 my-agent', null],
    ['"my agent" --yes', null],
    ['$AGENT --yes', null],
    ['~/bin/agent', null],
    ['(cd x && agent)', null],
  ])('%s → %s', (command, word) => {
    expect(readFirstWord(command)).toBe(word);
  });
});

describe('iteration-end text', () => {
  const end = { type: 'iteration-end', iteration: 2, newCommit: true, noProgressStreak: 0 } as const;
  it.each([
    ['no agent reported a cost', { ...end, costUsd: 0 }, false, /new commit$/],
    ['an agent reported a cost', { ...end, costUsd: 0 }, true, /new commit · cost so far \$0\.00$/],
    ['a resumed loop with cost from before', { ...end, costUsd: 1.5 }, false, /cost so far \$1\.50$/],
  ])('%s', (_name, event, reported, text) => {
    expect(renderHuman(event, reported)).toMatch(text);
  });
});

describe('the emitter and cost', () => {
  it.each([
    ['an agent that reports no cost: no cost text, the JSON field kept', undefined, false],
    ['an agent that reports a cost, even $0', 0, true],
  ])('%s', (_name, agentCost, shown) => {
    const out: string[] = [];
    const err: string[] = [];
    const emit = createEmitter(
      true,
      (s) => out.push(s),
      (s) => err.push(s),
    );
    emit({
      type: 'agent-exit',
      iteration: 1,
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 5,
      costUsd: agentCost,
      tag: null,
    });
    emit({ type: 'iteration-end', iteration: 1, newCommit: true, noProgressStreak: 0, costUsd: 0 });
    expect(err.join('').includes('cost so far $0.00')).toBe(shown);
    expect(JSON.parse(out[1])).toMatchObject({ type: 'iteration-end', costUsd: 0 });
  });
});
