// The `status` table: the AGENT column keeps what tells loops apart, and a loop that stopped says why under its row;
// its counts come from the sealed verdict record, the ledger only reports.
import { describe, expect, it } from 'vitest';
import {
  planLoopCounts,
  renderAgentCell,
  renderLoopTable,
  type LoopCounts,
  type LoopSummary,
} from '../../../../src/engine/store/summaries.js';
import type { StoryLedgerState, VerdictStatus } from '../../../../src/engine/store/ledger.js';
import { renderHuman } from '../../../../src/engine/events.js';

const loop = (extra: Partial<LoopSummary>): LoopSummary => ({
  id: 'l1',
  status: 'complete',
  iteration: 2,
  maxIterations: 10,
  agent: 'claude',
  pid: 1,
  alive: false,
  costUsd: 0,
  prd: 'ralph/prd.json',
  storiesPassed: 1,
  storiesTotal: 1,
  storiesSkipped: 0,
  verified: 1,
  reported: 0,
  unverified: 0,
  rejected: 0,
  weak: [],
  reviews: {},
  startedAt: '',
  updatedAt: '',
  exitCode: 0,
  ...extra,
});

describe('renderAgentCell', () => {
  it.each([
    ['claude', 'claude'],
    ['cmd: /tmp/walk/agents/slow.sh', 'cmd: slow.sh'],
    ['cmd: node /tmp/walk/agents/honest.mjs', 'cmd: node honest.mjs'],
    ['cmd: ./agents/a-very-long-agent-script-name.sh --fast', 'cmd: a-very-…e.sh --fast'],
  ])('%s → %s', (agent, cell) => {
    expect(renderAgentCell(agent)).toBe(cell);
    expect(renderAgentCell(agent).length).toBeLessThanOrEqual(24);
  });
});

describe('renderLoopTable notes', () => {
  it.each([
    ['failed', loop({ status: 'failed', message: 'unexpected error: boom\nstack' }), '  └ unexpected error: boom'],
    [
      'max-iterations',
      loop({ status: 'max-iterations', message: 'max iterations reached (10) with stories still open' }),
      '  └ max iterations reached (10)',
    ],
    [
      'dead',
      loop({ status: 'dead', id: 'd1' }),
      '  └ runner gone (killed?); continue with: ./ralph/ralph.sh --resume d1',
    ],
  ])('a %s loop shows why under its row', (_, l, note) => {
    const lines = renderLoopTable([l]).split('\n');
    expect(lines[1]).toMatch(new RegExp(`^${l.id}\\s+${l.status}`));
    expect(lines[2].startsWith(note)).toBe(true);
  });

  it.each([
    ['complete', loop({ message: 'every story passes' })],
    ['running', loop({ status: 'running', alive: true, message: 'waiting' })],
  ])('a %s loop has no note', (_, l) => {
    expect(renderLoopTable([l]).trim().split('\n')).toHaveLength(2);
  });

  it.each([
    ['complete', loop({ weak: ['US-1', 'US-3'] }), '  └ weak checks (pass before any work): US-1, US-3'],
    [
      'failed',
      loop({ status: 'failed', message: 'unexpected error: boom', weak: ['US-2'] }),
      '  └ unexpected error: boom; weak checks (pass before any work): US-2',
    ],
  ])('a %s loop with weak checks names them under its row', (_, l, note) => {
    expect(renderLoopTable([l]).split('\n')[2]).toBe(note);
  });

  it('a long message is cut to one short line', () => {
    const note = renderLoopTable([loop({ status: 'refused', message: 'x'.repeat(500) })]).split('\n')[2];
    expect(note.length).toBeLessThan(120);
    expect(note.endsWith('…')).toBe(true);
  });
});

describe('renderLoopTable cost', () => {
  it.each([
    ['an --agent-cmd agent that reports nothing', loop({ agent: 'cmd: ./agent.sh', costUsd: 0 }), 'n/a'],
    ['an --agent-cmd agent with a cost carried over', loop({ agent: 'cmd: ./agent.sh', costUsd: 0.5 }), '$0.50'],
    ['claude', loop({ agent: 'claude', costUsd: 0 }), '$0.00'],
    ['claude, a cost under a cent, as the loop printed it', loop({ agent: 'claude', costUsd: 0.0025 }), '$0.0025'],
    ['claude, a cost over a dollar', loop({ agent: 'claude', costUsd: 1.2345 }), '$1.23'],
  ])('%s → %s', (_, l, cell) => {
    expect(
      renderLoopTable([l])
        .split('\n')[1]
        .split(/\s{2,}/),
    ).toContain(cell);
  });

  it('shows the same figure as the loop\'s own "cost so far" line', () => {
    for (const costUsd of [0.0025, 0.01, 0.0123, 0.5, 4.56789]) {
      const line =
        renderHuman({ type: 'iteration-end', iteration: 1, newCommit: true, noProgressStreak: 0, costUsd }, true) ?? '';
      const printed = /cost so far (\S+)$/.exec(line)?.[1];
      expect(
        renderLoopTable([loop({ agent: 'claude', costUsd })])
          .split('\n')[1]
          .split(/\s{2,}/),
      ).toContain(printed);
    }
  });
});

describe('renderLoopTable counts', () => {
  it('REPORTED sits after VERIFIED, each count under its heading', () => {
    const [head, row] = renderLoopTable([loop({ verified: 1, reported: 2, unverified: 3, rejected: 4 })]).split('\n');
    expect(head.split(/\s{2,}/).slice(-4)).toEqual(['VERIFIED', 'REPORTED', 'UNVERIFIED', 'REJECTED']);
    expect(row.split(/\s{2,}/).slice(-4)).toEqual(['1', '2', '3', '4']);
  });
});

const said = (entries: Record<string, VerdictStatus>): Record<string, StoryLedgerState> =>
  Object.fromEntries(
    Object.entries(entries).map(([id, status]) => [id, { status, commit: null, time: 't', loop: 'L', iteration: 1 }]),
  );

describe('planLoopCounts', () => {
  it.each<[string, Record<string, VerdictStatus>, Record<string, unknown> | null, LoopCounts]>([
    [
      'no record: every ledger verified is only reported',
      { A: 'verified', B: 'verified' },
      null,
      { verified: 0, reported: 2, unverified: 0, rejected: 0 },
    ],
    [
      'no record: a ledger unverified is not counted, a rejection is',
      { A: 'unverified', B: 'rejected' },
      null,
      { verified: 0, reported: 0, unverified: 0, rejected: 1 },
    ],
    [
      'the record confirms what the ledger says',
      { A: 'verified', B: 'unverified' },
      { A: 'verified', B: 'unverified' },
      { verified: 1, reported: 0, unverified: 1, rejected: 0 },
    ],
    [
      'a ledger verified the record does not confirm is reported',
      { A: 'verified', FORGED: 'verified' },
      { A: 'verified' },
      { verified: 1, reported: 1, unverified: 0, rejected: 0 },
    ],
    [
      'a record story without ledger lines still counts',
      {},
      { A: 'verified', B: 'unverified' },
      { verified: 1, reported: 0, unverified: 1, rejected: 0 },
    ],
    [
      'a rejection in the ledger after the record wins (it only understates)',
      { A: 'rejected' },
      { A: 'verified' },
      { verified: 0, reported: 0, unverified: 0, rejected: 1 },
    ],
    [
      'a record value that is no status counts for nothing',
      { A: 'verified' },
      { A: 'yes', B: 42 },
      { verified: 0, reported: 1, unverified: 0, rejected: 0 },
    ],
    [
      'inherited names are not record entries',
      { constructor: 'verified' } as Record<string, VerdictStatus>,
      {},
      { verified: 0, reported: 1, unverified: 0, rejected: 0 },
    ],
  ])('%s', (_name, ledger, record, counts) => {
    expect(planLoopCounts(said(ledger), record)).toEqual(counts);
  });
});
