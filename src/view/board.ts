// Pure: from the plan, the ledger and the newest sealed verdict record, what each card shows and where it goes.
import type { Prd, Story } from '../prd/types.js';
import { summariseLedger, type LedgerLine, type StoryLedgerState, type VerdictStatus } from '../engine/store/ledger.js';
import { planVerification, readStoryStatus } from '../engine/store/verdict-record.js';
import { toLedgerEntry, type LedgerEntry, type Verdict } from './ledger.js';

/** open: not done · passed: passes is true, not confirmed by a sealed record · verified: confirmed · rejected: the last claim was undone */
export type CardState = 'open' | 'passed' | 'verified' | 'rejected';

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
}

export interface BoardPlan {
  cards: StoryCard[];
  summary: BoardSummary;
}

/** Ledger lines kept per story for the detail panel; the newest are the useful ones. */
export const LEDGER_PER_STORY = 50;

/**
 * `ledger`: the lines of every loop's ledger, oldest first (the order the detail panel lists them in). `sealed`: the
 * story map of the newest verdict record that checks out (store/verdict-record.ts), `{}` when there is none; only it
 * makes a card verified.
 */
export function planBoard(prd: Prd, ledger: readonly LedgerLine[], sealed: Readonly<Record<string, VerdictStatus>>): BoardPlan {
  const stories = prd.userStories;
  const verdicts = summariseLedger(ledger).stories;
  const ids = new Set(stories.map((s) => s.id));
  const columns = planColumns(stories);
  const rows = planRows(stories, columns);
  const nextId = planNext(stories);
  const cards = stories.map((s): StoryCard => {
    const verdict = verdicts[s.id] as StoryLedgerState | undefined;
    const verification = planVerification(readStoryStatus(sealed, s.id), verdict?.status);
    return {
      id: s.id,
      state: planCardState(s.passes === true, verification),
      verification,
      // The ledger's reason belongs to the ledger's verdict; a sealed `verified` needs none.
      reason: verification === 'verified' ? null : verdict?.reason ?? null,
      column: columns.get(s.id) ?? 0,
      row: rows.get(s.id) ?? 0,
      next: s.id === nextId,
      missingDeps: deps(s).filter((d) => !ids.has(d)),
      ledger: ledger.filter((l) => l.story === s.id).slice(-LEDGER_PER_STORY).map(toLedgerEntry),
    };
  });
  return { cards, summary: summarize(cards) };
}

export function planCardState(passes: boolean, verdict: Verification | null): CardState {
  if (passes) return verdict === 'verified' ? 'verified' : 'passed';
  return verdict === 'rejected' ? 'rejected' : 'open';
}

/** Dependency depth per story; a cycle (which validate reports) is cut where it is found. */
export function planColumns(stories: readonly Story[]): Map<string, number> {
  const byId = new Map(stories.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return -1;
    visiting.add(id);
    let d = 0;
    for (const dep of deps(byId.get(id)!)) if (byId.has(dep)) d = Math.max(d, visit(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const s of stories) visit(s.id);
  return depth;
}

/**
 * Rows inside each column: stories sit near the average row of what they depend on, which keeps
 * edges short and mostly uncrossed; ties go to priority, then plan order.
 */
export function planRows(stories: readonly Story[], columns: Map<string, number>): Map<string, number> {
  const rows = new Map<string, number>();
  const order = new Map(stories.map((s, i) => [s.id, i]));
  const maxColumn = Math.max(0, ...columns.values());
  for (let c = 0; c <= maxColumn; c++) {
    const inColumn = stories.filter((s) => columns.get(s.id) === c);
    const weight = (s: Story): number => {
      const placed = deps(s).map((d) => rows.get(d)).filter((r): r is number => r !== undefined);
      return placed.length ? placed.reduce((a, b) => a + b, 0) / placed.length : 0;
    };
    inColumn.sort((a, b) => weight(a) - weight(b) || prio(a) - prio(b) || order.get(a.id)! - order.get(b.id)!);
    inColumn.forEach((s, i) => rows.set(s.id, i));
  }
  return rows;
}

export function planNext(stories: readonly Story[]): string | null {
  const passed = new Set(stories.filter((s) => s.passes === true).map((s) => s.id));
  const ready = stories.filter((s) => s.passes !== true && deps(s).every((d) => passed.has(d)));
  ready.sort((a, b) => prio(a) - prio(b));
  return ready[0]?.id ?? null;
}

function summarize(cards: readonly StoryCard[]): BoardSummary {
  const count = (state: CardState) => cards.filter((c) => c.state === state).length;
  const verified = count('verified');
  const reported = cards.filter((c) => c.state === 'passed' && c.verification === 'reported').length;
  return { total: cards.length, passed: verified + count('passed'), verified, reported, rejected: count('rejected'), open: count('open') };
}

function deps(s: Story): string[] {
  return Array.isArray(s.dependsOn) ? s.dependsOn.filter((d): d is string => typeof d === 'string') : [];
}

function prio(s: Story): number {
  return typeof s.priority === 'number' ? s.priority : Number.MAX_SAFE_INTEGER;
}
