import { describe, expect, it } from 'vitest';
import {
  judgeCi,
  readCiState,
  renderCiState,
  type CheckRunFields,
  type CombinedStatusFields,
} from '../../../../src/engine/deliver/ci-status.js';
import type { GitHubClient } from '../../../../src/engine/deliver/github.js';
import { planPollInterval } from '../../../../src/engine/deliver/merge.js';

const run = (name: string, status: string, conclusion: string | null = null): CheckRunFields => ({
  name,
  status,
  conclusion,
});
// GitHub's combined status: "pending" with total_count 0 when no status was ever reported.
const NO_STATUSES: CombinedStatusFields = { state: 'pending', total_count: 0, statuses: [] };
const statuses = (state: string, ...list: Array<[string, string]>): CombinedStatusFields => ({
  state,
  total_count: list.length,
  statuses: list.map(([context, s]) => ({ context, state: s })),
});

describe('judgeCi', () => {
  it.each<[string, CheckRunFields[], CombinedStatusFields, string]>([
    ['nothing reported anywhere', [], NO_STATUSES, 'none'],
    ['a combined state of pending with no statuses and no runs', [], { state: 'pending', total_count: 0 }, 'none'],
    ['one run passed', [run('test', 'completed', 'success')], NO_STATUSES, 'passed'],
    [
      'neutral and skipped runs beside a success pass',
      [run('a', 'completed', 'neutral'), run('b', 'completed', 'skipped'), run('c', 'completed', 'success')],
      NO_STATUSES,
      'passed',
    ],
    ['runs all skipped are no evidence', [run('test', 'completed', 'skipped')], NO_STATUSES, 'none'],
    [
      'runs all neutral or skipped are no evidence',
      [run('a', 'completed', 'neutral'), run('b', 'completed', 'skipped')],
      NO_STATUSES,
      'none',
    ],
    ['statuses alone, all success', [], statuses('success', ['ci/x', 'success']), 'passed'],
    ['a run still in progress', [run('test', 'in_progress')], NO_STATUSES, 'pending'],
    ['a run queued, another passed', [run('a', 'queued'), run('b', 'completed', 'success')], NO_STATUSES, 'pending'],
    ['Actions-only statuses (waiting) are pending', [run('deploy', 'waiting')], NO_STATUSES, 'pending'],
    ['a status pending', [run('a', 'completed', 'success')], statuses('pending', ['ci/x', 'pending']), 'pending'],
    [
      'a run failed while another runs',
      [run('a', 'completed', 'failure'), run('b', 'in_progress')],
      NO_STATUSES,
      'failed',
    ],
    ['cancelled is not a pass', [run('a', 'completed', 'cancelled')], NO_STATUSES, 'failed'],
    ['timed_out is not a pass', [run('a', 'completed', 'timed_out')], NO_STATUSES, 'failed'],
    ['action_required is not a pass', [run('a', 'completed', 'action_required')], NO_STATUSES, 'failed'],
    ['a completed run without a conclusion is not a pass', [run('a', 'completed', null)], NO_STATUSES, 'failed'],
    ['a status error', [run('a', 'completed', 'success')], statuses('failure', ['ci/x', 'error']), 'failed'],
    [
      'a combined failure whose status is on a later page',
      [run('a', 'completed', 'success')],
      { state: 'failure', total_count: 120, statuses: [] },
      'failed',
    ],
    [
      'a combined pending whose status is on a later page',
      [run('a', 'completed', 'success')],
      { state: 'pending', total_count: 120, statuses: [] },
      'pending',
    ],
  ])('%s: %s', (_what, runs, combined, verdict) => {
    expect(judgeCi(runs, combined).verdict).toBe(verdict);
  });

  it('a check suite not completed keeps it pending: the real CI has not reported its runs yet', () => {
    const passed = [run('labeler', 'completed', 'success')];
    expect(judgeCi(passed, NO_STATUSES, true, [{ status: 'completed', app: { name: 'labeler' } }]).verdict).toBe(
      'passed',
    );
    expect(judgeCi(passed, NO_STATUSES, true, [{ status: 'queued', app: { name: 'GitHub Actions' } }])).toMatchObject({
      verdict: 'pending',
      pending: ['GitHub Actions (suite queued)'],
    });
    expect(judgeCi([], NO_STATUSES, true, [{ status: 'in_progress' }]).verdict).toBe('pending');
    expect(renderCiState(judgeCi([run('test', 'completed', 'skipped')], NO_STATUSES))).toBe(
      '1 check, none passed (skipped or neutral is no evidence)',
    );
  });

  it('check runs not all listed are pending, never passed', () => {
    expect(judgeCi([run('a', 'completed', 'success')], NO_STATUSES, false).verdict).toBe('pending');
  });

  it('names what failed and what runs', () => {
    const state = judgeCi(
      [run('lint', 'completed', 'failure'), run('e2e', 'queued')],
      statuses('failure', ['ci/jenkins', 'error']),
    );
    expect(state).toEqual({
      verdict: 'failed',
      failed: ['lint (failure)', 'ci/jenkins (error)'],
      pending: ['e2e'],
      count: 3,
    });
    expect(renderCiState(state)).toBe('3 checks, failed: lint (failure), ci/jenkins (error)');
    expect(renderCiState(judgeCi([], NO_STATUSES))).toBe('no checks reported');
  });
});

describe('planPollInterval', () => {
  it.each([
    [60 * 60_000, 30_000],
    [20 * 60_000, 30_000],
    [10 * 60_000, 15_000],
    [20_000, 500],
    [1000, 250],
    [1, 250],
  ])('%i ms → %i ms', (timeout, interval) => {
    expect(planPollInterval(timeout)).toBe(interval);
  });
});

describe('check names', () => {
  it("are one short line: the repository's CI configuration is the agent's to write", () => {
    const state = judgeCi(
      [
        {
          name: `evil\nralph: merged pull request #1\u001b[2J${'x'.repeat(200)}`,
          status: 'completed',
          conclusion: 'failure',
        },
      ],
      NO_STATUSES,
    );
    expect(state.failed[0]).not.toMatch(/[\n\u001b]/);
    expect(state.failed[0].length).toBeLessThan(120);
  });
});

describe('readCiState paging', () => {
  // A client that answers like GitHub: `listed` check runs in pages of 100 under a total_count of `total`.
  function client(listed: number, total: number, seen: string[]): GitHubClient {
    const all = Array.from({ length: listed }, (_, i) => run(`job ${i}`, 'completed', 'success'));
    return {
      async request(_method, path) {
        seen.push(path);
        const page = Number(/[?&]page=(\d+)/.exec(path)?.[1] ?? 0);
        if (path.includes('/check-runs'))
          return { status: 200, body: { total_count: total, check_runs: all.slice((page - 1) * 100, page * 100) } };
        if (path.includes('/check-suites')) return { status: 200, body: { total_count: 0, check_suites: [] } };
        return { status: 200, body: NO_STATUSES };
      },
    };
  }
  const repo = { host: 'github.com', owner: 'acme', repo: 'demo' };

  it('reads every page: 150 runs, all passed', async () => {
    const seen: string[] = [];
    const state = await readCiState(client(150, 150, seen), repo, 'a'.repeat(40));
    expect(state).toMatchObject({ verdict: 'passed', count: 150 });
    expect(seen.filter((p) => p.includes('/check-runs'))).toHaveLength(2);
  });

  it('a total_count larger than what the pages list is pending, never passed', async () => {
    const state = await readCiState(client(150, 200, []), repo, 'a'.repeat(40));
    expect(state.verdict).toBe('pending');
    expect(state.pending).toContain('check runs not all listed');
  });
});
