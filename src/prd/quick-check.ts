// The fast answer for the usual case, a plan with nothing wrong: JSON.parse, then one walk over what it returns
// that runs the schema's checks on plain values and tallies what it takes to rule out duplicate keys and depth. It says only "clean" or "not sure"; when it is not sure, validate.ts runs
// the position-tracking parser and the full checks, which find and place every problem exactly as before.
// Built-ins only: the loop engine bundles this file.
import { branchNameProblem } from './branch-name.js';
import { storyIdNeedsEscaping } from './story-ref.js';
import { needsShellQuoting } from '../util/shell-quote.js';
import { MAX_DEPTH } from './json-parse.js';
import { PLAN_FIELDS, STORY_FIELDS, fieldTable, meantKey, valueIsClean, type FieldTable } from './schema.js';
import { UNSAFE_CHAR } from './unsafe-text.js';
import type { Prd } from './types.js';

/** The plan when the full check would find no problem and no warning in `text`; undefined when it might find one. */
export function quickCheckPlan(text: string): Prd | undefined {
  if (text.charCodeAt(0) === 0xfeff || inheritsEnumerable()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const tally: Tally = { members: 0, colons: 0 };
  if (!planIsClean(value, tally)) return undefined;
  // A duplicate key: JSON.parse keeps one member per key, so the text has more `:` separators than the value has
  // members. Separators are the text's colons less those inside strings, which (without \u escapes, which may
  // spell one) are the colons in the value's strings. Anything the tally missed only makes the two differ.
  const separators = text.includes('\\u') ? countColons(text) : countChar(text, ':') - tally.colons;
  return separators === tally.members ? (value as Prd) : undefined;
}

/** Counted while the plan is checked: the members of all its objects and the `:` in all its strings (keys too). */
interface Tally {
  members: number;
  colons: number;
}

/** The walk reads keys with for...in, which would also list a key someone added to Object.prototype. */
function inheritsEnumerable(): boolean {
  for (const _ in {}) return true;
  return false;
}

const PLAN_TABLE = fieldTable(PLAN_FIELDS);
const STORY_TABLE = fieldTable(STORY_FIELDS);

/** checkPlan (validate.ts) on the parsed value, reduced to "would it report anything". */
function planIsClean(root: unknown, tally: Tally): boolean {
  // The plan's fields sit at depth 1, a story's at depth 3 (plan, userStories, story).
  if (!isObject(root) || !objectIsClean(root, PLAN_TABLE, 1, tally)) return false;
  for (const key of ['branchName', 'baseBranch'])
    if (Object.hasOwn(root, key) && (branchNameProblem(String(root[key])) || needsShellQuoting(String(root[key]))))
      return false;
  const stories = root.userStories as unknown[];
  if (stories.length === 0) return false;
  const indexOf = new Map<string, number>();
  const deps: string[][] = [];
  // Plans usually list a story after what it depends on: a dependency already seen is settled on the spot.
  let unseen = false;
  for (let i = 0; i < stories.length; i++) {
    const story = stories[i];
    if (!isObject(story) || !objectIsClean(story, STORY_TABLE, 3, tally)) return false;
    const id = story.id as string;
    // Warnings are the full check's to place (validate.ts): an unsafe id or title is handed on.
    if (UNSAFE_CHAR.test(id) || UNSAFE_CHAR.test(story.title as string) || storyIdNeedsEscaping(id)) return false;
    if (indexOf.has(id)) return false;
    indexOf.set(id, i);
    const list = Object.hasOwn(story, 'dependsOn') ? (story.dependsOn as string[]) : [];
    deps.push(list);
    for (let k = 0; k < list.length && !unseen; k++) {
      const at = indexOf.get(list[k]);
      if (at === undefined || at >= i) unseen = true; // later, itself, or no story at all: sorted out below
    }
  }
  return !unseen || dependenciesAreClean(deps, indexOf);
}

/**
 * checkFields (schema.ts) reduced to "would it report anything", tallying as it goes. A field the table does not
 * know is not judged, only tallied and measured for depth. userStories' items are left to planIsClean.
 */
function objectIsClean(obj: Record<string, unknown>, table: FieldTable, depth: number, tally: Tally): boolean {
  let required = 0;
  let colons = 0;
  for (const key in obj) {
    tally.members++;
    const value = obj[key];
    const spec = table.byKey.get(key);
    if (spec === undefined) {
      if (meantKey(key, table.specs) !== undefined) return false; // maybe a "did you mean": the full check decides
      colons += countChar(key, ':');
      if (!tallyValue(value, depth, tally)) return false;
      continue;
    }
    if (!valueIsClean(value, spec)) return false;
    if (spec.required) required++;
    if (typeof value === 'string') colons += countChar(value, ':');
    else if (spec.type === 'string[]') {
      const items = value as string[];
      for (let i = 0; i < items.length; i++) colons += countChar(items[i], ':');
    }
  }
  tally.colons += colons;
  return required === table.required;
}

/** Tallies any value; false when a container sits where the position parser would find its children too deep. */
function tallyValue(value: unknown, depth: number, tally: Tally): boolean {
  if (typeof value === 'string') {
    tally.colons += countChar(value, ':');
    return true;
  }
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!tallyValue(item, depth + 1, tally)) return false;
    return true;
  }
  for (const key in value) {
    tally.members++;
    tally.colons += countChar(key, ':');
    if (!tallyValue((value as Record<string, unknown>)[key], depth + 1, tally)) return false;
  }
  return true;
}

export function countChar(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/**
 * The number of `:` outside strings, read from the text alone (for text with \u escapes). Only called on text
 * JSON.parse accepted, so every string is closed. indexOf does the walking.
 */
export function countColons(text: string): number {
  let colons = 0;
  let colon = text.indexOf(':');
  let quote = text.indexOf('"');
  while (colon !== -1) {
    if (quote === -1 || colon < quote) {
      colons++;
      colon = text.indexOf(':', colon + 1);
      continue;
    }
    // Past the string opening at `quote`: to the next '"' not escaped by an odd run of backslashes.
    let end = quote;
    for (;;) {
      end = text.indexOf('"', end + 1);
      let slashes = 0;
      while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
      if (slashes % 2 === 0) break;
    }
    quote = text.indexOf('"', end + 1);
    if (colon < end) colon = text.indexOf(':', end + 1);
  }
  return colons;
}

/** Every dependency names a story and none leads back to itself. */
function dependenciesAreClean(deps: readonly string[][], indexOf: ReadonlyMap<string, number>): boolean {
  for (const list of deps) for (const dep of list) if (!indexOf.has(dep)) return false;
  return isAcyclic(deps, indexOf);
}

/** Kahn's algorithm: settle the stories whose dependencies are settled; any left over wait on a cycle. */
function isAcyclic(deps: readonly string[][], indexOf: ReadonlyMap<string, number>): boolean {
  const n = deps.length;
  const waiting = new Int32Array(n); // dependencies not yet settled, per story
  const dependents: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) {
    for (const dep of deps[i]) {
      waiting[i]++;
      dependents[indexOf.get(dep)!].push(i);
    }
  }
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  for (let k = 0; k < ready.length; k++) for (const j of dependents[ready[k]]) if (--waiting[j] === 0) ready.push(j);
  return ready.length === n;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
