// Pure: from the plan, the ledger and the newest sealed verdict record, what each card shows and where it goes.
import type { Prd, Story } from '../prd/types.js';
import { isSkipped } from '../prd/skip.js';
import {
  summariseLedger,
  type LedgerLine,
  type StoryLedgerState,
  type StoryReview,
  type VerdictStatus,
} from '../engine/store/ledger.js';
import { planVerification, readStoryStatus, sealReviews, type VerdictRecord } from '../engine/store/verdict-record.js';
import { toLedgerEntry, type LedgerEntry, type Verdict } from './ledger.js';

/**
 * open: not done · passed: passes is true, not confirmed by a sealed record · verified: confirmed · rejected: the last
 * claim was undone · skipped: set aside by the plan (prd/skip.ts), never worked on nor checked
 */
export type CardState = 'open' | 'passed' | 'verified' | 'rejected' | 'skipped';

/** A story's verdict as the page shows it: `reported` is a ledger's `verified` that no sealed record confirms. */
export type Verification = Verdict | 'reported';

export interface StoryCard {
  id: string;
  state: CardState;
  verification: Verification | null;
  reason: string | null;
  /** Column on the board: 0 for no dependencies, else one past the deepest dependency. */
  column: number;
  /** Order inside the column. */
  row: number;
  /** The story the loop is expected to pick next: the highest-priority open one whose dependencies pass. */
  next: boolean;
  /** dependsOn ids that name no story in the plan. */
  missingDeps: string[];
  /** The reviewer's newest answer and how often it asked for changes (the runner's ledger), or null: never reviewed. */
  review: StoryReview | null;
  ledger: LedgerEntry[];
}

export interface BoardSummary {
  total: number;
  passed: number;
  verified: number;
  /** Passed cards whose `verified` comes from a ledger only (part of `passed`, not of `verified`). */
  reported: number;
  rejected: number;
  open: number;
  /** Set aside: part of `total`, not of what remains to be done. */
  skipped: number;
}

export interface BoardPlan {
  cards: StoryCard[];
  summary: BoardSummary;
}

/** Ledger lines kept per story for the detail panel; the newest are the useful ones. */
export const LEDGER_PER_STORY = 50;

/**
 * `ledger`: the lines of every loop's ledger, oldest first (the order the detail panel lists them in). `sealed`: the
 * verdicts of the record of the loop this plan belongs to, for the stories it verified (store/loop-plan.ts), `{}` when
 * there is none; only it makes a card verified.
 */
export function planBoard(
  prd: Prd,
  ledger: readonly LedgerLine[],
  sealed: Readonly<Record<string, VerdictStatus>>,
  sealedReviews: Pick<VerdictRecord, 'reviews'> | null = null,
): BoardPlan {
  const stories = prd.userStories;
  const summary = summariseLedger(ledger);
  const verdicts = summary.stories;
  const reviews = sealReviews(summary.reviews, sealedReviews);
  const ids = new Set(stories.map((s) => s.id));
  const columns = planColumns(stories);
  const rows = planRows(stories, columns);
  const nextId = planNext(stories);
  const linesOf = groupLedger(ledger);
  const cards = stories.map((s): StoryCard => {
    const verdict = verdicts[s.id] as StoryLedgerState | undefined;
    const verification = planVerification(readStoryStatus(sealed, s.id), verdict?.status);
    return {
      id: s.id,
      state: isSkipped(s) ? 'skipped' : planCardState(s.passes === true, verification),
      verification,
      // The ledger's reason belongs to the ledger's verdict; a sealed `verified` needs none.
      reason: verification === 'verified' ? null : (verdict?.reason ?? null),
      column: columns.get(s.id) ?? 0,
      row: rows.get(s.id) ?? 0,
      next: s.id === nextId,
      missingDeps: deps(s).filter((d) => !ids.has(d)),
      review: Object.hasOwn(reviews, s.id) ? reviews[s.id] : null,
      ledger: (linesOf.get(s.id) ?? []).slice(-LEDGER_PER_STORY).map(toLedgerEntry),
    };
  });
  return { cards, summary: summarize(cards) };
}

/** The ledger's lines per story id, oldest first: one pass, so a card's lines are a lookup. */
function groupLedger(ledger: readonly LedgerLine[]): Map<string, LedgerLine[]> {
  const byStory = new Map<string, LedgerLine[]>();
  for (const line of ledger) {
    const list = byStory.get(line.story);
    if (list) list.push(line);
    else byStory.set(line.story, [line]);
  }
  return byStory;
}

export function planCardState(passes: boolean, verdict: Verification | null): CardState {
  if (passes) return verdict === 'verified' ? 'verified' : 'passed';
  return verdict === 'rejected' ? 'rejected' : 'open';
}

/**
 * Dependency depth per story; a cycle (which validate reports) is cut where it is found. Depth-first with an
 * explicit stack, each story settled once, so a chain of any length costs one pass and cannot overflow the stack.
 */
export function planColumns(stories: readonly Story[]): Map<string, number> {
  // A repeated id stands for its last story, as in a Map built from the list.
  const indexOf = new Map<string, number>();
  stories.forEach((s, i) => indexOf.set(s.id, i));
  const UNSEEN = -2;
  const VISITING = -1;
  const depth = new Int32Array(stories.length).fill(UNSEEN);
  const out = new Map<string, number>();
  // The stack holds, per story being visited, its index, its dependencies' indexes, the next one to look at, and the depth so far.
  const stack: { at: number; deps: number[]; next: number; depth: number }[] = [];
  const enter = (at: number) => {
    depth[at] = VISITING;
    const known: number[] = [];
    for (const d of deps(stories[at])) {
      const k = indexOf.get(d);
      if (k !== undefined) known.push(k);
    }
    stack.push({ at, deps: known, next: 0, depth: 0 });
  };
  for (const s of stories) {
    const root = indexOf.get(s.id)!;
    if (depth[root] !== UNSEEN) continue;
    enter(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.next < top.deps.length) {
        const dep = top.deps[top.next++];
        const d = depth[dep];
        if (d === UNSEEN) enter(dep);
        else if (d !== VISITING) top.depth = Math.max(top.depth, d + 1); // a visiting one closes a cycle: it counts as none
        continue;
      }
      stack.pop();
      depth[top.at] = top.depth;
      out.set(stories[top.at].id, top.depth);
      const parent = stack[stack.length - 1];
      if (parent) parent.depth = Math.max(parent.depth, top.depth + 1);
    }
  }
  return out;
}

/**
 * Rows inside each column: stories sit near the average row of what they depend on, which keeps
 * edges short and mostly uncrossed; ties go to priority, then plan order. Each story is put in its
 * column's list once, and its weight is worked out once, before its column is sorted.
 */
export function planRows(stories: readonly Story[], columns: Map<string, number>): Map<string, number> {
  const rows = new Map<string, number>();
  const order = new Map(stories.map((s, i) => [s.id, i]));
  let maxColumn = 0;
  for (const c of columns.values()) maxColumn = Math.max(maxColumn, c);
  const byColumn = new Map<number, Story[]>();
  for (const s of stories) {
    const c = columns.get(s.id);
    if (c === undefined || !Number.isInteger(c) || !(c >= 0 && c <= maxColumn)) continue;
    const list = byColumn.get(c);
    if (list) list.push(s);
    else byColumn.set(c, [s]);
  }
  // Rows are written only once a column is sorted, so a weight cannot change while its own column sorts.
  const weight = (s: Story): number => {
    let sum = 0;
    let placed = 0;
    for (const d of deps(s)) {
      const r = rows.get(d);
      if (r === undefined) continue;
      sum += r;
      placed++;
    }
    return placed ? sum / placed : 0;
  };
  for (const c of [...byColumn.keys()].sort((a, b) => a - b)) {
    const column = byColumn.get(c)!;
    if (column.length === 1) {
      rows.set(column[0].id, 0); // a chain: one story per column, nothing to sort
      continue;
    }
    const inColumn = column.map((s) => ({ s, weight: weight(s), prio: prio(s), order: order.get(s.id)! }));
    inColumn.sort((a, b) => a.weight - b.weight || a.prio - b.prio || a.order - b.order);
    inColumn.forEach(({ s }, i) => rows.set(s.id, i));
  }
  return rows;
}

export function planNext(stories: readonly Story[]): string | null {
  // A story set aside is never picked, and waiting on one is waiting on nothing (as the runner sees it).
  const settled = new Set(stories.filter((s) => s.passes === true || isSkipped(s)).map((s) => s.id));
  const ready = stories.filter((s) => s.passes !== true && !isSkipped(s) && deps(s).every((d) => settled.has(d)));
  ready.sort((a, b) => prio(a) - prio(b));
  return ready[0]?.id ?? null;
}

function summarize(cards: readonly StoryCard[]): BoardSummary {
  const count = (state: CardState) => cards.filter((c) => c.state === state).length;
  const verified = count('verified');
  const reported = cards.filter((c) => c.state === 'passed' && c.verification === 'reported').length;
  return {
    total: cards.length,
    passed: verified + count('passed'),
    verified,
    reported,
    rejected: count('rejected'),
    open: count('open'),
    skipped: count('skipped'),
  };
}

function deps(s: Story): string[] {
  return Array.isArray(s.dependsOn) ? s.dependsOn.filter((d): d is string => typeof d === 'string') : [];
}

function prio(s: Story): number {
  return typeof s.priority === 'number' ? s.priority : Number.MAX_SAFE_INTEGER;
}
