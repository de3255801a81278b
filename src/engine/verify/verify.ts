// SPEC §6: the agent does not mark its own homework. After each agent run the loop calls verifyIteration:
// edits to prd.json beyond passes/notes are undone, and every story newly flipped to `passes: true` is a
// claim that must survive a clean-tree check and the plan's own check commands before it counts.
import { readFileNoWait } from '../../util/read.js';
import { appendOwnFileSync } from '../../util/atomic.js';
import type { VerifyOptions } from './types.js';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { Prd, Story } from '../../prd/types.js';
import { isSettled } from '../../prd/skip.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import type { StoryVerdict, VerifyInput, VerifyResult } from './types.js';
import { planClaimOrder, planPrdRepair, planUnmetDependencies, type PrdRepairPlan } from './prd-diff.js';
import { formatPrdProblem, validatePrdText } from '../../prd/validate.js';
import { readTopLevel } from '../git/git.js';
import { headSha } from '../git/head.js';
import { readDirtyPaths } from '../git/read.js';
import { tryCommitRunnerFiles } from '../git/commit.js';
import { CheckSession } from './session.js';
import { ENGINE_FILES } from './runner-guard.js';
import { reviewClaim } from './review.js';
import { fingerprintFiles, sameFingerprint } from '../git/fingerprint.js';
import {
  applyRunnerNote,
  hasRunnerNote,
  planPinOwnerHint,
  renderOutOfOrder,
  renderPinnedBlock,
  renderPinnedChanges,
  renderRejectionBlock,
  renderRestoreBlock,
  renderUncommitted,
} from './report.js';
import type { CheckResult } from './checks.js';
import { LoopExit, LOOP_EXIT, guardWrite } from '../errors.js';
import { recordCheckLeftovers } from '../store/check-leftovers.js';
import { loopCommand } from '../../util/invocation.js';
import { showPath } from '../../util/repo-path.js';

export interface VerifyOutcome extends VerifyResult {
  /**
   * The commit the runner made of its own prd.json/progress.txt edits (`chore(ralph): ...`), or null.
   * It is bookkeeping, not the agent's progress: the no-progress counter must not count it.
   */
  runnerCommit: string | null;
}

interface Judgement {
  verdict: StoryVerdict;
  block?: string;
}

/** How the owner changes the plan of a runner loop (the in-session loop says its own). */
const RUNNER_PLAN_EDIT_HINT = 'cancel the loop, edit, commit, then --resume-last';

export async function verifyIteration(input: VerifyOptions): Promise<VerifyOutcome> {
  const now = input.now ?? (() => new Date());
  const top = input.topLevel ?? realpathSync(await readTopLevel(input.repoRoot));
  const plan = planRepair(input);
  for (const r of plan.restored) input.log('warn', `prd.json: ${r}`);
  if (plan.restored.length)
    input.log(
      'warn',
      `prd.json: only passes and notes are the agent's to change, so those edits were undone (if you edited the plan yourself: ${input.planEditHint ?? RUNNER_PLAN_EDIT_HINT})`,
    );

  const own = ownPaths(top, input);
  const head = plan.claims.length
    ? input.headAfterAgent !== undefined
      ? input.headAfterAgent
      : await headSha(top)
    : null;
  const session = new CheckSession(input, top, head, now);
  const dirty = plan.claims.length ? (await readDirtyPaths(top)).filter((p) => !isOwn(p, own)) : [];
  const judged = await judgeClaims(session, plan, dirty, input, now);
  applyOutcome(input, plan, judged, now);

  // One status after the runner's own writes serves both the side-effect warning (it skips the runner's files)
  // and the commit of those files.
  const after = plan.claims.length && input.inPlace ? await readDirtyPaths(top) : undefined;
  if (after) warnCheckSideEffects(after, own, dirty, input);
  const status = after ?? (plan.claims.length ? undefined : await readOwnStatus(top, own, input));
  const runnerCommit = await commitOwnFiles(
    top,
    own.files,
    commitMessage(judged, plan.restored.length > 0, input.iteration),
    input,
    status,
  );
  if (runnerCommit)
    input.log('info', `committed the runner's own edits to ${own.files.join(' and ')} as ${runnerCommit.slice(0, 7)}`);
  const verdicts = judged.map((j) => j.verdict);
  return {
    verdicts,
    restored: plan.restored,
    prd: plan.prd,
    allPass: plan.prd.userStories.every(isSettled),
    runnerCommit,
  };
}

function planRepair(input: VerifyOptions): PrdRepairPlan {
  // The runner's own settled baseline is known to parse; anything else is checked first.
  if (!input.prdBeforeParsed) refuseBrokenBefore(input);
  const file = displayPath(input, input.prdPath);
  // Off the branch, claims are rejected and the kept plan is edited: it must be a copy of its own.
  const onDisk = planPrdRepair(
    input.prdBefore,
    readPlanAfter(input),
    file,
    input.offBranch ? undefined : input.prdBeforeParsed,
  );
  if (!input.offBranch) return onDisk;
  // The plan on the loop's branch is the one kept (the other branch's may be older and say less passes); only the
  // claims come from the plan the agent left over there, and all of them are rejected.
  const elsewhere = planPrdRepair(input.prdBefore, input.offBranch.prdAfter, file).claims;
  return { ...onDisk, claims: [...new Set([...onDisk.claims, ...elsewhere])] };
}

function refuseBrokenBefore(input: VerifyOptions): void {
  try {
    JSON.parse(input.prdBefore);
  } catch (err) {
    // Someone other than the agent broke the plan between iterations: there is nothing sound to restore from.
    const problem = validatePrdText(input.prdBefore, displayPath(input, input.prdPath)).problems[0];
    const where = problem ? formatPrdProblem(problem) : (err as Error).message;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `the plan was not valid JSON before iteration ${input.iteration}: ${where}`,
      `fix the plan (${loopCommand('validate')}), then continue with --resume-last`,
    );
  }
}

/** Thrown out of judgeClaim when a check was stopped because the runner is being interrupted. */
class Interrupted extends Error {}

/**
 * Judges every claim, a story after the claims it depends on. An interrupted check decides nothing: the pass
 * ends with exit 130 before anything is written, so the resumed iteration judges the same claims again.
 */
async function judgeClaims(
  s: CheckSession,
  plan: PrdRepairPlan,
  dirty: string[],
  input: VerifyOptions,
  now: () => Date,
): Promise<Judgement[]> {
  const judged: Judgement[] = [];
  const accepted = new Set<string>();
  try {
    for (const id of planClaimOrder(plan.prd, plan.claims)) {
      // Iteration 0 is the start-of-run pass over stories the plan already marks done: no agent chose that order.
      const unmet = input.iteration > 0 ? planUnmetDependencies(plan.prd, id, plan.claims, accepted) : [];
      const j =
        input.story !== undefined && id !== input.story
          ? rejectClaim(
              s,
              plan.prd,
              id,
              `story ${id} is not this agent's: it works on ${input.story} only, and ${id} goes to another worker`,
              input,
              now,
              0,
            )
          : await judgeClaim(s, plan.prd, id, dirty, unmet, input, now);
      if (j.verdict.status !== 'rejected') accepted.add(id);
      judged.push(j);
    }
  } catch (err) {
    if (err instanceof Interrupted) throw interruptedExit(plan.claims, input);
    throw err;
  } finally {
    await s.close();
  }
  // Code the checks ran changed the engine or git's configuration: nothing they passed can be trusted.
  const violation = s.violation;
  return violation
    ? judged.map((j) =>
        j.verdict.status === 'rejected' ? j : rejectClaim(s, plan.prd, j.verdict.id, violation, input, now, 0),
      )
    : judged;
}

/** A rejected claim: its ledger line, the warning, and the progress.txt block for the next agent. */
function rejectClaim(
  s: CheckSession,
  prd: Prd,
  id: string,
  reason: string,
  input: VerifyOptions,
  now: () => Date,
  durationMs: number,
  check?: CheckResult,
  review?: string,
): Judgement {
  const title = prd.userStories.find((x) => x.id === id)!.title;
  s.recordVerdict(id, 'rejected', { reason, durationMs });
  input.log('warn', `${id} rejected: ${reason}`);
  const block = renderRejectionBlock({
    time: now(),
    iteration: input.iteration,
    storyId: id,
    title,
    commit: s.commit,
    reason,
    check,
    review,
  });
  return { verdict: { id, status: 'rejected', reason }, block };
}

function interruptedExit(claims: string[], input: VerifyInput): LoopExit {
  const list = claims.join(', ');
  input.log(
    'warn',
    `verification was interrupted: nothing was decided about ${list}; prd.json is left as it is, and the claim${claims.length === 1 ? ' is' : 's are'} checked again when the loop resumes`,
  );
  return new LoopExit(
    LOOP_EXIT.interrupted,
    `interrupted while verifying ${list}; nothing decided, state saved`,
    'continue with: ./ralph/ralph.sh --resume-last',
  );
}

async function judgeClaim(
  s: CheckSession,
  prd: Prd,
  id: string,
  dirty: string[],
  unmet: string[],
  input: VerifyOptions,
  now: () => Date,
): Promise<Judgement> {
  const story = prd.userStories.find((x) => x.id === id)!;
  const started = Date.now();
  let pinned = '';
  const reject = (why: string, check?: CheckResult, review?: string): Judgement =>
    rejectClaim(s, prd, id, why + pinned, input, now, Date.now() - started, check, review);
  if (input.violation) return reject(input.violation);
  if (input.offBranch) return reject(input.offBranch.reason);
  if (dirty.length) return reject(renderUncommitted(dirty));
  if (unmet.length) return reject(renderOutOfOrder(unmet));
  const run = await s.runStory(prd, story);
  if (run.outcome === 'interrupted') throw new Interrupted();
  const changes =
    run.outcome !== 'no-checks' && run.pinnedChanges.length
      ? renderPinnedChanges(
          run.pinnedChanges,
          input.pins?.commit ?? '',
          planPinOwnerHint(id, showPath(input.repoRoot, input.prdPath), input.loopId, input.iteration),
        )
      : '';
  if (changes) {
    pinned = `; ${changes}`;
    input.log('warn', `${id}: ${changes}`);
  }
  if (run.outcome === 'failed') {
    const j = reject(run.why, run.check);
    return { ...j, verdict: { ...j.verdict, failedCheck: true } };
  }
  // Only a claim its checks let through is reviewed (verify/review.ts).
  const review = await reviewClaim(s, story, run, input);
  if (review === 'interrupted') throw new Interrupted();
  if (review && 'reason' in review) return reject(review.reason, undefined, review.reasons);
  const shipped = review ? { shipped: review.shipped } : {};
  if (run.outcome === 'no-checks') {
    const reason = "no checks apply to this story (neither the plan's nor its own); accepted on the agent's word";
    s.recordVerdict(id, 'unverified', { reason });
    input.log('warn', `${id} unverified: ${reason}`);
    return { verdict: { id, status: 'unverified', reason, ...shipped } };
  }
  s.recordVerdict(id, 'verified', { reason: changes, durationMs: Date.now() - started });
  input.log(
    'info',
    `${id} verified: ${run.count} check${run.count === 1 ? '' : 's'} passed at ${s.commit?.slice(0, 7) ?? '(no commit)'}`,
  );
  if (!changes) return { verdict: { id, status: 'verified', ...shipped } };
  // Verified with the pinned versions: the owner still gets to see that the agent changed them.
  const note = `verified with the pinned tests; ${changes}`;
  return {
    verdict: { id, status: 'verified', reason: note, ...shipped },
    block: renderPinnedBlock({ time: now(), iteration: input.iteration, storyId: id, commit: s.commit, note }),
  };
}

/**
 * Writes the verdicts: progress.txt first (the record the next agent reads), then prd.json. A write that fails
 * ends the loop (RunnerFileError) before anything is committed; the ledger already holds the verdicts, so a
 * rejected claim the plan still shows as passing is never recorded as verified.
 */
function applyOutcome(input: VerifyInput, plan: PrdRepairPlan, judged: Judgement[], now: () => Date): void {
  const edited = applyVerdicts(
    plan.prd,
    judged.map((j) => j.verdict),
  );
  const blocks = judged.flatMap((j) => (j.block ? [j.block] : []));
  if (plan.restored.length) blocks.push(renderRestoreBlock(now(), input.iteration, plan.restored));
  const rejected = judged.filter((j) => j.verdict.status === 'rejected').map((j) => j.verdict.id);
  const what = rejected.length
    ? `${rejected.join(', ')} ${rejected.length === 1 ? 'was' : 'were'} rejected (see the ledger)`
    : 'the verdicts were decided';
  if (blocks.length)
    guardWrite(
      input.progressPath,
      input.repoRoot,
      () => appendOwnFileSync(input.progressPath, blocks.join('')),
      `${what} but the note for the next iteration could not be written`,
    );
  if (plan.changed || edited)
    guardWrite(
      input.prdPath,
      input.repoRoot,
      () => writePrd(input, plan.prd, plan.unusable),
      `${what} but the plan could not be updated${rejected.length ? ' and still says passes: true' : ''}`,
    );
}

/** Undoes rejected claims and clears stale runner notes; true when the plan changed. */
function applyVerdicts(prd: Prd, verdicts: StoryVerdict[]): boolean {
  let edited = false;
  for (const v of verdicts) {
    const story = prd.userStories.find((x) => x.id === v.id) as Story;
    if (v.status === 'rejected') {
      story.passes = false;
      story.notes = applyRunnerNote(story.notes, `rejected: ${v.reason}`);
      edited = true;
    } else if (v.status === 'verified' && v.reason) {
      story.notes = applyRunnerNote(story.notes, v.reason);
      edited = true;
    } else if (hasRunnerNote(story.notes)) {
      story.notes = applyRunnerNote(story.notes, null);
      edited = true;
    }
  }
  return edited;
}

function writePrd(input: VerifyInput, prd: Prd, verbatim: boolean): void {
  // An unusable file is replaced by the exact previous text, formatting and all.
  atomicWriteFileSync(input.prdPath, verbatim ? input.prdBefore : JSON.stringify(prd, null, 2) + '\n');
}

interface OwnPaths {
  /** prd.json and progress.txt relative to the top level: the agent edits them, the runner commits them. */
  files: string[];
  /** Runtime folders (this loop's .runs/<id>/ and .runs/ itself) that are never the agent's work. */
  dirs: string[];
}

function ownPaths(top: string, input: VerifyInput): OwnPaths {
  const rel = (p: string): string | null => {
    const r = path.relative(top, resolveReal(p)).split(path.sep).join('/');
    return r && !r.startsWith('../') && r !== '..' && !path.isAbsolute(r) ? r : null;
  };
  const files = [
    ...[input.prdPath, input.progressPath].map(rel).filter((p): p is string => p !== null),
    ...(input.extraOwnFiles ?? []),
  ];
  const runDir = path.dirname(input.ledgerPath);
  const dirs = [runDir, ...(path.basename(path.dirname(runDir)) === '.runs' ? [path.dirname(runDir)] : [])]
    .map(rel)
    .filter((p): p is string => p !== null);
  return { files, dirs };
}

function isOwn(p: string, own: OwnPaths): boolean {
  return own.files.includes(p) || own.dirs.some((d) => p === d || p.startsWith(d + '/'));
}

/**
 * Checks that write into the tree (a formatter, build output nobody ignored) would be blamed on the next claim.
 * The paths are also recorded, so a later start refused for them can point at .gitignore (verify/start-claims.ts).
 */
function warnCheckSideEffects(after: string[], own: OwnPaths, before: string[], input: VerifyInput): void {
  const added = after.filter((p) => !isOwn(p, own) && !before.includes(p));
  if (!added.length) return;
  input.log(
    'warn',
    `the checks changed files in the working tree (${added.slice(0, 10).join(', ')}); add them to .gitignore or the next claim will be rejected as uncommitted work`,
  );
  const runs = path.dirname(path.dirname(input.ledgerPath));
  if (path.basename(runs) === '.runs') recordCheckLeftovers(runs, added);
}

/**
 * Without claims, status only says whether the runner's own files need committing. When they are byte for byte as
 * they were at the last status that listed none of them (same refs, same index), it would list none again: [].
 * undefined: commitOwnFiles asks git.
 */
async function readOwnStatus(top: string, own: OwnPaths, input: VerifyOptions): Promise<string[] | undefined> {
  const memo = input.ownStatus;
  if (!memo || input.extraOwnFiles?.length) return undefined;
  // Taken before status runs: a change in between is seen by the next comparison.
  const fingerprint = fingerprintFiles(memo.dirs, top, own.files);
  if (sameFingerprint(fingerprint, memo.clean)) return [];
  memo.clean = null;
  let dirty: string[];
  try {
    dirty = await readDirtyPaths(top);
  } catch {
    // commitOwnFiles asks again and reports git's complaint.
    return undefined;
  }
  if (fingerprint !== null && !own.files.some((f) => dirty.includes(f))) memo.clean = fingerprint;
  return dirty;
}

/** A failed commit must not lose the verdicts: warn and go on. */
function commitOwnFiles(
  top: string,
  files: string[],
  message: string,
  input: VerifyInput,
  dirty?: string[],
): Promise<string | null> {
  // The runner's engine files too: a commit of the agent's that changed them through the index alone (the working
  // tree's copies stay the runner's) gets them back here, once git status sees the difference.
  return tryCommitRunnerFiles(
    top,
    [...files, ...ENGINE_FILES],
    message,
    (reason) => input.log('warn', `could not commit the runner's edits to ${files.join(' and ')}: ${reason}`),
    dirty,
  );
}

function commitMessage(judged: Judgement[], restored: boolean, iteration: number): string {
  const rejected = judged
    .filter((j) => j.verdict.status === 'rejected')
    .map((j) => `${j.verdict.id} (${rejectionKind(j.verdict.reason)})`);
  const parts = [
    ...(rejected.length ? [`reject ${rejected.join(', ')}`] : []),
    ...(restored ? ['restore prd.json'] : []),
  ];
  return `chore(ralph): ${parts.length ? parts.join('; ') : iteration === 0 ? 'record the check at start' : `record iteration ${iteration}`}`;
}

function rejectionKind(reason = ''): string {
  if (reason.startsWith('uncommitted')) return 'uncommitted work';
  if (reason.startsWith('out of order')) return 'out of order';
  if (reason.startsWith('the work is not on')) return 'work on another branch';
  if (reason.startsWith('the agent changed')) return 'runner files changed';
  if (reason.startsWith('the agent set')) return 'changes hidden from git status';
  if (reason.startsWith('the agent made or changed a git repository')) return 'a git repository in the tree';
  if (/^the commit \w+ holds the runner's own/.test(reason)) return 'runner files in the commit';
  if (reason.startsWith('the checks')) return 'runner files changed by the checks';
  if (reason.startsWith('the reviewer asked')) return 'revised by the reviewer';
  if (reason.startsWith('not shipped')) return 'not shipped by the reviewer';
  return 'check failed';
}

/** A path for messages: relative to the repository when inside it. */
function displayPath(input: VerifyInput, file: string): string {
  const rel = path.relative(input.repoRoot, file).split(path.sep).join('/');
  return rel && !rel.startsWith('../') && !path.isAbsolute(rel) ? rel : file;
}

// The plan as the agent left it; the very `prdBefore` string when its bytes are the baseline's, so nothing is decoded.
function readPlanAfter(input: VerifyInput): string | null {
  if (!input.prdBeforeBytes || !input.prdBeforeParsed) return readText(input.prdPath);
  let bytes: Buffer;
  try {
    bytes = readFileNoWait(input.prdPath);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : '';
  }
  return bytes.equals(input.prdBeforeBytes) ? input.prdBefore : bytes.toString('utf8');
}

// Null only for a file that is gone: one that cannot be read for another reason reads as empty, and is restored.
function readText(file: string): string | null {
  try {
    return readFileNoWait(file).toString('utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : '';
  }
}

/** realpath of a file that may not exist yet: resolve its folder instead. */
function resolveReal(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      return abs;
    }
  }
}

// The loop warns with this at start (SPEC §6: a plan without checks runs on the agent's word).
