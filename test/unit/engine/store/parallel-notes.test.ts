// `status` under a --parallel run: a line per worker (phase, story, iteration, elapsed, branch), the merge queue, the
// stories merged and those given up; a state.json with odd values shows what it can, never throws.
import { describe, expect, it } from 'vitest';
import { renderParallelNotes } from '../../../../src/engine/store/parallel-notes.js';
import { renderLoopTable, type LoopSummary } from '../../../../src/engine/store/summaries.js';
import type { ParallelState } from '../../../../src/engine/store/state-types.js';

const NOW = Date.parse('2026-12-02T15:40:00Z');

const PARALLEL: ParallelState = {
  workers: 3,
  states: [
    {
      worker: 1,
      path: '/r.ralph-worktrees/p--w1',
      phase: 'agent',
      story: 'US-003',
      branch: 'ralph/x--US-003',
      iteration: 7,
      startedAt: '2026-12-02T15:37:55Z',
      agentPid: 4242,
    },
    {
      worker: 2,
      path: '/r.ralph-worktrees/p--w2',
      phase: 'verifying',
      story: 'US-004',
      branch: 'ralph/x--US-004',
      iteration: 6,
      startedAt: '2026-12-02T15:10:00Z',
    },
    { worker: 3, path: '/r.ralph-worktrees/p--w3', phase: 'idle', iteration: 5 },
  ],
  queue: [
    { story: 'US-001', head: 'a'.repeat(40), worker: 2 },
    { story: 'US-005', head: 'b'.repeat(40), worker: 3 },
  ],
  merged: ['US-002', 'US-006'],
  attempts: { 'US-007': 3 },
  givenUp: { 'US-007': 'the agent said STUCK\nmore detail', 'US-008': 'no progress after 3 attempts' },
};

const loop = (extra: Partial<LoopSummary>): LoopSummary => ({
  id: 'p',
  status: 'running',
  iteration: 7,
  maxIterations: 20,
  agent: 'claude',
  pid: 1,
  alive: true,
  costUsd: 0,
  prd: 'ralph/prd.json',
  storiesPassed: 2,
  storiesTotal: 8,
  storiesSkipped: 0,
  verified: 2,
  reported: 0,
  unverified: 0,
  rejected: 0,
  weak: [],
  reviews: {},
  startedAt: '',
  updatedAt: '',
  exitCode: null,
  ...extra,
});

describe('renderParallelNotes', () => {
  it('a worker per line, aligned, then the queue, merged and given-up stories', () => {
    expect(renderParallelNotes(PARALLEL, NOW)).toEqual([
      'w1  agent      US-003  iteration 7  2m05s   ralph/x--US-003',
      'w2  verifying  US-004  iteration 6  30m00s  ralph/x--US-004',
      'w3  idle       -       iteration 5',
      'merge queue: US-001 (w2), US-005 (w3)',
      'merged: US-002, US-006',
      'given up: US-007 (the agent said STUCK); US-008 (no progress after 3 attempts)',
    ]);
  });

  it('no clock: no elapsed times', () => {
    expect(renderParallelNotes(PARALLEL, null)[0]).toBe('w1  agent      US-003  iteration 7  ralph/x--US-003');
  });

  it('an empty queue, nothing merged or given up: only the workers', () => {
    expect(renderParallelNotes({ ...PARALLEL, queue: [], merged: [], givenUp: {} }, NOW)).toHaveLength(3);
  });

  it.each([
    ['not an object', 'parallel', []],
    ['null', null, []],
    ['a list', [1, 2], []],
    [
      'workers not a list, odd fields',
      { states: 'x', queue: [null, { story: 7 }], merged: 'US-1', givenUp: [] },
      ['merge queue: 7'],
    ],
    [
      'a worker with odd fields',
      { states: [{ worker: -1, phase: 3, story: null, iteration: 'x', startedAt: 'soon' }, null] },
      ['w?  3  -'],
    ],
    [
      'no phase, a fractional worker, a start that is a number',
      { states: [{ worker: 1.5, story: 'US-1', startedAt: 1234 }] },
      ['w?  ?  US-1'],
    ],
    [
      'iteration 0, started just now',
      { states: [{ worker: 1, phase: 'agent', iteration: 0, startedAt: new Date(NOW).toISOString() }] },
      ['w1  agent  -  iteration 0  0ms'],
    ],
    [
      "a start after the clock (another machine's clock)",
      { states: [{ worker: 1, phase: 'agent', startedAt: new Date(NOW + 5000).toISOString() }] },
      ['w1  agent  -'],
    ],
    [
      'a queued story of worker 0',
      {
        queue: [
          { story: 'US-1', worker: 0 },
          { story: 'US-2', worker: 1.5 },
        ],
      },
      ['merge queue: US-1 (w0), US-2'],
    ],
  ])('%s', (_, value, lines) => {
    expect(renderParallelNotes(value, NOW)).toEqual(lines);
  });
});

describe('renderLoopTable with a --parallel run', () => {
  it("the run's row, then its workers, queue, merged and given-up stories under it", () => {
    const lines = renderLoopTable([loop({ parallel: PARALLEL })], NOW).split('\n');
    expect(lines[1]).toMatch(/^p\s+running\s+7\/20\s+claude\s+yes/);
    expect(lines.slice(2, 8)).toEqual([
      '  └ w1  agent      US-003  iteration 7  2m05s   ralph/x--US-003',
      '  └ w2  verifying  US-004  iteration 6  30m00s  ralph/x--US-004',
      '  └ w3  idle       -       iteration 5',
      '  └ merge queue: US-001 (w2), US-005 (w3)',
      '  └ merged: US-002, US-006',
      '  └ given up: US-007 (the agent said STUCK); US-008 (no progress after 3 attempts)',
    ]);
  });

  it('a stopped run times its workers to its last update, not to now', () => {
    const lines = renderLoopTable(
      [loop({ status: 'dead', alive: false, updatedAt: '2026-12-02T15:38:55Z', parallel: PARALLEL })],
      NOW,
    ).split('\n');
    expect(lines).toContain('  └ w1  agent      US-003  iteration 7  1m00s   ralph/x--US-003');
  });

  it('escape sequences a worker field carries are made safe', () => {
    const evil = { ...PARALLEL, states: [{ worker: 1, path: '', phase: 'agent' as const, story: 'US-1\u001b[2J' }] };
    expect(renderLoopTable([loop({ parallel: evil })], NOW)).not.toContain('\u001b');
  });

  it('a loop without `parallel` has no worker lines', () => {
    expect(
      renderLoopTable([loop({})], NOW)
        .trim()
        .split('\n'),
    ).toHaveLength(2);
  });
});
