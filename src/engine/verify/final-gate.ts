// The final gate (SPEC §6): before the loop may exit 0, every check of every story and of the plan runs once more
// on a fresh checkout of the final commit, with the pinned tests. A claim is checked at its own commit; a later
// story can still break it, and only this pass sees that. Exit 0 means: each story's checks pass here. Stories' checks
// run two at a time; a story whose check failed while another check ran is judged again on its own, in a fresh
// checkout once the others are over, and that run is its verdict.
import { appendOwnFileSync } from '../../util/atomic.js';
import type { Prd, Story } from '../../prd/types.js';
import { activeStories } from '../../prd/skip.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import type { ShippedReview, StoryVerdict, VerifyInput } from './types.js';
import { planClaimOrder } from './prd-diff.js';
import { keyDir, renderRecord, type VerdictRecord } from '../store/verdict-record.js';
import { planPinOwnerHint, renderRejectionBlock } from './report.js';
import { planGateRejection, renderGateReason } from './gate-verdict.js';
import { findStaleShips, sealable } from './shipped.js';
import { showPath } from '../../util/repo-path.js';
import { CheckSession, checkoutKey, type StoryRun } from './session.js';
import { CHECKS_AT_ONCE, mapAtMost } from '../../util/at-most.js';
import { headSha } from '../git/head.js';
import { tryCommitRunnerFiles, writeVerdictNote } from '../git/commit.js';
import { guardWrite } from '../errors.js';
import { ENGINE_FILES } from './runner-guard.js';

export interface GateInput extends Omit<VerifyInput, 'prdBefore' | 'headAfterAgent'> {
  /** The plan as the runner last settled it (its baseline), not the file on disk. */
  prd: Prd;
  topLevel: string;
  signal?: AbortSignal;
  /** The commit each story's claim was verified at in this run, to name the range that broke it. */
  verifiedAt: ReadonlyMap<string, string>;
  /** The reviewer's SHIP of each story accepted in this run: sealed with the verdicts of the stories that pass. */
  shipped: ReadonlyMap<string, ShippedReview>;
  /** Every SHIP of this run, those of stories rejected since too: the commits their reviewers read (verify/shipped.ts). */
  reviewed?: readonly ShippedReview[];
  /** The key the runner held from its start (verify/trust.ts); null: no record is written (the start said why). */
  verdictKey: Buffer | null;
  /**
   * Judge only the stories that pass in `prd` (the merge queue of a --parallel run: the merged story and those merged
   * before it), not every active story.
   */
  onlyPassing?: boolean;
  /** Judge only these stories (the merge queue, asking whether stories merged before fail on the branch itself). */
  onlyStories?: readonly string[];
  /**
   * False: no verdict record is written for a pass that passed. The record on a commit is what status and the
   * dashboard trust for every story of the loop, so a pass over a few stories must not replace the record there.
   */
  seal?: boolean;
  /** What the log calls this pass (default "final gate"). */
  label?: string;
  /** Stories whose checks passed on the plan commit before any work (verify/weak-checks.ts): sealed as weak. */
  weak?: ReadonlySet<string>;
}

export interface GateResult {
  /** True when every story with checks passed them all on `commit` (stories without checks are unverified). */
  passed: boolean;
  /** Null when the gate was interrupted: nothing was decided. */
  interrupted: boolean;
  commit: string | null;
  verdicts: StoryVerdict[];
  /** The plan as the gate left it on disk. */
  prd: Prd;
  /** The runner's commit of the rejections, or null. */
  runnerCommit: string | null;
  /** Verified stories whose only proof is a weak check (sorted): `verified (weak check)` in the exit line and the record. */
  weak?: string[];
}

export async function runFinalGate(input: GateInput): Promise<GateResult> {
  const commit = await headSha(input.topLevel);
  const prd = structuredClone(input.prd);
  const newSession = () =>
    new CheckSession({ ...input, prdBefore: '' }, input.topLevel, commit, input.now ?? (() => new Date()), true);
  const session = newSession();
  input.log(
    'info',
    `${input.label ?? 'final gate: every check once more'} ${input.inPlace === true ? 'in the working tree at' : 'on a fresh checkout of'} ${commit?.slice(0, 7) ?? '(no commit)'}`,
  );
  const verdicts: StoryVerdict[] = [];
  const blocks: string[] = [];
  // Stories the plan sets aside are not judged: they are not part of what exit 0 promises (prd/skip.ts).
  const judged = activeStories(prd.userStories).filter(
    (s) => (!input.onlyPassing || s.passes === true) && (!input.onlyStories || input.onlyStories.includes(s.id)),
  );
  const stories = planClaimOrder(
    prd,
    judged.map((s) => s.id),
  ).map((id) => prd.userStories.find((s) => s.id === id) as Story);
  // In place (or before any commit) the checks run in your working tree: one at a time there, as they always did, and
  // never judged again (a second run would find what the first one left in that same tree).
  const inTree = input.inPlace === true || commit === null;
  let runs: Decided[] | 'interrupted';
  try {
    runs = await runSideBySide(session, prd, stories, inTree ? 1 : CHECKS_AT_ONCE, input.signal);
  } finally {
    await session.close();
  }
  let violation = session.violation;
  // Code the checks ran changed what the runner trusts: every verdict falls anyway, so nothing more of it runs.
  if (runs !== 'interrupted' && !inTree && !violation) {
    const again = await runAgainAlone(session, newSession, prd, stories, runs, input);
    runs = again.runs;
    violation ??= again.violation;
  }
  if (runs === 'interrupted') return { passed: false, interrupted: true, commit, verdicts, prd, runnerCommit: null };
  // Verdicts in the plan's order, whichever finished first.
  for (const [i, story] of stories.entries()) {
    const judged = judgeAtGate(session, story, runs[i], input);
    verdicts.push(judged.verdict);
    if (judged.block) blocks.push(judged.block);
  }
  if (violation) overturnAtGate(session, prd, verdicts, blocks, violation, input);
  else if (input.review && commit) await rejectStaleShips(session, prd, verdicts, blocks, input, commit);
  const rejection = planGateRejection(prd, verdicts, violation ? 'runner files changed by the checks' : undefined);
  if (!rejection) {
    const weak = verdicts
      .filter((v) => v.status === 'verified' && input.weak?.has(v.id))
      .map((v) => v.id)
      .sort();
    if (input.seal !== false) await recordVerdicts(input, commit, verdicts, weak);
    return {
      passed: true,
      interrupted: false,
      commit,
      verdicts,
      prd,
      runnerCommit: null,
      ...(weak.length ? { weak } : {}),
    };
  }
  const list = rejection.ids.join(', ');
  guardWrite(
    input.progressPath,
    input.repoRoot,
    () => appendOwnFileSync(input.progressPath, blocks.join('')),
    `the final gate rejected ${list} but the note for the next iteration could not be written`,
  );
  guardWrite(
    input.prdPath,
    input.repoRoot,
    () => atomicWriteFileSync(input.prdPath, `${JSON.stringify(rejection.prd, null, 2)}\n`),
    `the final gate rejected ${list} but the plan could not be updated and still says passes: true`,
  );
  // With the runner's engine files, which a sealed checkout found other than the loop started with (pin-apply.ts).
  const files = [...[input.prdPath, input.progressPath].map((f) => relTo(input.topLevel, f)), ...ENGINE_FILES];
  const runnerCommit = await tryCommitRunnerFiles(input.topLevel, files, rejection.message, (reason) =>
    input.log('warn', `could not commit the final gate's verdicts: ${reason}`),
  );
  return { passed: false, interrupted: false, commit, verdicts, prd: rejection.prd, runnerCommit };
}

type TimedRun = { run: StoryRun; durationMs: number };
/** A story's run that decided something (none of the gate's was interrupted). */
type Decided = { run: Exclude<StoryRun, { outcome: 'interrupted' }>; durationMs: number };

function decided(r: TimedRun): r is Decided {
  return r.run.outcome !== 'interrupted';
}

async function timedRun(s: CheckSession, prd: Prd, story: Story, signal?: AbortSignal): Promise<TimedRun> {
  if (signal?.aborted) return { run: { outcome: 'interrupted' }, durationMs: 0 };
  const started = Date.now();
  const run = await s.runStory(prd, story);
  return { run, durationMs: Date.now() - started };
}

/**
 * Every story's checks, `atOnce` stories at a time in one checkout. Stories are grouped by the checkout they need
 * (their `mayChange`), groups in the order of their first story, one group after another: a new checkout's setup
 * renews the checks' HOME, which must not happen under a running check. The runs in `stories`' order; 'interrupted'
 * as soon as one was.
 */
async function runSideBySide(
  s: CheckSession,
  prd: Prd,
  stories: readonly Story[],
  atOnce: number,
  signal?: AbortSignal,
): Promise<Decided[] | 'interrupted'> {
  const byCheckout = new Map<string, number[]>();
  for (const [i, story] of stories.entries()) {
    const key = checkoutKey(story.mayChange);
    byCheckout.set(key, [...(byCheckout.get(key) ?? []), i]);
  }
  const runs: Decided[] = new Array(stories.length);
  for (const group of byCheckout.values()) {
    const done = await mapAtMost(group, atOnce, (i) => timedRun(s, prd, stories[i], signal));
    if (!done.every(decided)) return 'interrupted';
    for (const [j, i] of group.entries()) runs[i] = done[j];
  }
  return runs;
}

/**
 * A story whose check failed while another check ran (load near its timeout, a port or a file both use) is judged
 * again once the side-by-side pass is over and closed: one story at a time, each in a session of its own (a fresh
 * checkout, a fresh HOME, its leftovers stopped at its end), so nothing its first run or any other story's left
 * counts. That run is the verdict, and its time is added to the first's. A failure that ran alone is not run again.
 */
async function runAgainAlone(
  first: CheckSession,
  newSession: () => CheckSession,
  prd: Prd,
  stories: readonly Story[],
  runs: Decided[],
  { log, signal }: Pick<GateInput, 'log' | 'signal'>,
): Promise<{ runs: Decided[] | 'interrupted'; violation?: string }> {
  const again = stories.flatMap((story, i) => {
    const { run } = runs[i];
    return run.outcome === 'failed' && run.check && run.scope && first.ranBeside(run.check)
      ? [{ story, i, command: run.check.command }]
      : [];
  });
  const out = [...runs];
  let violation: string | undefined;
  for (const { story, i, command } of again) {
    log('info', `${story.id}: check \`${command}\` failed while another check ran; judged again on its own`);
    const alone = newSession();
    let run: TimedRun;
    try {
      run = await timedRun(alone, prd, story, signal);
    } finally {
      await alone.close();
    }
    violation ??= alone.violation;
    if (!decided(run)) return { runs: 'interrupted' };
    out[i] = { ...run, durationMs: runs[i].durationMs + run.durationMs };
    // Every verdict falls with a violation: no more of the agent's code runs for this gate.
    if (violation) break;
  }
  return { runs: out, violation };
}

type GateJudgement = { verdict: StoryVerdict; block?: string };

function judgeAtGate(s: CheckSession, story: Story, { run, durationMs }: Decided, input: GateInput): GateJudgement {
  const id = story.id;
  const record = (status: StoryVerdict['status'], reason?: string) =>
    s.recordVerdict(id, status, { reason, durationMs, gate: true });
  if (run.outcome === 'no-checks') {
    const reason = "no checks apply to this story; accepted on the agent's word";
    record('unverified', reason);
    return { verdict: { id, status: 'unverified', reason } };
  }
  if (run.outcome === 'passed') {
    record('verified');
    return { verdict: { id, status: 'verified' } };
  }
  const reason = renderGateReason({
    commit: s.commit,
    why: run.why,
    pinnedChanges: run.pinnedChanges,
    pinCommit: input.pins?.commit ?? '',
    verifiedAt: input.verifiedAt.get(id),
    owner: planPinOwnerHint(id, showPath(input.repoRoot, input.prdPath), input.loopId, input.iteration),
  });
  record('rejected', reason);
  input.log('warn', `${id} rejected by the final gate: ${run.why}`);
  return {
    verdict: { id, status: 'rejected', reason },
    block: renderRejectionBlock({
      time: new Date(),
      iteration: input.iteration,
      storyId: id,
      title: story.title,
      commit: s.commit,
      reason,
      check: run.check,
    }),
  };
}

/** Code the gate's checks ran changed the engine or git's configuration: none of what they passed counts. */
function overturnAtGate(
  s: CheckSession,
  prd: Prd,
  verdicts: StoryVerdict[],
  blocks: string[],
  why: string,
  input: GateInput,
): void {
  for (const [i, v] of verdicts.entries()) {
    if (v.status === 'rejected') continue;
    const reason = renderGateReason({ commit: s.commit, why, pinnedChanges: [], pinCommit: '' });
    s.recordVerdict(v.id, 'rejected', { reason, gate: true });
    input.log('warn', `${v.id} rejected by the final gate: ${why}`);
    verdicts[i] = { id: v.id, status: 'rejected', reason };
    const title = prd.userStories.find((x) => x.id === v.id)?.title ?? '';
    blocks.push(
      renderRejectionBlock({
        time: new Date(),
        iteration: input.iteration,
        storyId: v.id,
        title,
        commit: s.commit,
        reason,
      }),
    );
  }
}

/**
 * Where a review is required, exit 0 says a reviewer read the story's work: a SHIP whose files a later commit changed
 * that no reviewer read (a story with "review": false, a commit between claims) no longer does. Such a story goes
 * back, and its next review's diff starts at the last shipped commit, so that change is in it.
 */
async function rejectStaleShips(
  s: CheckSession,
  prd: Prd,
  verdicts: StoryVerdict[],
  blocks: string[],
  input: GateInput,
  commit: string,
): Promise<void> {
  const own = [input.prdPath, input.progressPath].map((f) => relTo(input.topLevel, f));
  for (const stale of await findStaleShips(input.topLevel, commit, input.shipped, own, input.reviewed)) {
    const i = verdicts.findIndex((v) => v.id === stale.id && v.status !== 'rejected');
    if (i < 0) continue;
    const files =
      stale.files.slice(0, 3).join(', ') + (stale.files.length > 3 ? ` and ${stale.files.length - 3} more` : '');
    const reason = `the reviewer shipped ${stale.id} at ${stale.shipped.slice(0, 7)}, and ${stale.by.slice(0, 7)} changed its files since (${files}) where no reviewer read it; claim it again, and the review reads the change`;
    s.recordVerdict(stale.id, 'rejected', { reason, gate: true });
    input.log('warn', `${stale.id} rejected by the final gate: ${reason}`);
    verdicts[i] = { id: stale.id, status: 'rejected', reason };
    const title = prd.userStories.find((x) => x.id === stale.id)?.title ?? '';
    blocks.push(
      renderRejectionBlock({ time: new Date(), iteration: input.iteration, storyId: stale.id, title, commit, reason }),
    );
  }
}

/**
 * The verdict record status and the dashboard trust (SPEC §6): a note on the final commit, under refs/notes/ralphkit.
 * Best effort: a failure is reported, and the loop's exit code (already true in git and the plan) stands.
 */
async function recordVerdicts(
  input: GateInput,
  commit: string | null,
  verdicts: StoryVerdict[],
  weak: string[],
): Promise<void> {
  if (!commit) return;
  const key = input.verdictKey;
  if (!key) {
    input.log(
      'warn',
      `no key to seal the verdict record with (${keyDir()}/verdict.key, see the warning at the start); status will show this loop's verdicts as reported, not verified`,
    );
    return;
  }
  const reviews = verdicts.flatMap((v) =>
    v.status !== 'rejected' && input.shipped.has(v.id) ? [[v.id, sealable(input.shipped.get(v.id)!)] as const] : [],
  );
  const record: VerdictRecord = {
    ralphkit: 1,
    loop: input.loopId,
    commit,
    pins: input.pins?.commit ?? null,
    time: new Date().toISOString(),
    stories: Object.fromEntries(verdicts.map((v) => [v.id, v.status])),
    ...(reviews.length ? { reviews: Object.fromEntries(reviews) } : {}),
    ...(weak.length ? { weak } : {}),
  };
  try {
    await writeVerdictNote(input.topLevel, commit, renderRecord(record, key));
  } catch (err) {
    input.log(
      'warn',
      `could not record the verdicts as a git note on ${commit.slice(0, 7)}: ${(err as Error).message}`,
    );
  }
}

function relTo(top: string, file: string): string {
  return file.startsWith(`${top}/`) ? file.slice(top.length + 1) : file;
}
