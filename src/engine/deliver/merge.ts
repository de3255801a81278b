// --deliver pr-merge: wait for the repository's CI on the verified head, then merge the pull request at exactly that
// head. The merge names the sha (PUT /repos/{o}/{r}/pulls/{n}/merge with `sha`), so a push that raced in after the
// runner's makes GitHub refuse it (409 "Head branch was modified") instead of merging commits nobody verified.
import type { Clock } from '../types.js';
import { GitHubError, type GitHubClient, type GitHubRepo } from './github.js';
import { readCiState, renderCiState, type CiState } from './ci-status.js';

export interface CiWaitInput {
  client: GitHubClient;
  repo: GitHubRepo;
  sha: string;
  timeoutMs: number;
  signal: AbortSignal;
  clock: Clock;
  /** Each new state of the checks, in words, once. */
  log: (message: string) => void;
}

export type CiWaitResult =
  | { outcome: 'passed' | 'failed' | 'timeout'; state: CiState }
  | { outcome: 'interrupted'; state: CiState | null }
  | { outcome: 'error'; error: GitHubError; state: CiState | null };

/**
 * The pause between two looks at the checks: a fortieth of the timeout, between 250 ms and 30 s. So the default hour
 * polls every 30 s (240 requests an hour, far under GitHub's 5,000), and a test's short timeout is not slept through.
 */
export function planPollInterval(timeoutMs: number): number {
  return Math.min(30_000, Math.max(250, Math.round(timeoutMs / 40)));
}

/**
 * Looks at the checks until they passed on two looks in a row (one interval apart: a quick check that passed before the
 * real CI registered its suite is not enough), one failed, the timeout or Ctrl-C. GitHub down for a while is waited out.
 */
export async function waitForCi(input: CiWaitInput): Promise<CiWaitResult> {
  const deadline = input.clock.now().getTime() + input.timeoutMs;
  const interval = planPollInterval(input.timeoutMs);
  let state: CiState | null = null;
  let said = '';
  let passedBefore = false;
  let limited: GitHubError | null = null;
  for (;;) {
    if (input.signal.aborted) return { outcome: 'interrupted', state };
    try {
      state = await readCiState(input.client, input.repo, input.sha);
      const words = renderCiState(state);
      if (words !== said) input.log(words);
      said = words;
      if (state.verdict === 'failed' || (state.verdict === 'passed' && passedBefore))
        return { outcome: state.verdict, state };
      passedBefore = state.verdict === 'passed';
      limited = null;
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      if (!isTransient(err)) return { outcome: 'error', error: err, state };
      limited = err.rateLimitedUntil !== null ? err : null;
    }
    const now = input.clock.now().getTime();
    const left = deadline - now;
    if (left <= 0)
      return state
        ? { outcome: 'timeout', state }
        : {
            outcome: 'error',
            error: limited ?? new GitHubError('GitHub did not answer about the checks before the timeout', null),
            state,
          };
    // A rate limit is waited out as GitHub asks (no request before its time), within the timeout.
    const pause = limited ? Math.max(interval, limited.rateLimitedUntil! - now) : interval;
    if (limited)
      input.log(`GitHub's rate limit: the next look at the checks is in ${Math.ceil(Math.min(pause, left) / 1000)}s`);
    await input.clock.sleep(Math.min(pause, left), input.signal);
  }
}

// No answer, GitHub's own trouble (5xx) or a rate limit (429, or a 403 that says so): worth another look; anything
// else will answer the same.
function isTransient(err: GitHubError): boolean {
  return err.status === null || err.status >= 500 || err.status === 429 || err.rateLimitedUntil !== null;
}

export interface MergeDone {
  /** The merge commit GitHub made. */
  sha: string;
}

/** A merge request that got no clear answer (none in time, a 5xx) and a pull request that does not read as merged. */
export class MergeUnknown extends GitHubError {}

/**
 * Merges pull request `number` if its head is still `sha`. Throws GitHubError with GitHub's words (405, 409, 422, ...),
 * or MergeUnknown: a request without an answer may still have merged, so the pull request is read again first.
 */
export async function mergePull(
  client: GitHubClient,
  repo: GitHubRepo,
  number: number,
  sha: string,
): Promise<MergeDone> {
  const root = `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`;
  let answer;
  try {
    answer = await client.request('PUT', `${root}/pulls/${number}/merge`, { sha, merge_method: 'merge' });
  } catch (err) {
    if (!(err instanceof GitHubError) || (err.status !== null && err.status < 500)) throw err;
    return readMergedAfter(client, root, number, err);
  }
  const body = answer.body as { merged?: unknown; sha?: unknown; message?: unknown } | null;
  const said = typeof body?.message === 'string' ? `: ${body.message.replace(/\s+/g, ' ').slice(0, 200)}` : '';
  if (body?.merged !== true) throw new GitHubError(`GitHub did not merge it${said}`, answer.status);
  return { sha: typeof body.sha === 'string' ? body.sha : '' };
}

async function readMergedAfter(
  client: GitHubClient,
  root: string,
  number: number,
  err: GitHubError,
): Promise<MergeDone> {
  const again = await client.request('GET', `${root}/pulls/${number}`).catch((e: Error) => e);
  const body = again instanceof Error ? null : (again.body as { merged?: unknown; merge_commit_sha?: unknown } | null);
  if (body?.merged === true) return { sha: typeof body.merge_commit_sha === 'string' ? body.merge_commit_sha : '' };
  const read =
    again instanceof Error ? `reading it again failed too (${again.message})` : 'read again, it is not merged yet';
  throw new MergeUnknown(
    `the merge request got no clear answer (${err.message}); ${read}, but GitHub may still merge it`,
    err.status,
  );
}
