// Pure: from the plan, the ledger and the newest sealed verdict record, what each card shows; where it goes is
// board-layout.ts.
import type { Prd } from '../prd/types.js';
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
import { layoutOf, nextOf, type BoardCache } from './board-layout.js';

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
 * there is none; only it makes a card verified. `cache`: the layout of the plan before (see BoardCache).
 */
export function planBoard(
  prd: Prd,
  ledger: readonly LedgerLine[],
  sealed: Readonly<Record<string, VerdictStatus>>,
  sealedReviews: Pick<VerdictRecord, 'reviews'> | null = null,
  cache: BoardCache | null = null,
): BoardPlan {
  const stories = prd.userStories;
  const summary = summariseLedger(ledger);
  const verdicts = summary.stories;
  const reviews = sealReviews(summary.reviews, sealedReviews);
  const layout = layoutOf(stories, cache);
  const { depth, rowOf, canon, known, deps, indexOf } = layout;
  const nextId = nextOf(stories, layout);
  const linesOf = groupLedger(ledger);
  const cards: StoryCard[] = new Array(stories.length);
  for (let i = 0; i < stories.length; i++) {
    const s = stories[i];
    const at = canon[i];
    const verdict = verdicts[s.id] as StoryLedgerState | undefined;
    const verification = planVerification(readStoryStatus(sealed, s.id), verdict?.status);
    const lines = linesOf.get(s.id);
    cards[i] = {
      id: s.id,
      state: isSkipped(s) ? 'skipped' : planCardState(s.passes === true, verification),
      verification,
      // The ledger's reason belongs to the ledger's verdict; a sealed `verified` needs none.
      reason: verification === 'verified' ? null : (verdict?.reason ?? null),
      column: depth[at],
      row: Math.max(rowOf[at], 0),
      next: s.id === nextId,
      missingDeps: known[i].length === deps[i].length ? [] : deps[i].filter((d) => !indexOf.has(d)),
      review: Object.hasOwn(reviews, s.id) ? reviews[s.id] : null,
      ledger: lines ? lines.slice(-LEDGER_PER_STORY).map(toLedgerEntry) : [],
    };
  }
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

function summarize(cards: readonly StoryCard[]): BoardSummary {
  const count: Record<CardState, number> = { open: 0, passed: 0, verified: 0, rejected: 0, skipped: 0 };
  let reported = 0;
  for (const c of cards) {
    count[c.state]++;
    if (c.state === 'passed' && c.verification === 'reported') reported++;
  }
  return {
    total: cards.length,
    passed: count.verified + count.passed,
    verified: count.verified,
    reported,
    rejected: count.rejected,
    open: count.open,
    skipped: count.skipped,
  };
}
