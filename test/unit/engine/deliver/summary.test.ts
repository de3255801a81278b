import { describe, expect, it } from 'vitest';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import {
  firstLine,
  planEnding,
  renderOnExitEnv,
  renderSummary,
  renderTitle,
} from '../../../../src/engine/deliver/summary.js';

const state = (over: Partial<LoopState> = {}) => ({ id: 'nightly', iteration: 4, costUsd: 0.5, ...over }) as LoopState;
const plan = (passes: unknown[]) =>
  JSON.stringify({ userStories: passes.map((p, i) => ({ id: `US-${i}`, passes: p })) });

describe('planEnding', () => {
  it.each([
    [
      'counts passing stories, set-aside ones in neither number',
      plan([true, false, 'skipped', true]),
      { storiesPassed: 2, storiesTotal: 3 },
    ],
    ['an unreadable plan gives no numbers', '{"userStories": [', { storiesPassed: null, storiesTotal: null }],
    ['no plan at all', null, { storiesPassed: null, storiesTotal: null }],
  ])('%s', (_name, text, want) => {
    expect(planEnding(state(), 1, 'max-iterations', text, true)).toMatchObject(want);
  });

  it.each([
    [true, 0, 0],
    [false, 0, null],
    [false, 0.25, 0.25],
  ])('cost known %s, spent %s: %s', (known, spent, want) => {
    expect(planEnding(state({ costUsd: spent }), 0, 'complete', plan([]), known).costUsd).toBe(want);
  });
});

describe('renderSummary and renderOnExitEnv', () => {
  const ending = {
    id: 'nightly',
    code: 3,
    status: 'stuck' as const,
    iterations: 1,
    storiesPassed: 1,
    storiesTotal: 5,
    costUsd: 0.0123,
  };

  it("names the reviewer's part of the cost when a reviewer reported one", () => {
    expect(
      renderSummary({ ...planEnding(state({ costUsd: 1.2, reviewCostUsd: 0.4 }), 5, 'budget', plan([true]), true) }),
    ).toBe('loop nightly: budget (exit 5) · 1/1 stories pass · 4 iterations · $1.20 (reviewer $0.40)');
  });

  it('is one line with every part', () => {
    expect(renderSummary(ending)).toBe('loop nightly: stuck (exit 3) · 1/5 stories pass · 1 iteration · $0.0123');
    expect(renderSummary({ ...ending, costUsd: null, storiesTotal: null, storiesPassed: null, iterations: 2 })).toBe(
      'loop nightly: stuck (exit 3) · 2 iterations',
    );
    expect(renderTitle(ending)).toBe('ralph: stuck');
    expect(renderTitle({ ...ending, status: 'complete' })).toBe('ralph: done');
  });

  it('gives scripts plain values, empty when unknown', () => {
    expect(renderOnExitEnv(ending)).toEqual({
      RALPH_EXIT_CODE: '3',
      RALPH_STATUS: 'stuck',
      RALPH_LOOP_ID: 'nightly',
      RALPH_STORIES_PASSED: '1',
      RALPH_STORIES_TOTAL: '5',
      RALPH_COST_USD: '0.0123',
    });
    expect(renderOnExitEnv({ ...ending, costUsd: null, storiesPassed: null, storiesTotal: null })).toMatchObject({
      RALPH_COST_USD: '',
      RALPH_STORIES_PASSED: '',
      RALPH_STORIES_TOTAL: '',
    });
  });

  it.each([
    ['\n\n  error: no daemon\nmore', 'error: no daemon'],
    ['', ''],
    ['x'.repeat(400), `${'x'.repeat(300)}…`],
  ])('firstLine(%j)', (text, want) => {
    expect(firstLine(text)).toBe(want);
  });
});
