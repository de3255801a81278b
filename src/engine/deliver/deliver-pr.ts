// --deliver pr, as the run does it: after each push of the plan branch, open (or update) its one pull request. Every
// failure is a warning with GitHub's own words and what to do; the pushed commits stay and the exit code never
// changes. One that another try cannot fix (no GitHub remote, no token, 401/403/404) ends the tries for this run,
// and the same problem is never reported twice.
import type { Prd } from '../../prd/types.js';
import type { RunContext } from '../types.js';
import type { Pins } from '../verify/types.js';
import { readFileOnBranch } from '../git/read.js';
import { ledgerPath } from '../store/layout.js';
import { readLedger } from '../store/ledger.js';
import { relPath } from '../../util/repo-path.js';
import { readOwnTextOrNull } from '../../util/read.js';
import { apiBaseUrl, createClient, GitHubError, resolveToken, type GitHubClient, type GitHubRepo } from './github.js';
import {
  openOrUpdatePull,
  readCiChanges,
  readPinnedChanges,
  readRemoteRepo,
  type PullRequestDone,
} from './pull-request.js';
import { renderPrBody, renderPrTitle } from './pr-body.js';
import { readPinDrift } from '../verify/pin-drift.js';
import { shellQuote } from '../../util/shell-quote.js';

/** The pull request a push was followed by, and the client that reached it (pr-merge goes on with it). */
export interface PullDelivered {
  done: PullRequestDone;
  client: GitHubClient;
  repo: GitHubRepo;
}

interface PrMemory {
  stopped: boolean;
  warned: Set<string>;
}

const memory = new WeakMap<RunContext, PrMemory>();

type Warn = (problem: string, hint: string, final: boolean) => null;

/** Opens or updates the pull request of the plan branch, just pushed to `remote`; null when it could not. Never throws. */
export async function deliverPull(
  run: RunContext,
  pins: Pins | null,
  remote: string,
  when: string,
  iteration?: number,
): Promise<PullDelivered | null> {
  const mem = memory.get(run) ?? { stopped: false, warned: new Set<string>() };
  memory.set(run, mem);
  if (mem.stopped) return null;
  // pr-merge's end reports what this means for the merge itself (deliver-merge.ts).
  const after =
    run.options.deliver === 'pr-merge' && iteration === undefined
      ? 'the branch is pushed'
      : 'the branch is pushed and the exit code is unchanged';
  const warn: Warn = (problem, hint, final) => {
    mem.stopped ||= final;
    if (!mem.warned.has(problem))
      run.emit({
        type: 'warn',
        iteration,
        message: `--deliver ${run.options.deliver}: no pull request ${when}: ${problem}; ${hint}; ${after}`,
      });
    mem.warned.add(problem);
    return null;
  };
  try {
    return await openOrUpdate(run, pins, remote, when, iteration, warn);
  } catch (err) {
    // The plan on the branch is the agent's to write too: nothing in it may end the loop differently.
    return warn(`unexpected error: ${(err as Error).message}`, 'open it by hand on GitHub', true);
  }
}

async function openOrUpdate(
  run: RunContext,
  pins: Pins | null,
  remote: string,
  when: string,
  iteration: number | undefined,
  warn: Warn,
): Promise<PullDelivered | null> {
  const top = run.paths.repoRoot;
  const repo = await readRemoteRepo(top, remote);
  if (!repo)
    return warn(
      `the URL of remote ${remote} does not name a GitHub repository (owner/name)`,
      `point it at one: git remote set-url ${shellQuote(remote)} https://github.com/<owner>/<repo>.git`,
      true,
    );
  const token = await resolveToken(repo.host, run.io.env);
  if (!token)
    return warn(
      `no GitHub token for ${repo.host}`,
      `log in with: gh auth login --hostname ${repo.host}, or set ${repo.host === 'github.com' ? 'GH_TOKEN' : 'GH_ENTERPRISE_TOKEN'}`,
      true,
    );
  const prd = await readBranchPlan(run);
  if (!prd) return warn('the plan on the branch cannot be read', 'check it with: ralphkit validate', false);
  const base = typeof prd.baseBranch === 'string' && prd.baseBranch ? prd.baseBranch : undefined;
  const ledger = readLedger(ledgerPath(top, run.id));
  const loopPins = await readLoopPinChanges(run, pins);
  const body = async (into: string) =>
    renderPrBody({
      loopId: run.id,
      prd,
      ledger,
      pinnedChanges: await readPinnedChanges(top, prd, run.branch, into, remote),
      loopPins,
      ciChanges: await readCiChanges(top, run.branch, into, remote),
    });
  const client = createClient(apiBaseUrl(repo.host, run.io.env), token);
  try {
    const done = await openOrUpdatePull(client, repo, { branch: run.branch, base, title: renderPrTitle(prd), body });
    run.emit({
      type: 'info',
      iteration,
      message: `${done.action} pull request #${done.number} (${run.branch} into ${done.base}) ${when}${done.url ? `: ${done.url}` : ''}`,
    });
    return { done, client, repo };
  } catch (err) {
    if (!(err instanceof GitHubError)) throw err;
    const failure = planPullFailure(err, repo.host, run.branch);
    return warn(err.message, failure.hint, failure.final);
  }
}

// What the loop's commits changed of its pins (the runner's own record, not the plan on the branch): listed in the
// body, and what keeps --deliver pr-merge from merging.
async function readLoopPinChanges(
  run: RunContext,
  pins: Pins | null,
): Promise<{ commit: string; changes: string[] } | null> {
  if (!pins) return null;
  try {
    return {
      commit: pins.commit,
      changes: await readPinDrift(run.paths.repoRoot, pins, `refs/heads/${run.branch}`),
    };
  } catch {
    return null;
  }
}

/**
 * Pure: what a failed pull request call means for the run. A refused token (401, 403, 404) ends the tries; GitHub's
 * rate limit (a 403 or 429 too, told apart by its headers) and anything else leave them to the next push.
 */
export function planPullFailure(err: GitHubError, host: string, branch: string): { hint: string; final: boolean } {
  if (err.rateLimitedUntil !== null) {
    const until = new Date(err.rateLimitedUntil).toISOString().replace(/\.\d+Z$/, 'Z');
    return {
      hint: `GitHub's rate limit for this token is used up until ${until}: the next push after that tries again; or open it by hand on GitHub`,
      final: false,
    };
  }
  return {
    hint: renderHint(err.status, host, branch),
    final: err.status === 401 || err.status === 403 || err.status === 404,
  };
}

function renderHint(status: number | null, host: string, branch: string): string {
  if (status === 401)
    return `the token was refused: log in again with gh auth login --hostname ${host}, or set a valid token`;
  if (status === 403 || status === 404)
    return 'the token cannot see or write this repository\'s pull requests: give it the "pull requests: write" permission (or the repo scope)';
  if (status === 422)
    return `GitHub refused the request as it stands (a base branch that does not exist on GitHub, or no commits between it and ${branch}); open it by hand if needed`;
  return 'the next push tries again; or open it by hand on GitHub';
}

/** The plan as committed on the branch (what the pull request holds), else the file on disk. */
async function readBranchPlan(run: RunContext): Promise<Prd | null> {
  const text =
    (await readFileOnBranch(run.paths.repoRoot, run.branch, relPath(run.paths.repoRoot, run.paths.prd))) ??
    readOwnTextOrNull(run.paths.prd);
  try {
    const prd = JSON.parse(text ?? '') as Prd;
    return prd && Array.isArray(prd.userStories) ? prd : null;
  } catch {
    return null;
  }
}
