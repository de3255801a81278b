// The fast answer for the usual case, a plan with nothing wrong: JSON.parse, one walk over what it returns
// (duplicate keys, depth), and the schema's checks on plain values. It says only "clean" or "not sure"; when it is not sure, validate.ts runs
// the position-tracking parser and the full checks, which find and place every problem exactly as before.
// Built-ins only: the loop engine bundles this file.
import { branchNameProblem } from './branch-name.js';
import { MAX_DEPTH } from './json-parse.js';
import { PLAN_FIELDS, STORY_FIELDS, fieldsAreClean } from './schema.js';
import type { Prd } from './types.js';

/** The plan when the full check would find no problem in `text`; undefined when it might find one. */
export function quickCheckPlan(text: string): Prd | undefined {
  if (text.charCodeAt(0) === 0xfeff || inheritsEnumerable()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Nested as deep as the position parser refuses: let it say so.
  const shape = measureValue(value);
  if (!shape) return undefined;
  // One `:` outside strings per member as written; JSON.parse keeps one member per key, so a duplicate key
  // leaves fewer members than separators. Without \u escapes, every `:` inside a string is one in the value.
  const separators = text.includes('\\u') ? countColons(text) : countChar(text, ':') - shape.colonsInStrings;
  if (separators !== shape.members) return undefined;
  return planIsClean(value) ? (value as Prd) : undefined;
}

/** The checks walk objects with for...in, which would also list a key someone added to Object.prototype. */
function inheritsEnumerable(): boolean {
  for (const _ in {}) return true;
  return false;
}

/**
 * One walk over a parsed value: the members of all its objects, the `:` in all its strings (keys too), or
 * undefined when a container sits where the position parser would find its children too deep.
 */
export function measureValue(root: unknown): { members: number; colonsInStrings: number } | undefined {
  let members = 0;
  let colonsInStrings = 0;
  const walk = (value: unknown, depth: number): boolean => {
    if (typeof value === 'string') {
      colonsInStrings += countChar(value, ':');
      return true;
    }
    if (typeof value !== 'object' || value === null) return true;
    if (depth >= MAX_DEPTH) return false;
    if (Array.isArray(value)) {
      for (const item of value) if (!walk(item, depth + 1)) return false;
      return true;
    }
    for (const key in value) {
      members++;
      colonsInStrings += countChar(key, ':');
      if (!walk((value as Record<string, unknown>)[key], depth + 1)) return false;
    }
    return true;
  };
  return walk(root, 0) ? { members, colonsInStrings } : undefined;
}

export function countChar(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/**
 * The number of `:` outside strings, read from the text alone (for text with \u escapes, which may spell a
 * `:`). Only called on text JSON.parse accepted, so every string is closed. indexOf does the walking.
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
    const after = closingQuote(text, quote) + 1;
    quote = text.indexOf('"', after);
    if (colon < after) colon = text.indexOf(':', after);
  }
  return colons;
}

/** The quote that ends the string opening at `open`: the next one not escaped by an odd run of backslashes. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/** checkPlan (validate.ts) on the parsed value, reduced to "would it report anything". */
function planIsClean(root: unknown): boolean {
  if (!isObject(root) || !fieldsAreClean(root, PLAN_FIELDS)) return false;
  for (const key of ['branchName', 'baseBranch']) if (Object.hasOwn(root, key) && branchNameProblem(String(root[key]))) return false;
  const stories = root.userStories as unknown[];
  if (stories.length === 0) return false;
  const indexOf = new Map<string, number>();
  const deps: string[][] = [];
  for (let i = 0; i < stories.length; i++) {
    const story = stories[i];
    if (!isObject(story) || !fieldsAreClean(story, STORY_FIELDS)) return false;
    const id = story.id as string;
    if (indexOf.has(id)) return false;
    indexOf.set(id, i);
    deps.push(Object.hasOwn(story, 'dependsOn') ? (story.dependsOn as string[]) : []);
  }
  return dependenciesAreClean(deps, indexOf);
}

/** Every dependency names a story and none leads back to itself. */
function dependenciesAreClean(deps: readonly string[][], indexOf: ReadonlyMap<string, number>): boolean {
  // Plans usually list a story after what it depends on; then there can be no cycle.
  let forward = false;
  for (let i = 0; i < deps.length; i++) {
    for (const dep of deps[i]) {
      const target = indexOf.get(dep);
      if (target === undefined) return false;
      if (target >= i) forward = true;
    }
  }
  return !forward || isAcyclic(deps, indexOf);
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
