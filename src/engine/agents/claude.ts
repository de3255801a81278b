// Claude Code in print mode with stream-json output: one JSON event per line. The `result` event carries the
// final message and total_cost_usd; assistant `tool_use` blocks are shown live, one compact line each, and so is
// each `api_retry` event (Claude Code waiting out a 429/529 by itself, which would otherwise look like a hang).
import { formatDuration } from '../core/duration.js';

export interface ClaudeEvent {
  /** "Bash: npm test" — set for each tool the agent calls. */
  tool?: string;
  /** Set by the closing `result` event. */
  result?: { text: string; costUsd?: number; isError: boolean };
  /** A `system`/`api_retry` event, as a line for the terminal. */
  notice?: string;
  /** A `rate_limit_event` whose status is "rejected": the subscription limit is hit. */
  rateLimit?: { resetAt: Date | null; message: string };
}

export const CLAUDE_ARGS = ['--print', '--dangerously-skip-permissions', '--output-format', 'stream-json', '--verbose'];

// Every event read below names one of these words; a line without any (the bulk of a long run: text, tool results)
// is not parsed at all, which keeps a long output cheap.
const WANTED = /tool_use|"result"|rate_limit_event|api_retry/;

export function parseClaudeLine(line: string): ClaudeEvent[] {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{') || !WANTED.test(trimmed)) return [];
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(trimmed);
  } catch {
    return [];
  }
  if (event.type === 'result') return [{ result: readResult(event) }];
  if (event.type === 'rate_limit_event') return readRateLimit(event);
  if (event.type === 'system' && event.subtype === 'api_retry') return [{ notice: renderApiRetry(event) }];
  if (event.type !== 'assistant') return [];
  const content = (event.message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return [];
  return content
    .filter((block) => block && block.type === 'tool_use' && typeof block.name === 'string')
    .map((block) => ({ tool: renderToolUse(block.name, block.input) }));
}

// Error results (error_max_turns, error_during_execution, ...) have no `result` field, only `errors`.
function readResult(event: Record<string, unknown>): NonNullable<ClaudeEvent['result']> {
  const cost = event.total_cost_usd;
  const errors = Array.isArray(event.errors) ? event.errors.filter((e) => typeof e === 'string').join('\n') : '';
  const text = typeof event.result === 'string' ? event.result : errors;
  return { text, costUsd: typeof cost === 'number' ? cost : undefined, isError: event.is_error === true };
}

function readRateLimit(event: Record<string, unknown>): ClaudeEvent[] {
  const info = event.rate_limit_info as
    | {
        status?: unknown;
        resetsAt?: unknown;
        rateLimitType?: unknown;
        isUsingOverage?: unknown;
        overageStatus?: unknown;
      }
    | undefined;
  if (info?.status !== 'rejected') return [];
  // On extra usage the request still goes through: waiting and repeating the iteration would redo committed work.
  if (info.isUsingOverage === true || /^allowed/.test(String(info.overageStatus ?? ''))) return [];
  // Seconds since the epoch; a value in milliseconds (13 digits) is taken as such.
  const resetAt =
    typeof info.resetsAt === 'number' ? new Date(info.resetsAt > 1e12 ? info.resetsAt : info.resetsAt * 1000) : null;
  return [{ rateLimit: { resetAt, message: `Claude Code ${String(info.rateLimitType ?? 'usage')} limit reached` } }];
}

// Claude Code 2.1.332: {"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":30000,
// "error_status":429,"error":"rate_limit",...}; error is also "overloaded" (529), "server_error", "unknown", ...
const RETRY_CAUSE: Record<string, string> = {
  rate_limit: 'a rate limit',
  overloaded: 'an overloaded API',
  server_error: 'a server error',
};

export function renderApiRetry(event: Record<string, unknown>): string {
  const { attempt, max_retries: max, retry_delay_ms: delay, error_status: status, error } = event;
  const cause = (typeof error === 'string' && RETRY_CAUSE[error]) || 'an API error';
  const code = typeof status === 'number' ? ` (${status})` : '';
  const count = typeof attempt === 'number' ? `: attempt ${attempt}${typeof max === 'number' ? ` of ${max}` : ''}` : '';
  const wait = typeof delay === 'number' && delay >= 0 ? `, waiting ${formatDuration(Math.round(delay))}` : '';
  return `Claude Code is retrying after ${cause}${code}${count}${wait}`;
}

// The argument most worth seeing for each well-known tool; others show their first string argument.
const MAIN_ARG = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt'];

export function renderToolUse(name: string, input: unknown, width = 100): string {
  let arg = '';
  if (input && typeof input === 'object') {
    const record = input as Record<string, unknown>;
    const key =
      MAIN_ARG.find((k) => typeof record[k] === 'string') ??
      Object.keys(record).find((k) => typeof record[k] === 'string');
    if (key) arg = String(record[key]);
  }
  const oneLine = arg.replace(/\s+/g, ' ').trim();
  const text = oneLine ? `${name}: ${oneLine}` : name;
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}
