// Pure: where each card goes, from the plan alone (ids, dependencies, priorities): the dependency columns, the rows
// inside them, and the story the loop is expected to pick next. Apart from what each card shows (board.ts) because
// only this part is kept from one plan to the next (`BoardCache`), and it is where a plan of thousands of stories costs.
import type { Story } from '../prd/types.js';
import { isSkipped } from '../prd/skip.js';

/**
 * What `planBoard` keeps from one plan to the next (one per dashboard): a plan written again with the same ids,
 * dependencies and priorities in the same order (a story's `passes` flipped, a title edited) has the same columns and
 * rows, so they are not worked out again. `reused` counts the plans that were laid out so.
 */
export interface BoardCache {
  layout: Layout | null;
  reused: number;
}

export function createBoardCache(): BoardCache {
  return { layout: null, reused: 0 };
}

/**
 * The plan's stories by position, looked up once: every other step works on these numbers, not on the ids (a plan of
 * thousands of stories made a map per step keyed by ids, which cost more than all else the board does).
 */
interface StoryIndex {
  /** id → the position of the last story with that id: a repeated id stands for its last story, as in a Map built from the list. */
  indexOf: Map<string, number>;
  /** Per story, `indexOf` of its own id. */
  canon: Int32Array;
  /** Per story, its dependsOn ids (the strings in it). */
  deps: string[][];
  /** Per story, `indexOf` of each of its dependencies that names a story in the plan, in dependsOn order. */
  known: number[][];
}

/** A plan's columns and rows by position, and what they were worked out from. */
interface Layout extends StoryIndex {
  ids: string[];
  prios: number[];
  /** Per `canon` position, the story's column. */
  depth: Int32Array;
  /** Per `canon` position, the story's row (-1: none). */
  rowOf: Int32Array;
}

function indexStories(stories: readonly Story[]): StoryIndex {
  const n = stories.length;
  const indexOf = new Map<string, number>();
  for (let i = 0; i < n; i++) indexOf.set(stories[i].id, i);
  const canon = new Int32Array(n);
  const deps: string[][] = new Array(n);
  const known: number[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    canon[i] = indexOf.get(stories[i].id)!;
    const ids = depsOf(stories[i]);
    const found: number[] = [];
    for (const d of ids) {
      const k = indexOf.get(d);
      if (k !== undefined) found.push(k);
    }
    deps[i] = ids;
    known[i] = found;
  }
  return { indexOf, canon, deps, known };
}

/** The cache's layout when the stories have the same ids, dependencies and priorities as those it was made for. */
export function layoutOf(stories: readonly Story[], cache: BoardCache | null): Layout {
  const kept = cache?.layout;
  if (cache && kept && sameLayout(stories, kept)) {
    cache.reused++;
    return kept;
  }
  const plan = indexStories(stories);
  const { depth } = settleColumns(plan);
  const { rowOf } = placeRows(stories, plan, columnsOfStories(plan, depth));
  const layout: Layout = { ...plan, depth, rowOf, ids: stories.map((s) => s.id), prios: stories.map(prio) };
  if (cache) cache.layout = layout;
  return layout;
}

/** Compared by value, story by story, without a lookup: cheaper than a layout made anew. */
function sameLayout(stories: readonly Story[], layout: Layout): boolean {
  if (stories.length !== layout.ids.length) return false;
  for (let i = 0; i < stories.length; i++) {
    const s = stories[i];
    if (s.id !== layout.ids[i] || prio(s) !== layout.prios[i]) return false;
    const was = layout.deps[i];
    let k = 0;
    if (Array.isArray(s.dependsOn)) {
      for (const d of s.dependsOn) {
        if (typeof d !== 'string') continue;
        if (k >= was.length || was[k] !== d) return false;
        k++;
      }
    }
    if (k !== was.length) return false;
  }
  return true;
}

/** `planNext` by position. */
export function nextOf(stories: readonly Story[], plan: StoryIndex): string | null {
  const { canon, deps, known } = plan;
  // A story set aside is never picked, and waiting on one is waiting on nothing (as the runner sees it).
  const settled = new Uint8Array(stories.length);
  for (let i = 0; i < stories.length; i++)
    if (stories[i].passes === true || isSkipped(stories[i])) settled[canon[i]] = 1;
  const ready = stories.filter(
    (s, i) =>
      s.passes !== true && !isSkipped(s) && known[i].length === deps[i].length && known[i].every((k) => settled[k]),
  );
  ready.sort((a, b) => prio(a) - prio(b));
  return ready[0]?.id ?? null;
}

/** The story the loop is expected to pick next: the highest-priority open one whose dependencies pass. */
export function planNext(stories: readonly Story[]): string | null {
  return nextOf(stories, indexStories(stories));
}

/**
 * Dependency depth per story; a cycle (which validate reports) is cut where it is found. Depth-first with an
 * explicit stack, each story settled once, so a chain of any length costs one pass and cannot overflow the stack.
 */
export function planColumns(stories: readonly Story[]): Map<string, number> {
  const { depth, settled } = settleColumns(indexStories(stories));
  const out = new Map<string, number>();
  for (const at of settled) out.set(stories[at].id, depth[at]);
  return out;
}

/** `planColumns` by position: the depth of each id's story (at its `canon` position), and the order they settled in. */
function settleColumns(plan: StoryIndex): { depth: Int32Array; settled: Int32Array } {
  const { canon, known } = plan;
  const n = canon.length;
  const UNSEEN = -2;
  const VISITING = -1;
  const depth = new Int32Array(n).fill(UNSEEN);
  const settled = new Int32Array(n);
  let count = 0;
  // The stack holds, per story being visited, its position, the next of its dependencies to look at, and the depth so far.
  const at = new Int32Array(n);
  const next = new Int32Array(n);
  const deepest = new Int32Array(n);
  let top = -1;
  const enter = (story: number) => {
    depth[story] = VISITING;
    top++;
    at[top] = story;
    next[top] = 0;
    deepest[top] = 0;
  };
  for (let r = 0; r < n; r++) {
    if (depth[canon[r]] !== UNSEEN) continue;
    enter(canon[r]);
    while (top >= 0) {
      const deps = known[at[top]];
      if (next[top] < deps.length) {
        const dep = deps[next[top]++];
        const d = depth[dep];
        if (d === UNSEEN) enter(dep);
        else if (d !== VISITING) deepest[top] = Math.max(deepest[top], d + 1); // a visiting one closes a cycle: it counts as none
        continue;
      }
      const done = at[top];
      const d = deepest[top--];
      depth[done] = d;
      settled[count++] = done;
      if (top >= 0) deepest[top] = Math.max(deepest[top], d + 1);
    }
  }
  return { depth, settled: settled.subarray(0, count) };
}

/** Per story position, the column of its id's story: every id has one once `settleColumns` ran. */
function columnsOfStories(plan: StoryIndex, depth: Int32Array): Int32Array {
  const colOf = new Int32Array(plan.canon.length);
  for (let i = 0; i < colOf.length; i++) colOf[i] = depth[plan.canon[i]];
  return colOf;
}

/**
 * Rows inside each column: stories sit near the average row of what they depend on, which keeps
 * edges short and mostly uncrossed; ties go to priority, then plan order. Each story is put in its
 * column's list once, and its weight is worked out once, before its column is sorted.
 */
export function planRows(stories: readonly Story[], columns: Map<string, number>): Map<string, number> {
  let maxColumn = 0;
  for (const c of columns.values()) maxColumn = Math.max(maxColumn, c);
  const valid = (c: number | undefined): c is number =>
    c !== undefined && Number.isInteger(c) && c >= 0 && c <= maxColumn;
  // Only the columns' order matters, so they are numbered 0, 1, 2... in it.
  const rank = new Map([...new Set([...columns.values()].filter(valid))].sort((a, b) => a - b).map((c, k) => [c, k]));
  const colOf = new Int32Array(stories.length);
  for (let i = 0; i < stories.length; i++) {
    const c = columns.get(stories[i].id);
    colOf[i] = valid(c) ? rank.get(c)! : -1;
  }
  const { rowOf, placed } = placeRows(stories, indexStories(stories), colOf);
  const rows = new Map<string, number>();
  for (const at of placed) rows.set(stories[at].id, rowOf[at]);
  return rows;
}

/**
 * `planRows` by position: `colOf` numbers each story's column from 0 (-1: none). Gives the row of each id's story (at
 * its `canon` position, -1: none) and the order they were first placed in.
 */
function placeRows(
  stories: readonly Story[],
  plan: StoryIndex,
  colOf: Int32Array,
): { rowOf: Int32Array; placed: number[] } {
  const { canon, known } = plan;
  const n = stories.length;
  const rowOf = new Int32Array(n).fill(-1);
  const placed: number[] = [];
  const place = (at: number, row: number) => {
    if (rowOf[at] < 0) placed.push(at);
    rowOf[at] = row;
  };
  // The stories by column, in plan order inside each (a counting sort: columns are numbered below n).
  let maxColumn = -1;
  for (let i = 0; i < n; i++) maxColumn = Math.max(maxColumn, colOf[i]);
  const start = new Int32Array(maxColumn + 2);
  for (let i = 0; i < n; i++) if (colOf[i] >= 0) start[colOf[i] + 1]++;
  for (let c = 0; c <= maxColumn; c++) start[c + 1] += start[c];
  const byColumn = new Int32Array(start[maxColumn + 1]);
  const fill = start.slice(0, maxColumn + 1);
  for (let i = 0; i < n; i++) if (colOf[i] >= 0) byColumn[fill[colOf[i]]++] = i;
  // Rows are written only once a column is sorted, so a weight cannot change while its own column sorts.
  const weight = (i: number): number => {
    let sum = 0;
    let count = 0;
    for (const k of known[i]) {
      if (rowOf[k] < 0) continue;
      sum += rowOf[k];
      count++;
    }
    return count ? sum / count : 0;
  };
  for (let c = 0; c <= maxColumn; c++) {
    const from = start[c];
    const to = start[c + 1];
    if (to - from === 1) {
      place(canon[byColumn[from]], 0); // a chain: one story per column, nothing to sort
      continue;
    }
    const inColumn: { i: number; weight: number; prio: number; order: number }[] = [];
    for (let k = from; k < to; k++) {
      const i = byColumn[k];
      inColumn.push({ i, weight: weight(i), prio: prio(stories[i]), order: canon[i] });
    }
    inColumn.sort((a, b) => a.weight - b.weight || a.prio - b.prio || a.order - b.order);
    inColumn.forEach(({ i }, row) => place(canon[i], row));
  }
  return { rowOf, placed };
}

function depsOf(s: Story): string[] {
  return Array.isArray(s.dependsOn) ? s.dependsOn.filter((d): d is string => typeof d === 'string') : [];
}

function prio(s: Story): number {
  return typeof s.priority === 'number' ? s.priority : Number.MAX_SAFE_INTEGER;
}
