// What the agent changed in prd.json during one iteration (SPEC §6). Pure: text in, plan out.
// The agent may only flip `passes` and edit `notes`; everything else is put back as it was, so a
// plan cannot be shrunk, reworded or stripped of its checks to make the loop end sooner. A story the plan set
// aside (`skip`, prd/skip.ts) is not the agent's at all: neither setting one aside nor taking one back is.
import type { Prd, Story } from '../../prd/types.js';
import { formatPrdProblem, validatePrdText } from '../../prd/validate.js';
import { isSkipped } from '../../prd/skip.js';

export interface PrdRepairPlan {
  /** The plan to keep: `before` with the agent's passes/notes edits on the stories that survived. */
  prd: Prd;
  /** Ids of stories that were not passing before and pass now: the claims to verify. */
  claims: string[];
  /** One line per agent edit that was undone, for the warning log. */
  restored: string[];
  /** True when `prd` differs from what the agent left on disk, so the file must be rewritten. */
  changed: boolean;
  /** True when the agent left no usable plan at all; `prd` is then `before`, to be restored verbatim. */
  unusable: boolean;
}

const AGENT_FIELDS = new Set(['passes', 'notes']);

/**
 * `before` must be a valid plan (the runner validated it); `after` is whatever the agent left. `file` names the
 * plan in messages (a syntax error is reported as `file:line:col`).
 * `baseline`, when given, is `before` already parsed (and frozen, so no caller can edit it): a file the agent left
 * byte for byte as it was is then answered without parsing either text.
 */
/** `after` is null when the file is gone (deleted, or `git rm`-ed by the agent). */
export function planPrdRepair(before: string, after: string | null, file = 'prd.json', baseline?: Prd): PrdRepairPlan {
  // The same bytes are the same plan: nothing to restore, no claim, nothing to write.
  if (after === before)
    return { prd: baseline ?? (JSON.parse(before) as Prd), claims: [], restored: [], changed: false, unusable: false };
  const base = JSON.parse(before) as Prd;
  const parsed = parseAfter(after, file);
  if (typeof parsed === 'string') {
    return {
      prd: base,
      claims: [],
      restored: [`prd.json ${parsed}; restored the whole file as it was before this iteration`],
      changed: true,
      unusable: true,
    };
  }
  const afterStories = parsed.userStories as unknown[];
  const restored = [...planTopLevel(base, parsed), ...planStoryList(base.userStories, afterStories)];
  // The first story with each id, as findStory did (a duplicate is reported by planStoryList and dropped).
  const byId = new Map<string, Record<string, unknown>>();
  for (const s of afterStories) {
    const id = storyId(s);
    if (id !== undefined && !byId.has(id)) byId.set(id, s as Record<string, unknown>);
  }
  const prd: Prd = { ...base, userStories: base.userStories.map((s) => mergeStory(s, byId.get(s.id), restored)) };
  const claims = prd.userStories
    .filter((s, i) => s.passes === true && base.userStories[i].passes !== true)
    .map((s) => s.id);
  // Nothing restored means every field but passes/notes is the agent's as it was and passes/notes are theirs: the kept
  // plan is the file's; only a restoration can make them differ, and then the full comparison decides.
  return { prd, claims, restored, changed: restored.length > 0 && !sameJson(prd, parsed), unusable: false };
}

/** JSON equality that ignores key order, so a reformatted but unchanged file is not "edited". */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Equal serialisations are equal values; different ones may differ only in key order, which canonical() settles.
  return JSON.stringify(a) === JSON.stringify(b) || canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    // sort() without a comparator orders keys by UTF-16 code units, as `<` does.
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`;
  }
  return String(JSON.stringify(v)); // JSON.stringify(undefined) is undefined: "undefined"
}

/** The parsed plan, or a description of why it cannot be used at all. */
function parseAfter(text: string | null, file: string): Prd | string {
  if (text === null) return 'was deleted';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // JSON.parse says "position 81"; the validator's line:col is what an editor can jump to.
    const problem = validatePrdText(text, file).problems.find((p) => p.code === 'syntax');
    return `was left unparseable (${problem ? formatPrdProblem(problem) : (err as Error).message})`;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'was left without a top-level object';
  if (!Array.isArray((value as Prd).userStories)) return 'was left without a userStories array';
  return value as Prd;
}

function planTopLevel(base: Prd, after: Prd): string[] {
  const keys = new Set([...Object.keys(base), ...Object.keys(after)]);
  keys.delete('userStories');
  return [...keys]
    .filter((k) => !sameJson(own(base, k), own(after, k)))
    .map((k) => `top-level field "${k}" was ${describeEdit(own(base, k), own(after, k))}; restored`);
}

function planStoryList(base: Story[], after: unknown[]): string[] {
  const ids = after.map((s) => storyId(s));
  const baseIds = base.map((s) => s.id);
  const baseSet = new Set(baseIds);
  const idSet = new Set(ids);
  const out: string[] = [];
  for (const id of baseIds) if (!idSet.has(id)) out.push(`story ${id} was deleted; restored`);
  const seen = new Set<string>();
  const kept: string[] = [];
  ids.forEach((id, i) => {
    if (id === undefined) out.push(`a story without an id was added at position ${i + 1}; removed`);
    else if (!baseSet.has(id)) out.push(`story ${id} was added; removed`);
    else if (seen.has(id)) out.push(`story ${id} was duplicated; the copy was removed`);
    else kept.push(id);
    if (id !== undefined) seen.add(id);
  });
  const keptSet = new Set(kept);
  const order = baseIds.filter((id) => keptSet.has(id));
  if (kept.join('\n') !== order.join('\n')) out.push('the order of stories was changed; restored');
  return out;
}

/** The story from `before`, with the agent's passes/notes when they are well-typed; other edits undone. */
function mergeStory(base: Story, after: Record<string, unknown> | undefined, restored: string[]): Story {
  if (!after) return base;
  const keys = new Set([...Object.keys(base), ...Object.keys(after)]);
  for (const k of keys) {
    const [was, is] = [own(base, k), own(after, k)];
    if (!AGENT_FIELDS.has(k) && !sameJson(was, is))
      restored.push(`story ${base.id}: field "${k}" was ${describeEdit(was, is)}; restored`);
  }
  const merged: Story = { ...base };
  if (isSkipped(base)) {
    if (!sameJson(after.passes, base.passes))
      restored.push(`story ${base.id}: "passes" was changed on a story the plan sets aside; restored`);
  } else if (typeof after.passes === 'boolean') merged.passes = after.passes;
  else if (!sameJson(after.passes, base.passes))
    restored.push(`story ${base.id}: "passes" was set to a non-boolean; restored`);
  if (typeof after.notes === 'string') merged.notes = after.notes;
  else if (after.notes === undefined) delete merged.notes;
  else restored.push(`story ${base.id}: "notes" was set to a non-string; restored`);
  return merged;
}

/** A key's own value: a story may hold a key named like an inherited one ("__proto__", "constructor"). */
function own(o: object, k: string): unknown {
  return Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined;
}

function storyId(s: unknown): string | undefined {
  const id = (s as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

function describeEdit(before: unknown, after: unknown): string {
  if (before === undefined) return 'added';
  if (after === undefined) return 'removed';
  return 'changed';
}

/**
 * The claims in the order to judge them: a claim after the claims it depends on (plan order otherwise), so a
 * story and its dependency claimed in one iteration are judged dependency first. A cycle keeps plan order.
 */
export function planClaimOrder(prd: Prd, claims: string[]): string[] {
  const pending = [...claims];
  const ordered: string[] = [];
  while (pending.length) {
    const next = pending.find((id) => !dependsOnOf(prd, id).some((d) => d !== id && pending.includes(d))) ?? pending[0];
    ordered.push(next);
    pending.splice(pending.indexOf(next), 1);
  }
  return ordered;
}

/**
 * The stories `id` depends on that do not pass: not passing in `prd`, or claimed this iteration and not (yet)
 * accepted. `accepted` holds the claims judged verified or unverified so far. Ids the plan does not have are
 * left to `ralphkit validate`, which refuses them before the loop starts.
 */
export function planUnmetDependencies(prd: Prd, id: string, claims: string[], accepted: ReadonlySet<string>): string[] {
  return dependsOnOf(prd, id).filter((d) => {
    const dep = prd.userStories.find((s) => s.id === d);
    if (!dep || isSkipped(dep)) return false; // set aside by the plan: nothing to wait for
    return claims.includes(d) ? !accepted.has(d) : dep.passes !== true;
  });
}

function dependsOnOf(prd: Prd, id: string): string[] {
  // `prd` is built from a valid plan, whose dependsOn lists only strings.
  return prd.userStories.find((s) => s.id === id)?.dependsOn ?? [];
}
