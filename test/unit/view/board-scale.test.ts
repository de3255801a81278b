// The board is built from lookups made once (a Map of ledger lines per story, a list per column, one settled depth
// per story), so /api/prd stays linear in the plan. These tests hold it to the plain, quadratic way of computing the
// same thing (kept below as the reference) on random plans, and count the work instead of timing it.
import { describe, expect, it } from 'vitest';
import {
  summariseLedger,
  type LedgerLine,
  type StoryLedgerState,
  type VerdictStatus,
} from '../../../src/engine/store/ledger.js';
import { planVerification, readStoryStatus } from '../../../src/engine/store/verdict-record.js';
import type { Prd, Story } from '../../../src/prd/types.js';
import {
  LEDGER_PER_STORY,
  planBoard,
  type BoardPlan,
  type CardState,
  type StoryCard,
} from '../../../src/view/board.js';
import { createBoardCache, planColumns, planNext, planRows } from '../../../src/view/board-layout.js';
import { toLedgerEntry } from '../../../src/view/ledger.js';
import { random } from '../../support/random.js';

// ---- The reference: every lookup a scan of the whole list. ----

function refDeps(s: Story): string[] {
  return Array.isArray(s.dependsOn) ? s.dependsOn.filter((d): d is string => typeof d === 'string') : [];
}

function refPrio(s: Story): number {
  return typeof s.priority === 'number' ? s.priority : Number.MAX_SAFE_INTEGER;
}

function refColumns(stories: readonly Story[]): Map<string, number> {
  const byId = new Map(stories.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return -1;
    visiting.add(id);
    let d = 0;
    for (const dep of refDeps(byId.get(id)!)) if (byId.has(dep)) d = Math.max(d, visit(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const s of stories) visit(s.id);
  return depth;
}

function refRows(stories: readonly Story[], columns: Map<string, number>): Map<string, number> {
  const rows = new Map<string, number>();
  const order = new Map(stories.map((s, i) => [s.id, i]));
  const maxColumn = Math.max(0, ...columns.values());
  for (let c = 0; c <= maxColumn; c++) {
    const inColumn = stories.filter((s) => columns.get(s.id) === c);
    const weight = (s: Story): number => {
      const placed = refDeps(s)
        .map((d) => rows.get(d))
        .filter((r): r is number => r !== undefined);
      return placed.length ? placed.reduce((a, b) => a + b, 0) / placed.length : 0;
    };
    inColumn.sort((a, b) => weight(a) - weight(b) || refPrio(a) - refPrio(b) || order.get(a.id)! - order.get(b.id)!);
    inColumn.forEach((s, i) => rows.set(s.id, i));
  }
  return rows;
}

function refNext(stories: readonly Story[]): string | null {
  const ready = stories.filter(
    (s) => s.passes !== true && refDeps(s).every((d) => stories.some((p) => p.id === d && p.passes === true)),
  );
  ready.sort((a, b) => refPrio(a) - refPrio(b));
  return ready[0]?.id ?? null;
}

function refState(passes: boolean, verdict: StoryCard['verification']): CardState {
  if (passes) return verdict === 'verified' ? 'verified' : 'passed';
  return verdict === 'rejected' ? 'rejected' : 'open';
}

function refBoard(prd: Prd, ledger: readonly LedgerLine[], sealed: Record<string, VerdictStatus>): BoardPlan {
  const stories = prd.userStories;
  const { stories: verdicts, reviews } = summariseLedger(ledger);
  const columns = refColumns(stories);
  const rows = refRows(stories, columns);
  const nextId = refNext(stories);
  const cards = stories.map((s): StoryCard => {
    const verdict = verdicts[s.id] as StoryLedgerState | undefined;
    const verification = planVerification(readStoryStatus(sealed, s.id), verdict?.status);
    return {
      id: s.id,
      state: refState(s.passes === true, verification),
      verification,
      reason: verification === 'verified' ? null : (verdict?.reason ?? null),
      column: columns.get(s.id) ?? 0,
      row: rows.get(s.id) ?? 0,
      next: s.id === nextId,
      missingDeps: refDeps(s).filter((d) => !stories.some((o) => o.id === d)),
      review: Object.hasOwn(reviews, s.id) ? reviews[s.id] : null,
      ledger: ledger
        .filter((l) => l.story === s.id)
        .slice(-LEDGER_PER_STORY)
        .map(toLedgerEntry),
    };
  });
  const count = (state: CardState) => cards.filter((c) => c.state === state).length;
  const summary = {
    total: cards.length,
    passed: count('verified') + count('passed'),
    verified: count('verified'),
    reported: cards.filter((c) => c.state === 'passed' && c.verification === 'reported').length,
    rejected: count('rejected'),
    open: count('open'),
    skipped: count('skipped'),
  };
  return { cards, summary };
}

// ---- Random plans: a main chain with side branches, plus the odd cycle, ghost, duplicate id and stray type. ----

interface Fixture {
  prd: Prd;
  ledger: LedgerLine[];
  sealed: Record<string, VerdictStatus>;
}

function randomFixture(n: number, seed: number): Fixture {
  const rnd = random(seed);
  const pick = (k: number) => Math.floor(rnd() * k);
  const id = (i: number) => `S-${i}`;
  const userStories: Story[] = Array.from({ length: n }, (_, i) => {
    let dependsOn: unknown;
    if (i === 0 || i % 23 === 0)
      dependsOn = []; // the head of a new branch
    else {
      const list: unknown[] = [id(i - 1 - (rnd() < 0.25 ? pick(Math.min(i, 8)) : 0))];
      if (rnd() < 0.3) list.push(id(pick(i))); // a second, older dependency: branches join
      if (rnd() < 0.03) list.push(`GHOST-${i}`);
      if (rnd() < 0.02 && i + 3 < n) list.push(id(i + 3)); // points forward: sometimes closes a cycle
      if (rnd() < 0.01) list.push(id(i)); // itself
      if (rnd() < 0.01) list.push(42);
      dependsOn = rnd() < 0.01 ? id(0) : list; // now and then not a list at all
    }
    const story: Story = {
      id: i % 97 === 50 ? id(i - 3) : id(i),
      title: `Story ${i}`,
      acceptanceCriteria: ['works'],
      priority: 1 + pick(20),
      passes: rnd() < 0.4,
      dependsOn: dependsOn as string[],
    };
    if (rnd() < 0.02) delete (story as Partial<Story>).priority;
    if (rnd() < 0.01) story.passes = 'yes' as unknown as boolean;
    return story;
  });
  const ledger: LedgerLine[] = [];
  const statuses: VerdictStatus[] = ['verified', 'unverified', 'rejected'];
  for (let k = 0; k < n * 3; k++) {
    const story = rnd() < 0.02 ? `GONE-${k}` : rnd() < 0.05 ? id(7) : id(pick(n)); // S-7 gets more than LEDGER_PER_STORY lines
    const time = `2026-12-01T10:${String(pick(60)).padStart(2, '0')}:00Z`;
    const base = { time, loop: `L${pick(3)}`, iteration: pick(9), story, commit: null, durationMs: pick(100) };
    if (rnd() < 0.6)
      ledger.push({
        ...base,
        kind: 'check',
        scope: 'prd',
        command: 'npm test',
        exitCode: pick(2),
        signal: null,
        timedOut: false,
        outputSha256: 'h',
      } as LedgerLine);
    else
      ledger.push({
        ...base,
        kind: 'verdict',
        command: null,
        exitCode: null,
        status: statuses[pick(3)],
        outputSha256: null,
        ...(rnd() < 0.5 ? { reason: `reason ${k}` } : {}),
      } as LedgerLine);
  }
  const sealed: Record<string, VerdictStatus> = {};
  for (let i = 0; i < n; i += 1 + pick(4)) sealed[id(i)] = rnd() < 0.8 ? 'verified' : 'unverified';
  return { prd: { branchName: 'ralph/random', userStories }, ledger, sealed };
}

describe('the board on random plans equals the plain reference', () => {
  it.each([1, 2, 3, 4, 5])('seed %i: 300 stories, chain and branches', (seed) => {
    const { prd, ledger, sealed } = randomFixture(300, seed);
    const expected = refBoard(prd, ledger, sealed);
    const board = planBoard(prd, ledger, sealed);
    expect(JSON.stringify(board)).toBe(JSON.stringify(expected));
    // The columns and rows, including the order their maps list the stories in.
    const columns = planColumns(prd.userStories);
    expect([...columns]).toEqual([...refColumns(prd.userStories)]);
    expect([...planRows(prd.userStories, columns)]).toEqual([...refRows(prd.userStories, columns)]);
    expect(planNext(prd.userStories)).toBe(refNext(prd.userStories));
  });

  it('the fixtures do exercise what they are meant to', () => {
    const { prd, ledger } = randomFixture(300, 1);
    const board = planBoard(prd, ledger, {});
    expect(Math.max(...board.cards.map((c) => c.column))).toBeGreaterThan(10);
    expect(board.cards.some((c) => c.missingDeps.length > 0)).toBe(true);
    expect(board.cards.find((c) => c.id === 'S-7')?.ledger).toHaveLength(LEDGER_PER_STORY);
    expect(new Set(prd.userStories.map((s) => s.id)).size).toBeLessThan(prd.userStories.length);
  });

  it('a chain of 20,000 stories: one column per link, one row in each', () => {
    const stories = Array.from(
      { length: 20_000 },
      (_, i): Story => ({
        id: `S-${i}`,
        title: 't',
        acceptanceCriteria: [],
        priority: 1,
        passes: false,
        dependsOn: i ? [`S-${i - 1}`] : [],
      }),
    );
    const columns = planColumns(stories);
    expect(columns.get('S-19999')).toBe(19_999);
    expect(planRows(stories, columns).get('S-19999')).toBe(0);
  });
});

// Counts reads instead of timing: the plain way reads every story once per column and the ledger once per story.
describe('the work grows with the plan, not with its square', () => {
  function countedBoard(n: number): { storyReads: number; ledgerReads: number; ledgerLength: number } {
    const { prd, ledger, sealed } = randomFixture(n, 9);
    let storyReads = 0;
    let ledgerReads = 0;
    const stories = prd.userStories.map(
      (s) =>
        new Proxy(s, {
          get(target, key, receiver) {
            storyReads++;
            return Reflect.get(target, key, receiver);
          },
        }),
    );
    const countedLedger = new Proxy(ledger, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) ledgerReads++;
        return Reflect.get(target, key, receiver);
      },
    });
    planBoard({ ...prd, userStories: stories }, countedLedger, sealed);
    return { storyReads, ledgerReads, ledgerLength: ledger.length };
  }

  it('reads each ledger line a fixed number of times, whatever the number of stories', () => {
    for (const n of [300, 1200]) {
      const { ledgerReads, ledgerLength } = countedBoard(n);
      expect(ledgerReads).toBeLessThanOrEqual(2 * ledgerLength); // summarised once, grouped by story once
    }
  });

  it('reads each story a fixed number of times: four times the stories, four times the reads', () => {
    const small = countedBoard(300);
    const large = countedBoard(1200);
    expect(small.storyReads / 300).toBeLessThan(40);
    expect(large.storyReads / 1200).toBeLessThan(40);
    expect(large.storyReads).toBeLessThan(small.storyReads * 4.5);
  });
});

// A dashboard keeps the layout of the plan before (BoardCache): used again only when ids, dependencies and priorities
// are the same, and then the board is the one made afresh.
describe('the board with the layout kept from the plan before', () => {
  it('equals the board made afresh, edit after edit; only edits that move nothing reuse the layout', () => {
    const { prd, ledger, sealed } = randomFixture(300, 4);
    const cache = createBoardCache();
    const rnd = random(11);
    const pick = (k: number) => Math.floor(rnd() * k);
    const stories = prd.userStories;
    const any = () => pick(stories.length);
    let edited = 0;
    const edits: [string, boolean, () => void][] = [
      ['as it was', true, () => {}],
      ['passes flipped', true, () => (stories[any()].passes = rnd() < 0.5)],
      ['skipped', true, () => (stories[any()].skip = true)],
      ['retitled', true, () => (stories[any()].title = 'new title')],
      ['a priority', false, () => (stories[any()].priority = 1000 + ++edited)],
      [
        'a dependency added',
        false,
        () => {
          const s = stories[any()];
          s.dependsOn = [...(Array.isArray(s.dependsOn) ? s.dependsOn : []), 'S-0', 'S-1'];
        },
      ],
      [
        'a dependency that is not a string added',
        true,
        () => {
          const s = stories[7] as { dependsOn: unknown };
          s.dependsOn = [...(Array.isArray(s.dependsOn) ? s.dependsOn : []), 7];
        },
      ],
      [
        'dependsOn not a list',
        false,
        () => {
          const s = stories.find((x) => Array.isArray(x.dependsOn) && x.dependsOn.some((d) => typeof d === 'string'))!;
          (s as { dependsOn: unknown }).dependsOn = 'S-1';
        },
      ],
      ['an id renamed', false, () => (stories[any()].id = `R-${++edited}`)],
      ['a story removed', false, () => stories.splice(any(), 1)],
      ['stories swapped', false, () => stories.splice(0, 2, stories[1], stories[0])],
    ];
    for (let round = 0; round < 3; round++)
      for (const [what, reuses, edit] of edits) {
        // The plan parsed again: new objects, as the dashboard gets them.
        const before = JSON.parse(JSON.stringify(prd)) as Prd;
        planBoard(before, ledger, sealed, null, cache);
        edit();
        const reused = cache.reused;
        const fresh = JSON.parse(JSON.stringify(prd)) as Prd;
        expect(JSON.stringify(planBoard(fresh, ledger, sealed, null, cache)), what).toBe(
          JSON.stringify(planBoard(fresh, ledger, sealed)),
        );
        expect(cache.reused - reused, what).toBe(reuses ? 1 : 0);
      }
  });
});
