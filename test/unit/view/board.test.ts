import { describe, expect, it } from 'vitest';
import { LEDGER_PER_STORY, planBoard, planCardState } from '../../../src/view/board.js';
import { planColumns, planNext, planRows } from '../../../src/view/board-layout.js';
import type { LedgerLine, VerdictStatus } from '../../../src/engine/store/ledger.js';
import type { Prd, Story } from '../../../src/prd/types.js';
import { story } from '../../support/plan.js';

const s = (id: string, dependsOn: string[] = [], o: Partial<Story> = {}): Story =>
  story(id, { title: id, acceptanceCriteria: [], dependsOn, ...o });
const cols = (stories: Story[]) => Object.fromEntries(planColumns(stories));

describe('planCardState', () => {
  it.each([
    [true, 'verified', 'verified'],
    [true, 'reported', 'passed'], // a ledger's word, not sealed
    [true, 'unverified', 'passed'],
    [true, null, 'passed'],
    [true, 'rejected', 'passed'], // claimed again after a rejection, not yet checked
    [false, 'rejected', 'rejected'],
    [false, 'verified', 'open'], // reset by hand after it was verified
    [false, 'reported', 'open'],
    [false, null, 'open'],
  ] as const)('passes=%s, verdict=%s → %s', (passes, verdict, expected) => {
    expect(planCardState(passes, verdict)).toBe(expected);
  });
});

describe('planColumns', () => {
  it.each([
    ['independent stories share column 0', [s('A'), s('B')], { A: 0, B: 0 }],
    ['a chain steps right', [s('C', ['B']), s('B', ['A']), s('A')], { A: 0, B: 1, C: 2 }],
    [
      'a diamond goes one past its deepest dependency',
      [s('A'), s('B', ['A']), s('C', ['A', 'B']), s('D', ['C', 'A'])],
      { A: 0, B: 1, C: 2, D: 3 },
    ],
    ['an unknown dependency is ignored', [s('A', ['NOPE'])], { A: 0 }],
    ['a cycle is cut, not looped forever', [s('A', ['B']), s('B', ['A'])], { A: 1, B: 0 }],
    ['a self-dependency is cut', [s('A', ['A'])], { A: 0 }],
  ])('%s', (_name, stories, expected) => {
    expect(cols(stories)).toEqual(expected);
  });
});

describe('planRows', () => {
  it('places a story near what it depends on, then by priority', () => {
    const stories = [
      s('A', [], { priority: 2 }),
      s('B', [], { priority: 1 }),
      s('X', ['A'], { priority: 1 }),
      s('Y', ['B'], { priority: 9 }),
    ];
    const rows = planRows(stories, planColumns(stories));
    expect(Object.fromEntries(rows)).toEqual({ B: 0, A: 1, Y: 0, X: 1 });
  });
});

describe('planNext', () => {
  it.each([
    ['the highest priority open story', [s('A', [], { priority: 2 }), s('B', [], { priority: 1 })], 'B'],
    [
      'skips stories whose dependencies do not pass',
      [s('A', [], { priority: 5 }), s('B', ['A'], { priority: 1 })],
      'A',
    ],
    ['dependencies that pass free a story', [s('A', [], { passes: true }), s('B', ['A'], { priority: 1 })], 'B'],
    ['equal priority: plan order', [s('A', [], { priority: 1 }), s('B', [], { priority: 1 })], 'A'],
    ['nothing left', [s('A', [], { passes: true })], null],
  ])('%s', (_name, stories, expected) => {
    expect(planNext(stories)).toBe(expected);
  });
});

const checkLine = (story: string, exitCode: number, time = 't1'): LedgerLine => ({
  kind: 'check',
  scope: 'prd',
  time,
  loop: 'L',
  iteration: 1,
  story,
  commit: null,
  command: 'npm test',
  exitCode,
  signal: null,
  timedOut: false,
  durationMs: 1,
  outputSha256: 'h',
});
const verdictLine = (story: string, status: VerdictStatus, time = 't2', reason?: string): LedgerLine => ({
  kind: 'verdict',
  time,
  loop: 'L',
  iteration: 1,
  story,
  commit: null,
  command: null,
  exitCode: null,
  status,
  durationMs: 1,
  outputSha256: null,
  ...(reason ? { reason } : {}),
});

describe('planBoard', () => {
  it('joins plan, ledger and sealed record into cards and a summary', () => {
    const prd: Prd = {
      branchName: 'b',
      userStories: [s('A', [], { passes: true }), s('B', ['A'], { passes: true }), s('C', ['A']), s('D', ['GHOST'])],
    };
    const board = planBoard(
      prd,
      [
        checkLine('A', 0),
        verdictLine('A', 'verified'),
        checkLine('C', 1),
        verdictLine('C', 'rejected', 't2', 'check `npm test` exited 1'),
      ],
      { A: 'verified' },
    );
    expect(board.cards.map((c) => [c.id, c.state, c.column])).toEqual([
      ['A', 'verified', 0],
      ['B', 'passed', 1],
      ['C', 'rejected', 1],
      ['D', 'open', 0],
    ]);
    expect(board.cards.find((c) => c.id === 'C')).toMatchObject({
      next: true,
      verification: 'rejected',
      reason: 'check `npm test` exited 1',
    });
    expect(board.cards.find((c) => c.id === 'D')?.missingDeps).toEqual(['GHOST']);
    expect(board.cards.find((c) => c.id === 'C')?.ledger.map((e) => [e.kind, e.status])).toEqual([
      ['check', null],
      ['verdict', 'rejected'],
    ]);
    expect(board.summary).toEqual({ total: 4, passed: 2, verified: 1, reported: 0, rejected: 1, open: 1, skipped: 0 });
  });

  // The ledger is the agent's to write; only the sealed record (its story map) makes a card verified.
  it.each<[string, LedgerLine[], Record<string, VerdictStatus>, [string, string | null]]>([
    [
      'a ledger verified without a record: reported, shown as passed',
      [verdictLine('A', 'verified')],
      {},
      ['passed', 'reported'],
    ],
    [
      'a ledger verified the record confirms: verified',
      [verdictLine('A', 'verified')],
      { A: 'verified' },
      ['verified', 'verified'],
    ],
    ['the record alone (no ledger lines left): verified', [], { A: 'verified' }, ['verified', 'verified']],
    [
      'a record that says unverified does not become verified by a ledger line',
      [verdictLine('A', 'verified')],
      { A: 'unverified' },
      ['passed', 'reported'],
    ],
    [
      'a rejection in the ledger after the record: not verified',
      [verdictLine('A', 'verified', 't1'), verdictLine('A', 'rejected', 't2')],
      { A: 'verified' },
      ['passed', 'rejected'],
    ],
    ['the record names another story', [verdictLine('A', 'verified')], { B: 'verified' }, ['passed', 'reported']],
    [
      'an unverified record and ledger',
      [verdictLine('A', 'unverified')],
      { A: 'unverified' },
      ['passed', 'unverified'],
    ],
    [
      'a ledger unverified without a record: nothing to say yet',
      [verdictLine('A', 'unverified')],
      {},
      ['passed', null],
    ],
    ['no record, no ledger', [], {}, ['passed', null]],
  ])('%s', (_name, ledger, sealed, [state, verification]) => {
    const board = planBoard({ branchName: 'b', userStories: [s('A', [], { passes: true })] }, ledger, sealed);
    expect([board.cards[0].state, board.cards[0].verification]).toEqual([state, verification]);
    expect(board.summary).toMatchObject({
      passed: 1,
      verified: state === 'verified' ? 1 : 0,
      reported: verification === 'reported' ? 1 : 0,
    });
  });

  it('a story named like an Object.prototype member is not verified by inheritance', () => {
    const [card] = planBoard(
      { branchName: 'b', userStories: [s('constructor', [], { passes: true })] },
      [verdictLine('constructor', 'verified')],
      {},
    ).cards;
    expect([card.state, card.verification]).toEqual(['passed', 'reported']);
  });

  // The dashboard used to judge such stories from their check lines; the engine never decided them.
  it.each<[string, LedgerLine[], string | null]>([
    ['checks that passed but no verdict yet (runner killed mid-pass)', [checkLine('A', 0)], null],
    ['a failed check but no verdict yet', [checkLine('A', 1)], null],
    [
      'an older verdict stands while a new pass has no verdict',
      [verdictLine('A', 'verified', 't1'), checkLine('A', 1, 't2')],
      'reported',
    ],
    [
      'the newest verdict wins whatever the line order',
      [verdictLine('A', 'rejected', 't3'), verdictLine('A', 'verified', 't2')],
      'rejected',
    ],
  ])('only verdict lines decide: %s', (_name, ledger, expected) => {
    const [card] = planBoard({ branchName: 'b', userStories: [s('A', [], { passes: true })] }, ledger, {}).cards;
    expect(card.verification).toBe(expected);
  });

  it('keeps the last LEDGER_PER_STORY lines of a story, oldest first', () => {
    const lines = Array.from({ length: LEDGER_PER_STORY + 5 }, (_, i) => checkLine('A', i));
    const [card] = planBoard({ branchName: 'b', userStories: [s('A')] }, lines, {}).cards;
    expect(card.ledger.map((e) => e.exitCode)).toEqual(lines.slice(5).map((_, i) => i + 5));
  });
});

describe('stories set aside on the board', () => {
  it('are cards of their own state, counted apart, never next, and waiting on one is waiting on nothing', () => {
    const prd: Prd = {
      branchName: 'ralph/x',
      userStories: [
        s('A', [], { skip: true, priority: 1 }),
        s('B', [], { passes: 'cancelled', priority: 2 }),
        s('C', ['A'], { priority: 3 }),
        s('D', [], { passes: true }),
      ],
    };
    const board = planBoard(prd, [], {});
    expect(board.cards.map((c) => [c.id, c.state, c.next])).toEqual([
      ['A', 'skipped', false],
      ['B', 'skipped', false],
      ['C', 'open', true],
      ['D', 'passed', false],
    ]);
    expect(board.summary).toMatchObject({ total: 4, passed: 1, open: 1, skipped: 2 });
  });
});
