// The plan's text as its owner wrote it, with only the fields the runner changes rewritten: a story's `passes`
// and `notes`. Indentation, key order, `"notes": ""` and everything else stay byte for byte; a change the text
// edit cannot express (another field, a plan that no longer parses) falls back to the runner's own rendering.
// Built-ins only: the loop engine bundles this file.
import { parseJsonWithPositions, type JsonNode, type JsonObject } from './json-parse.js';
import type { Prd, Story } from './types.js';

/** The runner's rendering of a plan: two-space JSON with a final newline. */
export function renderPlanJson(prd: Prd): string {
  return `${JSON.stringify(prd, null, 2)}\n`;
}

/** `next` written over `before` (the plan's text on disk): only what changed in passes and notes is edited. */
export function renderPlanText(before: string | null, next: Prd): string {
  if (before === null) return renderPlanJson(next);
  return editPlanText(before, next) ?? renderPlanJson(next);
}

type Edit = { at: number; end: number; text: string };

function editPlanText(before: string, next: Prd): string | null {
  let old: Prd;
  try {
    old = JSON.parse(before) as Prd;
  } catch {
    return null;
  }
  const parsed = parseJsonWithPositions(before);
  if (!parsed.ok || !sameOutside(old, next)) return null;
  const stories = entry(parsed.root, 'userStories');
  if (stories?.kind !== 'array') return null;
  const edits: Edit[] = [];
  for (const [i, story] of next.userStories.entries()) {
    const node = stories.items[i];
    if (node?.kind !== 'object') return null;
    const was = old.userStories[i];
    if (was.passes !== story.passes && !setField(before, node, 'passes', story.passes, edits)) return null;
    if ((was.notes ?? '') !== (story.notes ?? '') && !setField(before, node, 'notes', story.notes ?? '', edits))
      return null;
  }
  edits.sort((a, b) => b.at - a.at);
  let text = before;
  for (const e of edits) text = text.slice(0, e.at) + e.text + text.slice(e.end);
  return text;
}

/** Same plan apart from each story's passes and notes (same stories, in the same order). */
function sameOutside(a: Prd, b: Prd): boolean {
  const strip = (p: Prd) => ({
    ...p,
    userStories: Array.isArray(p.userStories)
      ? p.userStories.map(({ passes: _p, notes: _n, ...rest }: Story) => rest)
      : p.userStories,
  });
  return canonical(strip(a)) === canonical(strip(b));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

function entry(node: JsonNode, key: string): JsonNode | undefined {
  if (node.kind !== 'object') return undefined;
  return node.entries.filter((e) => e.key === key).at(-1)?.value;
}

/** One scalar field set: its value replaced, or (notes only) added after `passes` in the story's own style. */
function setField(text: string, story: JsonObject, key: 'passes' | 'notes', value: unknown, edits: Edit[]): boolean {
  const rendered = JSON.stringify(value);
  const node = entry(story, key);
  if (node) {
    const end = scalarEnd(text, node);
    if (end === null) return false;
    edits.push({ at: node.offset, end, text: rendered });
    return true;
  }
  if (key !== 'notes' || value === '') return key === 'notes';
  const passes = story.entries.find((e) => e.key === 'passes');
  const first = story.entries[0];
  const passesEnd = passes ? scalarEnd(text, passes.value) : null;
  if (!passes || !first || passesEnd === null) return false;
  // The space between `{` and the first key (a newline and the indent, or one space), and the key's own colon style.
  const gap = text.slice(story.offset + 1, first.keyOffset);
  const colon = text.slice(passes.keyOffset + '"passes"'.length, passes.value.offset);
  edits.push({ at: passesEnd, end: passesEnd, text: `,${gap}"notes"${colon}${rendered}` });
  return true;
}

/** Where a string, boolean, number or null value ends; null for an object or array. */
function scalarEnd(text: string, node: JsonNode): number | null {
  if (node.kind === 'object' || node.kind === 'array') return null;
  if (node.kind !== 'string') {
    const m = /^(?:true|false|null|-?[0-9][0-9.eE+-]*)/.exec(text.slice(node.offset, node.offset + 64));
    return m ? node.offset + m[0].length : null;
  }
  let i = node.offset + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i < text.length ? i + 1 : null;
}
