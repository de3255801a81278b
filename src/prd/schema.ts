// The fields of prd.json (SPEC §5) as tables, and the checks that walk a parsed document against them.
// Unknown fields are allowed: the format is a superset, and other tools add their own.
import type { JsonArray, JsonNode, JsonObject } from './json-parse.js';
import { SKIP_SPELLINGS } from './skip.js';
import type { PrdProblemCode } from './types.js';

export type FieldType = 'string' | 'number' | 'boolean' | 'string[]' | 'array';

export interface FieldSpec {
  key: string;
  type: FieldType;
  required?: boolean;
  /** A string that must not be empty, or a string array whose entries must not be. */
  nonEmpty?: boolean;
  /** An array that needs at least one entry; the text says why, after "<field> is empty: ". */
  needsItems?: string;
  /** Said after "<field>[i] is empty: " for an empty entry (with `nonEmpty`). */
  emptyItemHint?: string;
  /** Strings accepted besides the type (`passes`: the spellings of skip.ts), which the validator warns about. */
  alsoStrings?: readonly string[];
}

export const PLAN_FIELDS: FieldSpec[] = [
  { key: 'project', type: 'string' },
  { key: 'branchName', type: 'string', required: true },
  { key: 'baseBranch', type: 'string' },
  { key: 'description', type: 'string' },
  { key: 'checks', type: 'string[]', nonEmpty: true },
  { key: 'setup', type: 'string' },
  // Pinned tests (SPEC §6): globs of files checks run with as they were at the plan commit, added to the defaults.
  { key: 'protect', type: 'string[]', nonEmpty: true },
  { key: 'protectDefaults', type: 'boolean' },
  { key: 'userStories', type: 'array', required: true },
];

export const STORY_FIELDS: FieldSpec[] = [
  { key: 'id', type: 'string', required: true, nonEmpty: true },
  { key: 'title', type: 'string', required: true, nonEmpty: true },
  { key: 'description', type: 'string' },
  // A story nobody can check is never done: not by the agent, the runner or a reviewer.
  {
    key: 'acceptanceCriteria',
    type: 'string[]',
    required: true,
    nonEmpty: true,
    needsItems: 'give the story at least one verifiable criterion',
    emptyItemHint: 'write a verifiable criterion there or remove the entry',
  },
  { key: 'priority', type: 'number', required: true },
  { key: 'passes', type: 'boolean', required: true, alsoStrings: SKIP_SPELLINGS },
  { key: 'skip', type: 'boolean' },
  { key: 'notes', type: 'string' },
  { key: 'dependsOn', type: 'string[]', nonEmpty: true },
  { key: 'checks', type: 'string[]', nonEmpty: true },
  // Pinned files this story is meant to change: its claims are checked with the claimed commit's versions.
  { key: 'mayChange', type: 'string[]', nonEmpty: true },
  // Whether a reviewer must SHIP this story (SPEC §11); not the agent's to change (verify/prd-diff.ts).
  { key: 'review', type: 'boolean' },
];

const TYPE_NAME: Record<FieldType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  'string[]': 'an array of strings',
  array: 'an array',
};

/** Receives every problem: where it starts (a text offset, when known), its kind, message and JSON path. */
export type Report = (offset: number | undefined, code: PrdProblemCode, message: string, path: string) => void;

/** Where an object sits: its JSON path and the prefix its messages start with. */
export interface Place {
  path: string;
  label: string;
}

/** Checks one object against a field table; returns the nodes of the fields whose type is right. */
export function checkFields(obj: JsonObject, specs: FieldSpec[], place: Place, report: Report): Map<string, JsonNode> {
  const found = new Map<string, JsonNode>();
  for (const spec of specs) {
    const entry = lastEntry(obj, spec.key);
    if (entry === undefined) {
      if (!spec.required) continue;
      const message = `${place.label}missing required field "${spec.key}" (${TYPE_NAME[spec.type]})${suggest(obj, spec.key, specs)}`;
      report(obj.offset, 'missing', message, join(place.path, spec.key));
    } else if (typeProblem(entry.value, spec) === undefined) {
      found.set(spec.key, entry.value);
    } else {
      reportField(entry.value, spec, place, report);
    }
  }
  return found;
}

/** A field table looked up by key, with its count of required fields: for validate's fast path (quick-check.ts). */
export interface FieldTable {
  specs: FieldSpec[];
  byKey: Map<string, FieldSpec>;
  required: number;
}

const tables = new WeakMap<FieldSpec[], FieldTable>();

export function fieldTable(specs: FieldSpec[]): FieldTable {
  let table = tables.get(specs);
  if (!table) {
    table = { specs, byKey: new Map(specs.map((s) => [s.key, s])), required: specs.filter((s) => s.required).length };
    tables.set(specs, table);
  }
  return table;
}

/**
 * typeProblem below, for a value JSON.parse made and reduced to "is there none": the same rules, for validate's
 * fast path (quick-check.ts). Keep the two in step.
 */
export function valueIsClean(value: unknown, spec: FieldSpec): boolean {
  switch (spec.type) {
    case 'string':
      return typeof value === 'string' && !(spec.nonEmpty && isBlank(value));
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value) && !(spec.needsItems && value.length === 0);
    case 'string[]':
      if (!Array.isArray(value) || (spec.needsItems && value.length === 0)) return false;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item !== 'string' || (spec.nonEmpty === true && isBlank(item))) return false;
      }
      return true;
  }
}

/** `s.trim() === ''`, answered without trimming when the string starts with a visible ASCII character. */
function isBlank(s: string): boolean {
  const c = s.charCodeAt(0);
  return !(c > 0x20 && c < 0x7f) && s.trim() === '';
}

/** Why a field's value is wrong, without building any text on the common path where it is right. */
function typeProblem(node: JsonNode, spec: FieldSpec): 'type' | 'finite' | 'empty' | 'no-items' | 'items' | undefined {
  if (node.kind === 'string' && spec.alsoStrings?.includes(String(node.value))) return undefined;
  if (!hasType(node, spec.type)) return 'type';
  if (spec.needsItems && node.kind === 'array' && node.items.length === 0) return 'no-items';
  if (node.kind === 'number' && !Number.isFinite(node.value)) return 'finite';
  if (spec.nonEmpty && node.kind === 'string' && String(node.value).trim() === '') return 'empty';
  if (spec.type === 'string[]' && (node as JsonArray).items.some((item) => itemProblem(item, spec))) return 'items';
  return undefined;
}

function itemProblem(item: JsonNode, spec: FieldSpec): boolean {
  return item.kind !== 'string' || (spec.nonEmpty === true && String(item.value).trim() === '');
}

function reportField(node: JsonNode, spec: FieldSpec, place: Place, report: Report): void {
  const path = join(place.path, spec.key);
  const label = `${place.label}${spec.key}`;
  const problem = typeProblem(node, spec);
  if (problem === 'type')
    report(node.offset, 'type', `${label} must be ${TYPE_NAME[spec.type]}, found ${describeNode(node)}`, path);
  if (problem === 'finite') report(node.offset, 'type', `${label} must be a finite number`, path);
  if (problem === 'empty') report(node.offset, 'empty', `${label} is empty`, path);
  if (problem === 'no-items') report(node.offset, 'empty', `${label} is empty: ${spec.needsItems}`, path);
  if (problem !== 'items') return;
  (node as JsonArray).items.forEach((item, i) => {
    if (!itemProblem(item, spec)) return;
    const code = item.kind === 'string' ? 'empty' : 'type';
    const empty = `${label}[${i}] is empty${spec.emptyItemHint ? `: ${spec.emptyItemHint}` : ''}`;
    const message = code === 'empty' ? empty : `${label}[${i}] must be a string, found ${describeNode(item)}`;
    report(item.offset, code, message, `${path}[${i}]`);
  });
}

function hasType(node: JsonNode, type: FieldType): boolean {
  if (type === 'string[]' || type === 'array') return node.kind === 'array';
  return node.kind === type;
}

/** JSON.parse keeps the last of duplicate keys, so the checks look at the same one. */
export function lastEntry(obj: JsonObject, key: string) {
  for (let i = obj.entries.length - 1; i >= 0; i--) if (obj.entries[i].key === key) return obj.entries[i];
  return undefined;
}

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function describeNode(node: JsonNode): string {
  if (node.kind === 'object') return 'an object';
  if (node.kind === 'array') return 'an array';
  if (node.kind === 'null') return 'null';
  if (node.kind === 'boolean') return String(node.value);
  const shown = JSON.stringify(node.value);
  const short = shown.length > 40 ? `${shown.slice(0, 37)}...` : shown;
  return `${node.kind === 'string' ? 'a string' : 'a number'} (${short})`;
}

/** For a missing field: an unknown key that looks like a misspelling of it. */
function suggest(obj: JsonObject, missing: string, specs: FieldSpec[]): string {
  const known = new Set(specs.map((s) => s.key));
  const near = obj.entries.find(
    (e) => !known.has(e.key) && (looksLike(e.key, missing) || meantKey(e.key, specs) === missing),
  );
  return near ? `; found "${near.key}", did you mean "${missing}"?` : '';
}

// Names real plans (and other Ralph tools) use for a field ralphkit calls otherwise. Only these, and a known key
// written in another case or with separators (depends_on), get "did you mean": never a guess at an unrelated key.
const KEY_ALIASES: Record<string, string> = {
  stories: 'userStories',
  dependencies: 'dependsOn',
  blockedby: 'dependsOn',
};

const meantKeys = new WeakMap<FieldSpec[], Map<string, string>>();

/** The field of `specs` that an unknown `key` most likely means, or undefined when it is just another field. */
export function meantKey(key: string, specs: FieldSpec[]): string | undefined {
  let table = meantKeys.get(specs);
  if (!table) {
    const keys = new Set(specs.map((s) => s.key));
    table = new Map(Object.entries(KEY_ALIASES).filter(([, to]) => keys.has(to)));
    for (const k of keys) table.set(squash(k), k);
    meantKeys.set(specs, table);
  }
  const meant = table.get(squash(key));
  return meant === key ? undefined : meant;
}

function squash(key: string): string {
  return key.toLowerCase().replace(/[-_ ]/g, '');
}

/** Unknown keys that stand for an optional field the object lacks: the field is not read, so it is probably a slip. */
export function checkMeantKeys(obj: JsonObject, specs: FieldSpec[], place: Place, warn: Report): void {
  const { byKey } = fieldTable(specs);
  for (const entry of obj.entries) {
    const meant = byKey.has(entry.key) ? undefined : meantKey(entry.key, specs);
    // A missing required field already says "did you mean" in its error.
    if (meant === undefined || byKey.get(meant)!.required || lastEntry(obj, meant)) continue;
    warn(
      entry.keyOffset,
      'did-you-mean',
      `${place.label}"${entry.key}" is not a field ralphkit reads, so it is ignored; did you mean "${meant}"?`,
      join(place.path, entry.key),
    );
  }
}

// Another case alone is meantKey's (squash lowercases), so only a slip of a letter or two is left to this.
function looksLike(a: string, b: string): boolean {
  return b.length > 3 && Math.abs(a.length - b.length) <= 2 && editDistance(a.toLowerCase(), b.toLowerCase()) <= 2;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}
