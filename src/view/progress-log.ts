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

/** Headings tried as the start of a tail before settling for the first one. */
const TAIL_CUTS = 8;

/**
 * The log of a file too big to show whole: the title and pinned patterns from its `head`, the newest sections
 * from its `tail` (both cut on line ends). `skipped` is how many characters of the tail come before the first
 * section shown.
 */
export function parseProgressEnds(head: string, tail: string): { log: ProgressLog; skipped: number } {
  const top = parseProgress(head);
  const start = sectionStart(tail);
  const end = parseProgress(start < 0 ? `## … (the start of this entry is not shown)\n${tail}` : tail.slice(start));
  return {
    log: { preamble: top.preamble, patterns: top.patterns, sections: end.sections },
    skipped: Math.max(0, start),
  };
}

/**
 * Where the tail's first whole section starts, or -1 without a heading. A `## ` line can also sit inside a code
 * block (an agent's output quoted in an entry); a cut there would turn every later fence inside out, so the first
 * heading after which the fences balance is taken.
 */
export function sectionStart(tail: string): number {
  const starts = tail.startsWith('## ') ? [0] : [];
  for (let i = tail.indexOf('\n## '); i >= 0 && starts.length < TAIL_CUTS; i = tail.indexOf('\n## ', i + 1))
    starts.push(i + 1);
  return starts.find((at) => fenceAtEnd(tail.slice(at)) === null) ?? starts[0] ?? -1;
}

function fenceAtEnd(text: string): string | null {
  let fence: string | null = null;
  for (const line of text.split('\n')) fence = nextFence(fence, line);
  return fence;
}
