// Pure: progress.txt (markdown-ish notes the agents append) split into sections and blocks the page
// can render as text. `## Codebase Patterns` is pulled out so the page can pin it on top.

export type LogBlock =
  | { kind: 'heading'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'list'; items: { text: string; depth: number }[] }
  | { kind: 'code'; text: string };

export interface LogSection {
  title: string;
  /** Written by the runner itself (`## <time> - ralph: US-1 rejected …`), not by an agent. */
  runner: boolean;
  blocks: LogBlock[];
}

export interface ProgressLog {
  /** Whatever comes before the first `## ` heading (the log's title, start time), and the `## Sessions` intro. */
  preamble: LogBlock[];
  patterns: LogSection | null;
  /** The other sections, in file order (oldest first). */
  sections: LogSection[];
}

const PATTERNS = /^codebase patterns\b/i;
// The template's pinned intro to the entries below it (templates/ralph/progress.txt).
const SESSIONS = /^sessions$/i;
const RUNNER = /(^|\s)ralph:\s/;

export function parseProgress(text: string): ProgressLog {
  const log: ProgressLog = { preamble: [], patterns: null, sections: [] };
  const chunks: { title: string | null; lines: string[] }[] = [{ title: null, lines: [] }];
  let fence: string | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    fence = nextFence(fence, line);
    const heading = fence === null ? /^##\s+(.*\S)\s*$/.exec(line) : null;
    if (heading) chunks.push({ title: heading[1], lines: [] });
    else chunks.at(-1)!.lines.push(line);
  }
  for (const { title, lines } of chunks) {
    const blocks = parseBlocks(lines);
    if (title === null || SESSIONS.test(title)) log.preamble.push(...blocks);
    else if (PATTERNS.test(title) && !log.patterns) log.patterns = { title, runner: false, blocks };
    else log.sections.push({ title, runner: RUNNER.test(title), blocks });
  }
  return log;
}

/**
 * Fence state after `line`: the opening run of backticks, or null outside a fence. A fence closes only
 * on a run at least as long as the one that opened it, so the runner's longer fences can hold ``` lines.
 */
export function nextFence(fence: string | null, line: string): string | null {
  const run = /^\s*(`{3,})(.*)$/.exec(line);
  if (!run) return fence;
  if (fence === null) return run[1];
  return run[1].length >= fence.length && !run[2].trim() ? null : fence;
}

/** Lines into blocks: fenced or indented code, `- ` lists (nesting from indentation), `#` headings, text. */
export function parseBlocks(lines: readonly string[]): LogBlock[] {
  const blocks: LogBlock[] = [];
  let fence: string[] | null = null;
  let fenceMark: string | null = null;
  const last = () => blocks.at(-1);
  for (const line of lines) {
    const mark = nextFence(fenceMark, line);
    if (mark !== fenceMark) {
      if (fence) blocks.push({ kind: 'code', text: fence.join('\n') });
      fence = fence ? null : [];
      fenceMark = mark;
      continue;
    }
    if (fence) {
      fence.push(line);
      continue;
    }
    if (!line.trim() || /^\s*(-{3,}|\*{3,}|={3,})\s*$/.test(line)) {
      blocks.push({ kind: 'text', text: '' }); // a break; removed below
      continue;
    }
    const item = /^(\s*)[-*•]\s+(.*)$/.exec(line);
    const indent = /^( {4,}|\t)/.test(line);
    const prev = last();
    if (item) {
      const entry = { text: item[2], depth: Math.min(3, Math.floor(item[1].replace(/\t/g, '  ').length / 2)) };
      if (prev?.kind === 'list') prev.items.push(entry);
      else blocks.push({ kind: 'list', items: [entry] });
    } else if (indent && prev?.kind === 'list') {
      prev.items.at(-1)!.text += ` ${line.trim()}`; // a wrapped list item
    } else if (indent) {
      if (prev?.kind === 'code') prev.text += `\n${line.replace(/^( {4}|\t)/, '')}`;
      else blocks.push({ kind: 'code', text: line.replace(/^( {4}|\t)/, '') });
    } else if (/^#{1,6}\s/.test(line)) {
      blocks.push({ kind: 'heading', text: line.replace(/^#+\s+/, '').trim() });
    } else if (prev?.kind === 'text' && prev.text) {
      prev.text += `\n${line}`;
    } else {
      blocks.push({ kind: 'text', text: line });
    }
  }
  if (fence) blocks.push({ kind: 'code', text: fence.join('\n') }); // unterminated fence: still show it
  return blocks.filter((b) => b.kind !== 'text' || b.text !== '');
}
