// Reading what an agent printed: Claude Code's stream-json events line by line as they come (tool calls shown
// live, the result and its cost at the end), Gemini's one JSON document, or plain text.
import { parseClaudeLine } from './claude.js';
import type { AgentPlan } from './index.js';

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

/** Reads an agent's stdout line by line: live tool activity, and (for claude) the result event. */
export class OutputReader {
  finalMessage?: string;
  costUsd?: number;
  isError = false;
  rateLimit?: { resetAt: Date | null; message: string };
  constructor(
    private readonly output: AgentPlan['output'],
    private readonly onTool: (text: string) => void,
  ) {}

  line(line: string): void {
    if (this.output !== 'claude-stream') return;
    for (const event of parseClaudeLine(line)) {
      if (event.tool) this.onTool(event.tool);
      if (event.rateLimit) this.rateLimit = event.rateLimit;
      if (event.result) {
        this.finalMessage = event.result.text;
        this.costUsd = event.result.costUsd;
        this.isError = event.result.isError;
      }
    }
  }
}
