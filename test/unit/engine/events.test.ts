// The loop's event lines: a --parallel worker's events carry a `[w<n>] ` tag on every human line (so interleaved
// workers can be told apart), events of the run as a whole are unchanged, and --json carries the worker number.
import { describe, expect, it } from 'vitest';
import { createEmitter, renderHuman, type LoopEvent } from '../../../src/engine/events.js';

const EVENTS: LoopEvent[] = [
  { type: 'info', message: 'checks pass' },
  { type: 'warn', message: 'slow check' },
  { type: 'iteration-start', iteration: 5, maxIterations: 10 },
  { type: 'tool', iteration: 5, text: 'Edit src/a.ts' },
  { type: 'agent-exit', iteration: 5, exitCode: 0, signal: null, timedOut: false, durationMs: 1234, tag: 'complete' },
  { type: 'iteration-end', iteration: 5, newCommit: false, noProgressStreak: 2, costUsd: 0 },
  {
    type: 'exit',
    loop: 'l1',
    code: 2,
    status: 'refused',
    message: 'no plan',
    hint: 'write one',
    iteration: 0,
    costUsd: 0,
  },
];

describe('renderHuman with a worker', () => {
  it.each([
    [EVENTS[0], '[w2] ralph: checks pass'],
    [EVENTS[1], '[w2] ralph: warning: slow check'],
    [EVENTS[2], '\n━━ [w2] iteration 5/10 ━━'],
    [EVENTS[3], '[w2]   · Edit src/a.ts'],
    [EVENTS[4], '[w2] ralph: agent exited 0 after 1.2s · said COMPLETE'],
    [EVENTS[5], '[w2] ralph: iteration 5 done · no new commit (2 in a row)'],
    [EVENTS[6], '[w2] ralph: no plan (exit 2)\n[w2] ralph: hint: write one'],
  ])('%j', (event, line) => {
    expect(renderHuman({ ...event, worker: 2 })).toBe(line);
  });

  it('an event without a worker is rendered as before, with no tag', () => {
    expect(EVENTS.map((e) => renderHuman(e))).toEqual([
      'ralph: checks pass',
      'ralph: warning: slow check',
      '\n━━ iteration 5/10 ━━',
      '  · Edit src/a.ts',
      'ralph: agent exited 0 after 1.2s · said COMPLETE',
      'ralph: iteration 5 done · no new commit (2 in a row)',
      'ralph: no plan (exit 2)\nralph: hint: write one',
    ]);
  });

  it('a verify event still prints nothing, with or without a worker', () => {
    expect(
      renderHuman({ type: 'verify', iteration: 1, verdicts: [], restored: [], allPass: true, worker: 3 }),
    ).toBeNull();
  });
});

describe('createEmitter', () => {
  it('--json: the worker number is in the JSON line; the human line on stderr is tagged', () => {
    const out: string[] = [];
    const err: string[] = [];
    const emit = createEmitter(
      true,
      (s) => out.push(s),
      (s) => err.push(s),
    );
    emit({ type: 'info', message: 'merged US-2', worker: 3 });
    emit({ type: 'info', message: 'run-wide' });
    const [tagged, plain] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(tagged).toMatchObject({ type: 'info', message: 'merged US-2', worker: 3 });
    expect(plain).toMatchObject({ type: 'info', message: 'run-wide' });
    expect('worker' in plain).toBe(false);
    expect(err).toEqual(['[w3] ralph: merged US-2\n', 'ralph: run-wide\n']);
  });
});
