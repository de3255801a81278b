// Pure text edits of Claude Code's .claude/settings.json: ralphkit's Stop hook entry put in and taken out again
// without reformatting anything else, so the user's bytes survive (SPEC §12). Taking out is the exact inverse of
// putting in while the file is otherwise unedited: install, then `--no-claude-hook`, gives back the same bytes.
import { RalphkitError, EXIT } from '../errors.js';
import { parseJsonWithPositions, type JsonArray, type JsonNode, type JsonObject } from '../prd/json-parse.js';
import { makeLocator } from '../prd/locate.js';
import type { ClaudeHookRecord } from './types.js';

/** Runs the engine through the project folder Claude Code passes, quoted so a path with spaces stays one word. */
export const STOP_HOOK_COMMAND = 'node "$CLAUDE_PROJECT_DIR/ralph/ralph.mjs" hook stop';
/** Seconds; Claude Code lets the session stop when a Stop hook outlives it (docs/agents.md). */
export const STOP_HOOK_TIMEOUT = 600;
/** How ralphkit recognises its own entry, whatever version wrote it. */
const OURS = /ralph\/ralph\.mjs"?\s+hook\s+stop\b/;

const ENTRY = { hooks: [{ type: 'command', command: STOP_HOOK_COMMAND, timeout: STOP_HOOK_TIMEOUT }] };

type Container = JsonObject | JsonArray;
interface Layout {
  nl: string;
  unit: string;
}

/** The text with ralphkit's entry present and current; `record` says what was added (undefined: it was there). */
export function addStopHook(text: string | undefined, file: string): { text: string; record?: ClaudeHookRecord } {
  if (text === undefined)
    return { text: `${JSON.stringify({ hooks: { Stop: [ENTRY] } }, null, 2)}\n`, record: { added: 'file' } };
  const { bom, body, root } = parseSettings(text, file);
  const layout = detectLayout(body);
  const hooks = member(root, 'hooks');
  if (!hooks) return insertItem(bom, body, root, `"hooks": ${render({ Stop: [ENTRY] }, layout)}`, layout, 'hooks');
  const hooksObject = expectKind(hooks, 'object', `"hooks" in ${file}`);
  const stop = member(hooksObject, 'Stop');
  if (!stop) return insertItem(bom, body, hooksObject, `"Stop": ${render([ENTRY], layout)}`, layout, 'Stop');
  const stopArray = expectKind(stop, 'array', `"hooks"."Stop" in ${file}`);
  const index = stopArray.items.findIndex(isOurs);
  if (index < 0) return insertItem(bom, body, stopArray, render(ENTRY, layout), layout, 'entry');
  const item = stopArray.items[index];
  const replaced =
    body.slice(0, item.offset) +
    reindent(render(ENTRY, layout), lineIndent(body, item.offset), layout) +
    body.slice(valueEnd(body, item.offset));
  return { text: bom + replaced };
}

/** The text without ralphkit's entry, and without what `record` says install added around it; null: delete the file. */
export function removeStopHook(text: string, record: ClaudeHookRecord, file: string): string | null {
  let { bom, body, root } = parseSettings(text, file);
  const stop = path(root, ['hooks', 'Stop']);
  if (stop?.kind !== 'array') return text;
  const index = stop.items.findIndex(isOurs);
  if (index < 0) return text;
  body = removeItem(body, stop, index, record.added === 'entry' ? record.gap : undefined);
  // What install added around the entry goes too, but only while it is empty (the user may have put more in it).
  for (const [level, keys] of [
    ['Stop', ['hooks']],
    ['hooks', []],
  ] as const) {
    if (!addedAtOrAbove(record, level)) break;
    root = parseSettings(body, file).root;
    const parent = path(root, [...keys]) as JsonObject;
    const at = parent.entries.findLastIndex((e) => e.key === level);
    const value = parent.entries[at].value;
    if ((value.kind === 'array' && value.items.length) || (value.kind === 'object' && value.entries.length)) break;
    body = removeItem(body, parent, at, record.added === level ? record.gap : undefined);
  }
  if (record.added === 'file' && body === '{}\n') return null;
  return bom + body;
}

function addedAtOrAbove(record: ClaudeHookRecord, level: 'Stop' | 'hooks'): boolean {
  return level === 'Stop' ? record.added !== 'entry' : record.added === 'hooks' || record.added === 'file';
}

function parseSettings(text: string, file: string): { bom: string; body: string; root: JsonObject } {
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = text.slice(bom.length);
  const parsed = parseJsonWithPositions(body);
  if (!parsed.ok) {
    const { line, col } = makeLocator(body)(parsed.error.offset);
    throw settingsError(`${file}:${line}:${col}: ${parsed.error.message}`);
  }
  return { bom, body, root: expectKind(parsed.root, 'object', file) };
}

function expectKind<K extends 'object' | 'array'>(
  node: JsonNode,
  kind: K,
  what: string,
): Extract<JsonNode, { kind: K }> {
  if (node.kind !== kind)
    throw settingsError(
      `${what} is ${node.kind === 'array' || node.kind === 'object' ? `an ${node.kind}` : `a ${node.kind}`}, where Claude Code expects ${kind === 'object' ? 'an object' : 'an array'}`,
    );
  return node as Extract<JsonNode, { kind: K }>;
}

function settingsError(message: string): RalphkitError {
  return new RalphkitError(`cannot add or remove ralphkit's Stop hook: ${message}; nothing was written`, {
    exitCode: EXIT.refused,
    hint: 'fix the file (Claude Code reads it too), then run the same command again',
  });
}

/** The last member named `key`: the one JSON.parse (and so Claude Code) keeps. */
function member(object: JsonObject, key: string): JsonNode | undefined {
  return object.entries.findLast((e) => e.key === key)?.value;
}

function path(root: JsonObject, keys: readonly string[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const key of keys) node = node?.kind === 'object' ? member(node, key) : undefined;
  return node;
}

function isOurs(node: JsonNode): boolean {
  const hooks = node.kind === 'object' ? member(node, 'hooks') : undefined;
  if (hooks?.kind !== 'array') return false;
  return hooks.items.some((h) => {
    const command = h.kind === 'object' ? member(h, 'command') : undefined;
    return command?.kind === 'string' && OURS.test(String(command.value));
  });
}

// Into a container with items: `,<newline><indent>item` after the last one. Into an empty one: the item on its own
// line, with what was between the brackets recorded (`gap`) so taking it out puts exactly that back.
function insertItem(
  bom: string,
  body: string,
  container: Container,
  itemText: string,
  layout: Layout,
  added: ClaudeHookRecord['added'],
) {
  const items = itemsOf(container);
  if (items.length) {
    const last = items[items.length - 1];
    // An item that shares its line with what comes before (`"Stop": [{...}]`) gives no indent to copy.
    const ownLine = lineIndent(body, last.start);
    const indent = /^[ \t]*$/.test(body.slice(body.lastIndexOf('\n', last.start - 1) + 1, last.start))
      ? ownLine
      : lineIndent(body, container.offset) + layout.unit;
    const at = valueEnd(body, last.valueOffset);
    return {
      text: bom + body.slice(0, at) + `,${layout.nl}${indent}${reindent(itemText, indent, layout)}` + body.slice(at),
      record: { added },
    };
  }
  const close = valueEnd(body, container.offset) - 1;
  const outer = lineIndent(body, container.offset);
  const inner = `${layout.nl}${outer}${layout.unit}${reindent(itemText, outer + layout.unit, layout)}${layout.nl}${outer}`;
  const gap = body.slice(container.offset + 1, close);
  return { text: bom + body.slice(0, container.offset + 1) + inner + body.slice(close), record: { added, gap } };
}

// The inverse of insertItem: the text from the end of the item before to the end of this one; for an only item,
// everything between the brackets (replaced by `gap` when install recorded one).
function removeItem(body: string, container: Container, index: number, gap: string | undefined): string {
  const items = itemsOf(container);
  if (items.length === 1)
    return body.slice(0, container.offset + 1) + (gap ?? '') + body.slice(valueEnd(body, container.offset) - 1);
  if (index === 0) return body.slice(0, items[0].start) + body.slice(items[1].start);
  return (
    body.slice(0, valueEnd(body, items[index - 1].valueOffset)) + body.slice(valueEnd(body, items[index].valueOffset))
  );
}

function itemsOf(container: Container): { start: number; valueOffset: number }[] {
  if (container.kind === 'array') return container.items.map((n) => ({ start: n.offset, valueOffset: n.offset }));
  return container.entries.map((e) => ({ start: e.keyOffset, valueOffset: e.value.offset }));
}

/** The offset just past the JSON value starting at `start` (the text is already known to be valid JSON). */
export function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i) - 1;
      if (depth === 0) return i + 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (--depth === 0) return i + 1;
    } else if (depth === 0) return start + /^[^\s,\]}]*/.exec(text.slice(start))![0].length;
  }
  return text.length;
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

function lineIndent(text: string, offset: number): string {
  const lineStart = Math.max(text.lastIndexOf('\n', offset - 1), text.lastIndexOf('\r', offset - 1)) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

function detectLayout(text: string): Layout {
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const unit = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return { nl, unit: unit.startsWith('\t') ? '\t' : unit };
}

function render(value: unknown, layout: Layout): string {
  return JSON.stringify(value, null, layout.unit);
}

/** A rendered value's later lines moved right by `indent`, in the file's own newline. */
function reindent(rendered: string, indent: string, layout: Layout): string {
  return rendered.split('\n').join(`${layout.nl}${indent}`);
}
