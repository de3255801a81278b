// --deliver push and pr, as the run does it: after an iteration in which a story was accepted, and once more at the
// end. A push that fails is a warning with git's message and what to type; the local commits are never touched and the
// exit code never changes (SPEC §10). With pr (and pr-merge), each push that succeeds is followed by the pull request
// (deliver-pr.ts); pr-merge's end is deliver-merge.ts.
import type { LoopStatus } from '../store/state-types.js';
import type { RunContext } from '../types.js';
import type { Pins } from '../verify/types.js';
import type { RunTrust } from '../verify/trust.js';
import { restoreRunnerFiles } from '../verify/runner-guard.js';
import { runsCode } from '../verify/guard-config.js';
import { pushBranch } from '../git/push.js';
import { runGit } from '../git/git.js';
import { ciConfigFiles } from './compare.js';
import { deliverPull, type PullDelivered } from './deliver-pr.js';
import { shellQuote } from '../../util/shell-quote.js';

/** What a delivery did: pushed (to which remote), and the pull request it opened or updated. */
export interface Delivered {
  remote: string | null;
  pull: PullDelivered | null;
}

/**
 * What delivery reads of the run's verification state (verify/trust.ts): the runner's files it puts back before a
 * push, the pins the loop's commits are compared with, and the commit the final gate passed on. Undefined: the run
 * ended before it held any of them (a start refused early).
 */
export type DeliveryTrust = Pick<RunTrust, 'guard' | 'pins' | 'gatePassed'> | undefined;

/** Pushes the plan branch when --deliver push or pr asks for it; `when` says which push this is, for the log. */
export async function deliverBranch(
  run: RunContext,
  trust: DeliveryTrust,
  when: string,
  iteration?: number,
): Promise<Delivered> {
  const none: Delivered = { remote: null, pull: null };
  const mode = run.options.deliver;
  if (mode === 'commit') return none;
  const { branch } = run;
  const top = run.paths.repoRoot;
  // A loop refused before it put the plan's branch in place has nothing to deliver.
  if ((await runGit(top, ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`])).code !== 0) return none;
  // The loop can end right after an agent run, before the guard ran (a rate limit's last hit): git's configuration as
  // the agent left it (a credential helper, core.sshCommand, a pushInsteadOf) would run with this push.
  const tampered = trust ? restoreRunnerFiles(trust.guard, runsCode).rejecting : [];
  if (tampered.length) {
    run.emit({
      type: 'warn',
      iteration,
      message: `--deliver ${mode}: ${branch} not pushed ${when}: git's configuration had changed since the loop started (${tampered.slice(0, 5).join(', ')}); it was put back; look at it, then push by hand with: git push origin ${shellQuote(branch)}`,
    });
    return none;
  }
  const outcome = await pushBranch(top, branch);
  const short = (ref: string) => ref.replace(/^refs\/heads\//, '');
  if (outcome.ok) {
    run.emit({
      type: 'info',
      iteration,
      message: `pushed ${branch} to ${outcome.target.remote}${short(outcome.target.ref) === branch ? '' : ` (as ${short(outcome.target.ref)})`} ${when}`,
    });
    await warnCiChanges(run, trust?.pins ?? null, outcome.target.remote, iteration);
    const pull =
      mode === 'pr' || mode === 'pr-merge'
        ? await deliverPull(run, trust?.pins ?? null, outcome.target.remote, when, iteration)
        : null;
    return { remote: outcome.target.remote, pull };
  }
  const retry = outcome.target
    ? `git push ${shellQuote(outcome.target.remote)} ${shellQuote(`${branch}${short(outcome.target.ref) === branch ? '' : `:${short(outcome.target.ref)}`}`)}`
    : `git remote add origin <url>, then git push origin ${shellQuote(branch)}`;
  run.emit({
    type: 'warn',
    iteration,
    message: `--deliver ${mode}: could not push ${branch}${outcome.target ? ` to ${outcome.target.remote}` : ''} ${when}: ${outcome.reason}; your commits are safe on the local branch ${branch}${mode === 'pr-merge' && iteration === undefined ? '' : ', and the exit code is unchanged'}; once fixed, push it with: ${retry}`,
  });
  return none;
}

const ciWarned = new WeakSet<RunContext>();

// A workflow the agent wrote runs on GitHub with the repository's secrets as soon as it is pushed (`on: push`): said
// once per run, when the loop's commits since its plan commit changed CI configuration.
async function warnCiChanges(run: RunContext, pins: Pins | null, remote: string, iteration?: number): Promise<void> {
  if (ciWarned.has(run) || !pins) return;
  const r = await runGit(run.paths.repoRoot, [
    'diff',
    '--no-renames',
    '--name-only',
    '--no-ext-diff',
    '-z',
    pins.commit,
    `refs/heads/${run.branch}`,
    '--',
  ]);
  const ci = r.code === 0 ? ciConfigFiles(r.stdout.split('\0').filter(Boolean)) : [];
  if (!ci.length) return;
  ciWarned.add(run);
  const shown = ci.slice(0, 5).join(', ') + (ci.length > 5 ? `, and ${ci.length - 5} more` : '');
  run.emit({
    type: 'warn',
    iteration,
    message: `--deliver ${run.options.deliver}: the pushed ${run.branch} changes CI configuration (${shown}); on ${remote} it may run with the repository's secrets: review those files now`,
  });
}

// Stopped by the user (push then on resume), to protect the branch from history the agent rewrote (look first), or
// refused before any iteration ran (a resume refused as tampered with included: nothing of it is to be sent anywhere).
const NO_PUSH_AT_END: ReadonlySet<LoopStatus> = new Set(['interrupted', 'cancelled', 'protected', 'refused']);

/**
 * The push at the end of a loop, unless it was interrupted, refused, or stopped to protect the branch, or was
 * delivered already (`delivered`: pr-merge pushes and merges before the loop's end is recorded).
 */
export async function deliverAtEnd(
  run: RunContext,
  trust: DeliveryTrust,
  status: LoopStatus,
  delivered: boolean,
): Promise<void> {
  if (run.options.deliver === 'commit' || delivered) return;
  if (NO_PUSH_AT_END.has(status)) {
    run.emit({
      type: 'info',
      message: `--deliver ${run.options.deliver}: ${run.branch} not pushed at the end (the loop is ${status}); ${status === 'protected' || status === 'refused' ? 'look at the branch first, as the hint says' : 'the next run pushes it'}`,
    });
    return;
  }
  await deliverBranch(run, trust, 'at the end of the loop');
}
