// Codex `exec --json` events, in the shapes of @openai/codex 0.171.0 (codex-rs/exec/src/exec_events.rs).
import { describe, expect, it } from 'vitest';
import { parseCodexLine } from '../../../../src/engine/agents/codex.js';

const item = (type: string, item: Record<string, unknown>) => JSON.stringify({ type, item: { id: 'item_1', ...item } });

describe('parseCodexLine', () => {
  it.each([
    [
      'a command starting',
      item('item.started', {
        type: 'command_execution',
        command: "bash -lc 'npm   test'",
        aggregated_output: '',
        exit_code: null,
        status: 'in_progress',
      }),
      [{ tool: "Shell: bash -lc 'npm test'" }],
    ],
    [
      'the same command completing (shown once, when it starts)',
      item('item.completed', {
        type: 'command_execution',
        command: 'npm test',
        aggregated_output: 'ok',
        exit_code: 0,
        status: 'completed',
      }),
      [],
    ],
    [
      'a file change',
      item('item.completed', {
        type: 'file_change',
        changes: [
          { path: 'src/a.ts', kind: 'update' },
          { path: 'b.md', kind: 'add' },
        ],
        status: 'completed',
      }),
      [{ tool: 'Edit: src/a.ts, b.md' }],
    ],
    [
      'an MCP tool call',
      item('item.started', {
        type: 'mcp_tool_call',
        server: 'docs',
        tool: 'search',
        arguments: { query: 'retry' },
        status: 'in_progress',
      }),
      [{ tool: 'docs.search: retry' }],
    ],
    [
      'a web search',
      item('item.started', { type: 'web_search', query: 'codex exec json' }),
      [{ tool: 'WebSearch: codex exec json' }],
    ],
    [
      'an agent message',
      item('item.completed', { type: 'agent_message', text: 'Done.\n<promise>COMPLETE</promise>' }),
      [{ message: 'Done.\n<promise>COMPLETE</promise>' }],
    ],
    ['reasoning', item('item.completed', { type: 'reasoning', text: '**Thinking**' }), []],
    [
      'a failed turn',
      JSON.stringify({ type: 'turn.failed', error: { message: "You've hit your usage limit." } }),
      [{ error: "You've hit your usage limit." }],
    ],
    [
      'a stream error',
      JSON.stringify({ type: 'error', message: 'stream disconnected' }),
      [{ error: 'stream disconnected' }],
    ],
    [
      'thread and turn events',
      JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } }),
      [],
    ],
    ['a non-JSON line', 'Reading prompt from stdin...', []],
    ['a torn line', '{"type":"item.sta', []],
  ])('%s', (_name, line, events) => {
    expect(parseCodexLine(line)).toEqual(events);
  });
});
