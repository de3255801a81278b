// --deliver pr-merge at the end of a loop that exited 0: push and open (or update) the pull request as pr does, then
// merge it once the repository's own CI passed on the head the final gate verified. Never when a story is unverified
// (accepted on the agent's word), when the branch moved since the gate, or when the loop's commits changed what it
// pinned; not on "no checks reported". Decided before the loop's end is recorded, so the exit code says it: a run
// whose work is verified but not merged ends with 7 (not-merged), Ctrl-C while waiting with 130. Nothing local is
// touched, and the pull request stays open.
import type { RunContext } from '../types.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { formatDuration } from '../core/duration.js';
import { realClock } from '../clock.js';
import { runGit } from '../git/git.js';
import { GitHubError } from './github.js';
import { mergePull, MergeUnknown, waitForCi } from './merge.js';
import { renderCiState } from './ci-status.js';
import { readPinDrift } from '../verify/pin-drift.js';
import { deliverBranch, type DeliveryTrust } from './deliver.js';
import type { Pins } from '../verify/types.js';
import type { RunTrust } from '../verify/trust.js';
import type { PullDelivered } from './deliver-pr.js';
import { readPullRefusal, readServerRefusal } from './merge-guard.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * Delivers the end of a complete loop and merges; returns the loop's exit: `done` when merged, else why not (130 only
 * when Ctrl-C stopped the wait for CI: the work is done and the merge pending).
 */
export async function deliverMerged(
  run: RunContext,
  trust: DeliveryTrust,
  done: LoopExit,
  signal: AbortSignal,
): Promise<LoopExit> {
  const delivered = await deliverBranch(run, trust, 'at the end of the loop');
  const gate = trust?.gatePassed;
  const refusal = await planRefusal(run, gate, trust?.pins ?? null);
  const pull = delivered.pull;
  const pr = pull ? `pull request #${pull.done.number}` : 'the pull request';
  if (refusal) return notMerged(run, pr, refusal.why, refusal.hint);
  if (!delivered.remote)
    return notMerged(
      run,
      pr,
      'the branch was not pushed (see the warning above)',
      `push it, then open and merge the pull request on GitHub: git push origin ${shellQuote(run.branch)}`,
    );
  if (!pull)
    return notMerged(
      run,
      pr,
      'no pull request could be opened or updated (see the warning above)',
      'open and merge it on GitHub',
    );
  // Both must pass: the loop's own record above, and GitHub's view of the branch against the plan at its merge base.
  // planRefusal refused a run without a passed gate.
  const sha = (gate as { commit: string }).commit;
  const server = (await readPullRefusal(run, pull, sha)) ?? (await readServerRefusal(run, pull, sha));
  if (server) return notMerged(run, pr, server.why, server.hint);
  return waitAndMerge(run, done, pull, sha, signal);
}

async function planRefusal(
  run: RunContext,
  gate: RunTrust['gatePassed'],
  pins: Pins | null,
): Promise<{ why: string; hint: string } | null> {
  if (!gate)
    return {
      why: 'the final gate did not pass in this run',
      hint: 'look at the pull request before merging it by hand',
    };
  if (!gate.allVerified)
    return {
      why: "some stories are unverified (no check covers them: accepted on the agent's word)",
      hint: 'add checks to those stories, or review the pull request and merge it by hand',
    };
  const head = await runGit(run.paths.repoRoot, [
    'rev-parse',
    '--verify',
    '--quiet',
    `refs/heads/${run.branch}^{commit}`,
  ]);
  if (head.stdout.trim() !== gate.commit)
    return {
      why: `${run.branch} moved since the final gate verified ${gate.commit.slice(0, 7)}`,
      hint: 'look at the new commits, then merge by hand',
    };
  if (!pins)
    return {
      why: 'the loop has no record of its pinned tests',
      hint: 'review the test changes in the pull request, then merge it by hand',
    };
  const drift = await readPinDrift(run.paths.repoRoot, pins, gate.commit);
  if (drift.length && run.options.acceptPinChanges) {
    run.emit({
      type: 'warn',
      message: `--accept-pin-changes: merging although the loop's commits changed pinned tests since ${pins.commit.slice(0, 7)} (${drift.slice(0, 5).join(', ')}${drift.length > 5 ? ', ...' : ''})`,
    });
  } else if (drift.length) {
    const shown = drift.slice(0, 5).join(', ') + (drift.length > 5 ? `, and ${drift.length - 5} more` : '');
    return {
      why: `the loop's commits changed pinned test files since the plan commit ${pins.commit.slice(0, 7)} (${shown}); the checks ran with the plan commit's versions`,
      hint: 'the pull request lists them: review those changes, then merge it by hand (or, once reviewed, resume with --deliver pr-merge --accept-pin-changes)',
    };
  }
  return null;
}

async function waitAndMerge(
  run: RunContext,
  done: LoopExit,
  pull: PullDelivered,
  sha: string,
  signal: AbortSignal,
): Promise<LoopExit> {
  const pr = `pull request #${pull.done.number}`;
  const url = pull.done.url ? ` (${pull.done.url})` : '';
  const timeout = run.options.mergeTimeoutMs;
  run.emit({
    type: 'info',
    message: `--deliver pr-merge: waiting up to ${formatDuration(timeout)} for the repository's checks on ${sha.slice(0, 7)}, the head the final gate verified; Ctrl-C stops waiting and leaves ${pr} open`,
  });
  const log = (words: string) => run.emit({ type: 'info', message: `checks on ${sha.slice(0, 7)}: ${words}` });
  const waited = await waitForCi({
    client: pull.client,
    repo: pull.repo,
    sha,
    timeoutMs: timeout,
    signal,
    clock: realClock,
    log,
  });
  if (waited.outcome === 'interrupted') {
    return new LoopExit(
      LOOP_EXIT.interrupted,
      `interrupted while waiting for the checks of ${pr}; it stays open, not merged`,
      `merge it on GitHub once its checks pass${url}, or wait again with: ./ralph/ralph.sh --resume-last --deliver pr-merge (the final gate runs again first)`,
    );
  }
  if (waited.outcome === 'error')
    return notMerged(
      run,
      pr,
      `reading its checks failed: ${waited.error.message}`,
      `merge it on GitHub once its checks pass${url}`,
    );
  if (waited.outcome === 'failed')
    return notMerged(
      run,
      pr,
      `its checks failed on ${sha.slice(0, 7)}: ${renderCiState(waited.state)}`,
      `look at the failing checks on GitHub${url}; fix them (a new loop, or by hand), then merge`,
    );
  if (waited.outcome === 'timeout') {
    const why =
      waited.state.verdict === 'none'
        ? `${waited.state.count ? 'no check passed' : 'no checks were reported'} on ${sha.slice(0, 7)} within ${formatDuration(timeout)} (${waited.state.count ? 'skipped or neutral' : 'no checks'} is not a pass)`
        : `its checks had not finished within ${formatDuration(timeout)}: ${renderCiState(waited.state)}`;
    return notMerged(
      run,
      pr,
      why,
      `${waited.state.verdict === 'none' ? 'make sure the repository runs CI on pull requests (with the default GITHUB_TOKEN of Actions, pull requests it opens run none), or merge' : 'merge'} it on GitHub once its checks pass${url}; or wait longer with --merge-timeout`,
    );
  }
  // Checked again right before the merge: the wait is long, and the pull request is GitHub's to change meanwhile.
  const moved = await readPullRefusal(run, pull, sha);
  if (moved) return notMerged(run, pr, moved.why, moved.hint);
  try {
    const merged = await mergePull(pull.client, pull.repo, pull.done.number, sha);
    const into = pull.done.base ? ` into ${pull.done.base}` : '';
    return new LoopExit(
      done.code,
      `${done.message}; merged ${pr}${into} at ${sha.slice(0, 7)}${merged.sha ? ` (merge commit ${merged.sha.slice(0, 7)})` : ''}`,
      done.hint,
      done.status,
    );
  } catch (err) {
    if (!(err instanceof GitHubError)) throw err;
    if (err instanceof MergeUnknown)
      return notMerged(
        run,
        pr,
        `whether GitHub merged it is unknown: ${err.message}`,
        `check ${pr} on GitHub${url}: merged, or merge it there once its checks pass`,
      );
    return notMerged(run, pr, `GitHub refused the merge: ${err.message}`, renderMergeHint(err, url));
  }
}

function renderMergeHint(err: GitHubError, url: string): string {
  const status = err.status;
  if (err.rateLimitedUntil !== null)
    return `GitHub's rate limit for this token is used up until ${new Date(err.rateLimitedUntil).toISOString().replace(/\.\d+Z$/, 'Z')}: merge it on GitHub${url}, or resume with --deliver pr-merge after that`;
  if (status === 409)
    return `the branch on GitHub no longer ends at the verified commit (someone pushed to it): look at the new commits, then merge by hand${url}`;
  if (status === 405)
    return `GitHub's rules for this repository do not allow this merge now (required reviews or checks, merge commits not allowed, a conflict): merge it on GitHub${url}`;
  if (status === 401 || status === 403 || status === 404)
    return `the token cannot merge here: give it "contents: write" and "pull requests: write" (or the repo scope), or merge it on GitHub${url}`;
  return `merge it on GitHub${url}`;
}

function notMerged(run: RunContext, pr: string, why: string, hint: string): LoopExit {
  return new LoopExit(
    LOOP_EXIT.notMerged,
    `the loop is done, but ${pr} was not merged: ${why}`,
    `${hint}; your commits are on ${run.branch} and ${pr === 'the pull request' ? 'nothing was merged' : `${pr} stays open`}; to verify and try again: ./ralph/ralph.sh --resume ${run.id} --deliver pr-merge`,
  );
}
