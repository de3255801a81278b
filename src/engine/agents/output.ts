// Reading what an agent printed, as it comes: Claude Code's stream-json events and Codex's JSONL events line by
// line (tool calls shown live; Claude's result and cost, Codex's last message and error kept, bounded), Gemini's one
// JSON document, or plain text. Only bounded parts are held (tail.ts); the iteration log has everything.
import { parseClaudeLine } from './claude.js';
import { parseCodexLine } from './codex.js';
import type { AgentPlan } from './index.js';
import { keepTail, OUTPUT_LIMITS } from './tail.js';

/** Gemini CLI's `--output-format json` document: the final text, or the error it reports. */
export function readGeminiJson(stdout: string): string | null {
  const start = stdout.indexOf('{');
  if (start < 0) return null;
  try {
    const doc = JSON.parse(stdout.slice(start)) as { response?: unknown; error?: { message?: unknown } };
    if (typeof doc.response === 'string') return doc.response;
    if (typeof doc.error?.message === 'string') return doc.error.message;
  } catch {
    /* not the JSON document: fall back to the raw output */
  }
  return null;
}

/** Reads an agent's stdout line by line: live tool activity, and the events that end a run. */
export class OutputReader {
  /** Claude: the result event's text; Codex: the last agent message. Its last OUTPUT_LIMITS.finalMessage characters. */
  finalMessage?: string;
  costUsd?: number;
  /** Claude: how many result events the stream held. */
  resultEvents = 0;
  isError = false;
  rateLimit?: { resetAt: Date | null; message: string };
  /** Codex: the message of the last turn.failed or error event. */
  error?: string;
  constructor(
    private readonly output: AgentPlan['output'],
    private readonly onTool: (text: string) => void,
  ) {}

  /** Whether this output is read line by line at all (plain text and Gemini's document are not). */
  get readsLines(): boolean {
    return this.output === 'claude-stream' || this.output === 'codex-json';
  }

  line(line: string): void {
    if (this.output === 'claude-stream') this.claude(line);
    else if (this.output === 'codex-json') this.codex(line);
  }

  private claude(line: string): void {
    for (const event of parseClaudeLine(line)) {
      if (event.tool) this.onTool(event.tool);
      if (event.notice) this.onTool(event.notice);
      if (event.rateLimit) this.rateLimit = event.rateLimit;
      if (event.result) {
        this.resultEvents++;
        this.finalMessage = keepTail(event.result.text, OUTPUT_LIMITS.finalMessage);
        this.costUsd = event.result.costUsd;
        this.isError = event.result.isError;
      }
    }
  }

  private codex(line: string): void {
    for (const event of parseCodexLine(line)) {
      if (event.tool) this.onTool(event.tool);
      if (event.message !== undefined) this.finalMessage = keepTail(event.message, OUTPUT_LIMITS.finalMessage);
      if (event.error) this.error = keepTail(event.error, OUTPUT_LIMITS.stderr);
    }
  }
}
