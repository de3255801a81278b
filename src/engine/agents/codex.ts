// Codex with `codex exec --json`: one JSON event per line (thread.started, turn.*, item.started/updated/completed,
// error). Commands, MCP tool calls and web searches are shown live as they start, file changes when they are made;
// the last agent_message and a failed turn's error are kept for when the last-message file is missing.
// Shapes verified against @openai/codex 0.171.0 (docs/agents.md).
import { renderToolUse } from './claude.js';

export interface CodexEvent {
  /** "Shell: npm test", "Edit: src/app.ts" — one per tool the agent uses. */
  tool?: string;
  /** The text of a completed agent_message item. */
  message?: string;
  /** The message of a turn.failed or error event. */
  error?: string;
}

type Item = Record<string, unknown> & { type?: unknown };

export function parseCodexLine(line: string): CodexEvent[] {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return [];
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(trimmed);
  } catch {
    return [];
  }
  if (event.type === 'turn.failed') return readError((event.error as { message?: unknown } | undefined)?.message);
  if (event.type === 'error') return readError(event.message);
  const item = event.item as Item | undefined;
  if (!item || typeof item !== 'object') return [];
  if (event.type === 'item.started') return readStarted(item);
  if (event.type === 'item.completed') return readCompleted(item);
  return [];
}

function readError(message: unknown): CodexEvent[] {
  return typeof message === 'string' && message.trim() ? [{ error: message }] : [];
}

function readStarted(item: Item): CodexEvent[] {
  if (item.type === 'command_execution' && typeof item.command === 'string')
    return [{ tool: renderToolUse('Shell', { command: item.command }) }];
  if (item.type === 'mcp_tool_call' && typeof item.tool === 'string') {
    const name = typeof item.server === 'string' ? `${item.server}.${item.tool}` : item.tool;
    return [{ tool: renderToolUse(name, item.arguments) }];
  }
  if (item.type === 'web_search' && typeof item.query === 'string')
    return [{ tool: renderToolUse('WebSearch', { query: item.query }) }];
  return [];
}

// A file change is reported once, completed (the patch applied or failed), with the paths it touched.
function readCompleted(item: Item): CodexEvent[] {
  if (item.type === 'agent_message' && typeof item.text === 'string') return [{ message: item.text }];
  if (item.type !== 'file_change' || !Array.isArray(item.changes)) return [];
  const paths = item.changes.map((c: { path?: unknown }) => c?.path).filter((p): p is string => typeof p === 'string');
  return paths.length ? [{ tool: renderToolUse('Edit', { path: paths.join(', ') }) }] : [];
}
