// Pure: progress.txt (markdown-ish notes the agents append) split into sections and blocks the page
// can render as text. `## Codebase Patterns` is pulled out so the page can pin it on top.

export type LogBlock =
  | { kind: 'heading'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'list'; items: { text: string; depth: number }[] }
  | { kind: 'code'; text: string };

export interface LogSection {
  title: string;
  blocks: LogBlock[];
}

export interface ProgressLog {
  /** Whatever comes before the first `## ` heading (the log's title, start time). */
  preamble: LogBlock[];
  patterns: LogSection | null;
  /** The other sections, in file order (oldest first). */
  sections: LogSection[];
}

const PATTERNS = /^codebase patterns\b/i;

export function parseProgress(text: string): ProgressLog {
  const log: ProgressLog = { preamble: [], patterns: null, sections: [] };
  let current: LogSection | null = null;
  const chunks: { section: LogSection | null; lines: string[] }[] = [{ section: null, lines: [] }];
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const heading = /^##\s+(.*\S)\s*$/.exec(line);
    if (heading && !inFence(chunks.at(-1)!.lines)) {
      current = { title: heading[1], blocks: [] };
      chunks.push({ section: current, lines: [] });
    } else {
      chunks.at(-1)!.lines.push(line);
    }
  }
  for (const { section, lines } of chunks) {
    const blocks = parseBlocks(lines);
    if (!section) log.preamble = blocks;
    else if (PATTERNS.test(section.title) && !log.patterns) log.patterns = { ...section, blocks };
    else if (blocks.length || section.title) log.sections.push({ ...section, blocks });
  }
  return log;
}

function inFence(lines: readonly string[]): boolean {
  return lines.filter((l) => /^\s*```/.test(l)).length % 2 === 1;
}

/** Lines into blocks: fenced or indented code, `- ` lists (nesting from indentation), `#` headings, text. */
export function parseBlocks(lines: readonly string[]): LogBlock[] {
  const blocks: LogBlock[] = [];
  let fence: string[] | null = null;
  const last = () => blocks.at(-1);
  for (const line of lines) {
    if (/^\s*```/.test(line)) {
      if (fence) blocks.push({ kind: 'code', text: fence.join('\n') });
      fence = fence ? null : [];
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
