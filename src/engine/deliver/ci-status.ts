// --deliver pr-merge: what the repository's own CI says about one commit, from GitHub's two REST sources of it: the
// check runs of GitHub Apps and Actions (GET /repos/{o}/{r}/commits/{sha}/check-runs: `status` queued, in_progress,
// waiting, requested or pending until `completed`, then a `conclusion`) and the commit statuses of older integrations
// (GET /repos/{o}/{r}/commits/{sha}/status: a combined `state` of failure, pending or success, and `total_count`; the
// state is "pending" when there are no statuses at all). Nothing reported in either is never "passed", and neither
// are runs that were all skipped or neutral: only a `success` is evidence. The check suites of the commit
// (GET /repos/{o}/{r}/commits/{sha}/check-suites, `status` queued, in_progress, ... until completed) say whether a
// CI is still to report runs: one not completed keeps the verdict pending.
import type { GitHubClient, GitHubRepo } from './github.js';

export type CiVerdict = 'passed' | 'failed' | 'pending' | 'none';

export interface CiState {
  verdict: CiVerdict;
  /** Checks that failed, as "name (conclusion)"; checks still running, by name. */
  failed: string[];
  pending: string[];
  /** How many checks and statuses were seen. */
  count: number;
}

export interface CheckRunFields {
  name?: unknown;
  status?: unknown;
  conclusion?: unknown;
}

export interface CheckSuiteFields {
  status?: unknown;
  app?: { name?: unknown } | null;
}

export interface CombinedStatusFields {
  state?: unknown;
  total_count?: unknown;
  statuses?: Array<{ context?: unknown; state?: unknown }>;
}

// A completed check run with one of these conclusions is no failure (branch protection lets it merge too); only
// `success` is evidence that something ran and passed.
const GOOD_CONCLUSIONS: ReadonlySet<string> = new Set(['success', 'neutral', 'skipped']);
// At most this many pages of 100 check runs are read; a commit with more is judged on what was read, as pending.
const MAX_PAGES = 5;

/** Pure: the verdict from the check runs and the combined status of one commit. */
export function judgeCi(
  runs: readonly CheckRunFields[],
  combined: CombinedStatusFields,
  complete = true,
  suites: readonly CheckSuiteFields[] = [],
): CiState {
  const failed: string[] = [];
  const pending: string[] = [];
  let passed = 0;
  for (const run of runs) {
    const name = nameOf(run.name, 'a check run');
    if (run.status !== 'completed') pending.push(name);
    else if (!GOOD_CONCLUSIONS.has(String(run.conclusion)))
      failed.push(`${name} (${nameOf(run.conclusion, 'no conclusion')})`);
    else if (run.conclusion === 'success') passed++;
  }
  const statusCount = typeof combined.total_count === 'number' ? combined.total_count : 0;
  for (const s of statusCount > 0 ? (combined.statuses ?? []) : []) {
    const name = nameOf(s.context, 'a status');
    if (s.state === 'failure' || s.state === 'error') failed.push(`${name} (${nameOf(s.state, 'failure')})`);
    else if (s.state !== 'success') pending.push(name);
    else passed++;
  }
  if (statusCount > 0 && combined.state === 'success') passed++;
  for (const suite of suites)
    if (suite.status !== 'completed')
      pending.push(`${nameOf(suite.app?.name, 'a check suite')} (suite ${nameOf(suite.status, 'not completed')})`);
  // The combined state speaks for statuses not listed on the first page.
  if (statusCount > 0 && combined.state === 'failure' && !failed.length)
    failed.push(`commit statuses (${String(combined.state)})`);
  if (statusCount > 0 && combined.state !== 'success' && combined.state !== 'failure' && !pending.length)
    pending.push('commit statuses');
  if (!complete) pending.push('check runs not all listed');
  const count = runs.length + statusCount;
  // Skipped and neutral runs alone are no evidence: as if nothing had been reported.
  const verdict: CiVerdict = failed.length ? 'failed' : pending.length ? 'pending' : passed === 0 ? 'none' : 'passed';
  return { verdict, failed, pending, count };
}

// Check names come from the repository's CI configuration, which the agent can write: one short line each.
function nameOf(value: unknown, fallback: string): string {
  const text =
    typeof value === 'string'
      ? value
          .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
          .trim()
          .slice(0, 100)
      : '';
  return text || fallback;
}

/** Reads both sources for `sha` and judges them. Throws GitHubError. */
export async function readCiState(client: GitHubClient, repo: GitHubRepo, sha: string): Promise<CiState> {
  const root = `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/commits/${encodeURIComponent(sha)}`;
  const runs: CheckRunFields[] = [];
  let total = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = (await client.request('GET', `${root}/check-runs?per_page=100&page=${page}`)).body as {
      total_count?: unknown;
      check_runs?: unknown;
    };
    const listed = Array.isArray(answer?.check_runs) ? (answer.check_runs as CheckRunFields[]) : [];
    total = typeof answer?.total_count === 'number' ? answer.total_count : runs.length + listed.length;
    runs.push(...listed);
    if (!listed.length || runs.length >= total) break;
  }
  const combined = ((await client.request('GET', `${root}/status?per_page=100`)).body ?? {}) as CombinedStatusFields;
  const listed = ((await client.request('GET', `${root}/check-suites?per_page=100`)).body ?? {}) as {
    check_suites?: unknown;
  };
  const suites = Array.isArray(listed.check_suites) ? (listed.check_suites as CheckSuiteFields[]) : [];
  return judgeCi(runs, combined, runs.length >= total, suites);
}

/** Pure: one line for the log, e.g. "2 checks: 1 failed: test (failure)". */
export function renderCiState(state: CiState): string {
  const list = (names: string[]) =>
    names.slice(0, 5).join(', ') + (names.length > 5 ? `, and ${names.length - 5} more` : '');
  const seen = `${state.count} check${state.count === 1 ? '' : 's'}`;
  if (state.verdict === 'none')
    return state.count ? `${seen}, none passed (skipped or neutral is no evidence)` : 'no checks reported';
  if (state.verdict === 'failed') return `${seen}, failed: ${list(state.failed)}`;
  if (state.verdict === 'pending') return `${seen}, still running: ${list(state.pending)}`;
  return `${seen}, all passed`;
}
