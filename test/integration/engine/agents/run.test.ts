// runAgentOnce at the bounds of what it holds of an agent's output (OUTPUT_LIMITS, docs/agents.md "Long output"):
// real processes (node -e) printing past each bound; the iteration log always has everything.
import { describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import path from 'node:path';
import { testdir } from '../../../support/repo.js';
import { runAgentOnce } from '../../../../src/engine/agents/run.js';
import type { AgentPlan } from '../../../../src/engine/agents/index.js';
import { OUTPUT_LIMITS } from '../../../../src/engine/agents/tail.js';

const MIB = 1024 * 1024;

async function runNode(script: string, output: AgentPlan['output'], extra: Partial<AgentPlan> = {}) {
  const dir = testdir();
  const logFile = path.join(dir, 'iteration-1.log');
  const tools: string[] = [];
  const plan: AgentPlan = { file: process.execPath, args: ['-e', script], input: '', output, ...extra };
  const result = await runAgentOnce({
    plan,
    cwd: dir,
    env: process.env,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    logFile,
    onTool: (t) => tools.push(t),
  });
  return { result, tools, logBytes: statSync(logFile).size, dir };
}

describe('runAgentOnce with long output', () => {
  it('plain text: the final message is the last 1 MiB of stdout, the tag on its last line included', async () => {
    const { result, logBytes } = await runNode(
      `process.stdout.write('x'.repeat(3 * ${MIB}) + '\\nDone.\\n<promise>COMPLETE</promise>\\n')`,
      'text',
    );
    expect(result.finalMessage).toHaveLength(OUTPUT_LIMITS.stdout);
    expect(result.finalMessage.endsWith('\nDone.\n<promise>COMPLETE</promise>\n')).toBe(true);
    expect(logBytes).toBeGreaterThan(3 * MIB);
  });

  it('stderr: its last 64 KiB', async () => {
    const { result } = await runNode(`process.stderr.write('e'.repeat(${MIB}) + '\\nlast words\\n')`, 'text');
    expect(result.stderr).toHaveLength(OUTPUT_LIMITS.stderr);
    expect(result.stderr.endsWith('\nlast words\n')).toBe(true);
  });

  it('Gemini: the response of a document within the bound; past it, the tail of stdout as text', async () => {
    const doc = (n: number) =>
      `process.stdout.write(JSON.stringify({ response: 'r'.repeat(${n}) + '\\n<promise>COMPLETE</promise>', stats: {} }))`;
    const small = await runNode(doc(1000), 'gemini-json');
    expect(small.result.finalMessage).toBe(`${'r'.repeat(1000)}\n<promise>COMPLETE</promise>`);
    const large = await runNode(doc(2 * MIB), 'gemini-json');
    expect(large.result.finalMessage).toHaveLength(OUTPUT_LIMITS.stdout);
    expect(large.result.finalMessage.endsWith('\\n<promise>COMPLETE</promise>","stats":{}}')).toBe(true);
  });

  it('stream-json: a line past 8 MiB is not read, and the runner says so; the lines around it are', async () => {
    const script = `
      const emit = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
      emit({ type: 'assistant', message: { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'before' } }] } });
      process.stdout.write('{"type":"assistant","junk":"' + 'j'.repeat(${OUTPUT_LIMITS.line + 10}) + '"}\\n');
      emit({ type: 'result', is_error: false, result: 'ok\\n<promise>COMPLETE</promise>', total_cost_usd: 0.5 });`;
    const { result, tools } = await runNode(script, 'claude-stream');
    expect(tools[0]).toBe('Bash: before');
    expect(tools[1]).toMatch(/^1 line\(s\) of the agent's output were longer than 8 MiB and were not read/);
    expect(result).toMatchObject({ finalMessage: 'ok\n<promise>COMPLETE</promise>', costUsd: 0.5 });
  });

  it('stream-json: a result longer than 1 MiB is kept as its last 1 MiB', async () => {
    const script = `process.stdout.write(JSON.stringify({ type: 'result', is_error: false, result: 'r'.repeat(${2 * MIB}) + '\\n<promise>COMPLETE</promise>' }) + '\\n')`;
    const { result } = await runNode(script, 'claude-stream');
    expect(result.finalMessage).toHaveLength(OUTPUT_LIMITS.finalMessage);
    expect(result.finalMessage.endsWith('\n<promise>COMPLETE</promise>')).toBe(true);
  });

  it('Codex: a last-message file past 1 MiB is read from its end', async () => {
    const dir = testdir();
    const file = path.join(dir, 'last.txt');
    const script = `require('fs').writeFileSync(${JSON.stringify(file)}, 'm'.repeat(${2 * MIB}) + '\\n<promise>COMPLETE</promise>\\n')`;
    const { result } = await runNode(script, 'codex-json', { lastMessageFile: file });
    expect(result.finalMessage).toHaveLength(OUTPUT_LIMITS.finalMessage);
    expect(result.finalMessage.endsWith('\n<promise>COMPLETE</promise>\n')).toBe(true);
  });

  it("Codex: without the file, the last agent message and the failed turn's error", async () => {
    const script = `
      const emit = (e) => console.log(JSON.stringify(e));
      emit({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'Trying.' } });
      emit({ type: 'turn.failed', error: { message: "You've hit your usage limit. Try again in 2 hours." } });
      process.exitCode = 1;`;
    const { result } = await runNode(script, 'codex-json', {
      lastMessageFile: path.join(testdir(), 'never-written.txt'),
    });
    expect(result.finalMessage).toBe("Trying.\nYou've hit your usage limit. Try again in 2 hours.");
  });
});
