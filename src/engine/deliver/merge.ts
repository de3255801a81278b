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
  for (;;) {
    if (input.signal.aborted) return { outcome: 'interrupted', state };
    try {
      state = await readCiState(input.client, input.repo, input.sha);
      const words = renderCiState(state);
      if (words !== said) input.log(words);
      said = words;
      if (state.verdict === 'failed' || (state.verdict === 'passed' && passedBefore)) return { outcome: state.verdict, state };
      passedBefore = state.verdict === 'passed';
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      if (!isTransient(err)) return { outcome: 'error', error: err, state };
    }
    const left = deadline - input.clock.now().getTime();
    if (left <= 0) return state ? { outcome: 'timeout', state } : { outcome: 'error', error: new GitHubError('GitHub did not answer about the checks before the timeout', null), state };
    await input.clock.sleep(Math.min(interval, left), input.signal);
  }
}

// No answer, GitHub's own trouble (5xx) or a rate limit: worth another look; anything else will answer the same.
function isTransient(err: GitHubError): boolean {
  return err.status === null || err.status >= 500 || err.status === 429;
}

export interface MergeDone {
  /** The merge commit GitHub made. */
  sha: string;
}

/** Merges pull request `number` if its head is still `sha`. Throws GitHubError with GitHub's words (405, 409, 422, ...). */
export async function mergePull(client: GitHubClient, repo: GitHubRepo, number: number, sha: string): Promise<MergeDone> {
  const root = `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`;
  const answer = await client.request('PUT', `${root}/pulls/${number}/merge`, { sha, merge_method: 'merge' });
  const body = answer.body as { merged?: unknown; sha?: unknown; message?: unknown } | null;
  const said = typeof body?.message === 'string' ? `: ${body.message.replace(/\s+/g, ' ').slice(0, 200)}` : '';
  if (body?.merged !== true) throw new GitHubError(`GitHub did not merge it${said}`, answer.status);
  return { sha: typeof body.sha === 'string' ? body.sha : '' };
}
