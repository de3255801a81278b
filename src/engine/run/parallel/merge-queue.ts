// The merge queue of a --parallel run: the stories verified on their branches merged onto the plan branch in one pass,
// each onto the one before, the checks of every merged story run once on the last merge, a failing batch split in
// halves to find the story to send back, and only a checked merge published. In the integration tree, under
// PlanBranch.exclusive, like every other write of the plan branch (plan-branch.ts).
import type { QueuedMerge } from '../../store/state-types.js';
import type { StoryVerdict } from '../../verify/types.js';
import { runGit } from '../../git/git.js';
import { ENGINE_FILES } from '../../verify/runner-guard.js';
import { runFinalGate } from '../../verify/final-gate.js';
import { WorkProtected } from '../../errors.js';
import { settleBaseline } from '../../verify/trust.js';
import type { Prd } from '../../../prd/types.js';
import { verifyInput } from '../deps.js';
import { abandonMerge, detachAt, mergedBetween, mergeStory, publishMerge } from './merge.js';
import { mergeLogs, planWithOutcome } from './plan-log.js';
import { storyBranch } from './worker-trees.js';
import { readStorySide, type StorySide } from './story-side.js';
import { shellQuote } from '../../../util/shell-quote.js';
import type { PlanBranch } from './plan-branch.js';
import type { BatchOutcome, SentBack } from './types.js';

/** One merge of a batch: the queued story merged onto the link before it (or the tip), with the plan and log there. */
interface Link {
  entry: QueuedMerge;
  commit: string;
  plan: Prd;
  log: string;
}

/**
 * The queued stories onto the branch in one pass (a batch, as merge queues do): each merged in turn onto the one
 * before, then the checks of every merged story run once, on the last merge. A failure splits the batch: the first
 * half is checked on its own last merge (a commit already made), down to the first story alone, which is then sent
 * back (unless the stories merged before fail on the tip by themselves). Only a checked merge is published.
 */
export function mergeBatch(b: PlanBranch, entries: readonly QueuedMerge[], signal: AbortSignal): Promise<BatchOutcome> {
  return b.exclusive(async () => {
    await b.refuseMoved();
    const sentBack: SentBack[] = [];
    const links = await buildLinks(b, entries, sentBack);
    let n = links.length;
    let blamedTip = false;
    while (n > 0) {
      const link = links[n - 1];
      const batch = links.slice(0, n).map((l) => l.entry.story);
      const gate = await gateAt(b, link, batch, signal);
      if (gate.interrupted) {
        await abandonMerge(b.tree, b.run.branch, b.tip);
        return { merged: [], judged: 0, sentBack, interrupted: true };
      }
      if (gate.passed) {
        if (
          await publish(
            b,
            links.slice(0, n),
            gate.verdicts.map((v) => v.id),
            sentBack,
          )
        )
          return { merged: batch, commit: link.commit, judged: gate.verdicts.length, sentBack };
        return { merged: [], judged: 0, sentBack };
      }
      await abandonMerge(b.tree, b.run.branch, b.tip);
      if (!blamedTip) {
        blamedTip = true;
        const broken = await blameTip(b, batch, gate.verdicts, signal);
        if (broken === 'interrupted') return { merged: [], judged: 0, sentBack, interrupted: true };
        if (broken) return { merged: [], judged: 0, sentBack, broken };
      }
      if (n > 1) {
        n = Math.ceil(n / 2);
        b.run.emit({
          type: 'info',
          message: `merge queue: the batch ${batch.join(', ')} failed its checks; checking the first ${n} on their own`,
        });
        continue;
      }
      const failed = gate.verdicts
        .filter((v) => v.status === 'rejected')
        .map((v) => `${v.id}: ${v.reason ?? 'rejected'}`);
      sentBack.push(
        await b.sendBack(
          link.entry.story,
          `after the merge onto ${b.tip.slice(0, 7)}, checks failed (${failed.join('; ')})`,
          await readStorySide(b.tree, b.run.paths, link.entry.story, link.entry.head, b.tip),
          [],
        ),
      );
      break;
    }
    return { merged: [], judged: 0, sentBack };
  });
}

/**
 * Each entry merged onto the last link (the first onto the tip). One that conflicts with the tip itself is sent
 * back with both sides named; one that conflicts only with the links before it waits for the next pass.
 */
async function buildLinks(b: PlanBranch, entries: readonly QueuedMerge[], sentBack: SentBack[]): Promise<Link[]> {
  const links: Link[] = [];
  for (const entry of entries) {
    const last = links.at(-1);
    const base = last?.commit ?? b.tip;
    const story = b.plan.userStories.find((s) => s.id === entry.story);
    if (!story) {
      sentBack.push({ story: entry.story, reason: `the plan has no story ${entry.story}`, conflictsWith: [] });
      continue;
    }
    const side = await readStorySide(b.tree, b.run.paths, entry.story, entry.head, base);
    const plan = planWithOutcome(last?.plan ?? b.plan, entry.story, true, side.notes, null);
    const log = mergeLogs(last?.log ?? b.readLog(), side.logBase, side.log);
    const branch = storyBranch(b.run.branch, entry.story);
    const attempt = await mergeStory(b.tree, {
      branch: b.run.branch,
      planTip: base,
      storyHead: entry.head,
      keep: [b.rel(b.run.paths.prd), b.rel(b.run.paths.progress), ...b.promptKept(), ...ENGINE_FILES],
      write: () => b.writeFiles(side.ontoPlan, plan, log),
      written: [b.rel(b.run.paths.prd), b.rel(b.run.paths.progress)],
      message: `ralph: merge ${entry.story} (${story.title}) from ${branch}\n\nVerified on ${branch} at ${entry.head.slice(0, 7)}, and again after this merge by the merge queue of loop ${b.state.id}.`,
    });
    if (attempt.kind === 'merged') {
      links.push({ entry, commit: attempt.commit, plan, log });
      continue;
    }
    if (last) {
      b.run.emit({
        type: 'info',
        message: `merge queue: ${entry.story} does not merge onto ${links.map((l) => l.entry.story).join(', ')}; it waits for the next pass`,
      });
      continue;
    }
    sentBack.push(await sendBackConflict(b, entry, attempt.files, attempt.message, side));
  }
  return links;
}

/** A story whose branch conflicts with the tip: sent back, naming the files and the stories merged since that changed them. */
async function sendBackConflict(
  b: PlanBranch,
  entry: QueuedMerge,
  files: readonly string[],
  message: string,
  side: StorySide,
): Promise<SentBack> {
  const ids = b.plan.userStories.map((s) => s.id);
  // No conflicted file: git refused the merge for another reason (say, an unrelated history), no other side to name.
  const since = side.base && files.length ? await mergedBetween(b.tree, side.base, b.tip, ids, files) : [];
  const where = files.length ? ` in ${files.slice(0, 10).join(', ')}` : `: ${message}`;
  const other = since.length
    ? ` with ${since.join(', ')}, merged since ${entry.story} started from ${side.base.slice(0, 7)}`
    : '';
  const sent = await b.sendBack(
    entry.story,
    `its branch does not merge onto ${b.run.branch} at ${b.tip.slice(0, 7)} (conflict${where}${other})`,
    side,
    since,
  );
  return sent;
}

/** The tree detached at `link`'s merge, and the checks of every story passing there run once on it. */
async function gateAt(b: PlanBranch, link: Link, batch: readonly string[], signal: AbortSignal) {
  await detachAt(b.tree, link.commit);
  const gate = await runFinalGate({
    ...verifyInput(b.run, b.state, b.trust, b.state.iteration, signal),
    prd: link.plan,
    verifiedAt: b.trust.verifiedAt,
    shipped: b.trust.shipped,
    reviewed: b.trust.reviewed,
    verdictKey: b.trust.verdictKey,
    weak: b.trust.weak,
    onlyPassing: true,
    label: `merge queue: ${batch.join(', ')} merged; the checks of every merged story`,
  });
  // The gate checks the tree's HEAD: it must be the merge that is published (a worktree's HEAD is a file).
  if (!gate.interrupted && gate.commit !== link.commit) {
    await abandonMerge(b.tree, b.run.branch, b.tip);
    throw new WorkProtected(
      `the merge queue's tree moved from the merge of ${link.entry.story} (${link.commit.slice(0, 7)}) to ${gate.commit?.slice(0, 7) ?? 'no commit'} while it was verified; nothing was published`,
      `look at what moved it: git -C ${shellQuote(b.tree)} reflog; then continue with: ./ralph/ralph.sh --resume ${b.state.id}`,
    );
  }
  return gate;
}

/** The checked links become the branch (update-ref over the tip they were made on); their story branches go. */
async function publish(
  b: PlanBranch,
  links: readonly Link[],
  judged: string[],
  sentBack: SentBack[],
): Promise<boolean> {
  const last = links[links.length - 1];
  b.sealTip({ tip: last.commit, previous: b.tip });
  if (!(await publishMerge(b.tree, b.run.branch, last.commit, b.tip))) {
    b.sealTip();
    await abandonMerge(b.tree, b.run.branch, b.tip);
    // Moved under the runner: a stop. Else git refused for its own reason (a lock): the stories go round again.
    await b.refuseMoved();
    for (const l of links)
      sentBack.push(
        await b.sendBack(
          l.entry.story,
          `git could not move ${b.run.branch} to the verified merge (update-ref refused)`,
          await readStorySide(b.tree, b.run.paths, l.entry.story, l.entry.head, b.tip),
          [],
        ),
      );
    return false;
  }
  b.tip = last.commit;
  b.plan = last.plan;
  b.lastGate = { commit: last.commit, judged };
  for (const l of links) b.trust.verifiedAt.set(l.entry.story, last.commit);
  await settleBaseline(b.run.paths, b.state.id, b.trust, b.run.emit, last.plan);
  // Merged: the story branches have nothing the plan branch lacks.
  for (const l of links) await runGit(b.tree, ['branch', '-q', '-D', storyBranch(b.run.branch, l.entry.story)]);
  return true;
}

/**
 * Only stories merged before the batch failed after its merge: they may fail on the plan branch itself (a flaky
 * check, or something outside the repository that changed), and then the batch is not to blame. Their checks run
 * again on the tip; where they fail there too, the gate sets them back on the branch, as the final gate would, and
 * the batch is merged again (their ids returned). Null: the tip passes, so the batch broke them.
 */
async function blameTip(
  b: PlanBranch,
  batch: readonly string[],
  verdicts: readonly StoryVerdict[],
  signal: AbortSignal,
): Promise<string[] | 'interrupted' | null> {
  const failed = verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
  if (!failed.length || failed.some((id) => batch.includes(id))) return null;
  const names = batch.join(', ');
  // The gate writes its verdicts on the branch when they fail: a commit of the runner's own.
  const gate = await b.ownCommit(() =>
    runFinalGate({
      ...verifyInput(b.run, b.state, b.trust, b.state.iteration, signal),
      prd: b.plan,
      verifiedAt: b.trust.verifiedAt,
      shipped: b.trust.shipped,
      reviewed: b.trust.reviewed,
      verdictKey: b.trust.verdictKey,
      onlyStories: failed,
      // The tip's own pass sealed every merged story's verdict there: this one, over a few, must not replace it.
      seal: false,
      label: `merge queue: before blaming ${names}, the checks of ${failed.join(', ')} on ${b.run.branch} itself`,
    }),
  );
  if (gate.interrupted) return 'interrupted';
  if (gate.passed) return null;
  const broken = gate.verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
  // The gate wrote and committed its verdicts on the branch (the tree is on it): its plan is the one to go on with.
  const next = gate.prd;
  b.plan = next;
  b.lastGate = null;
  await settleBaseline(b.run.paths, b.state.id, b.trust, b.run.emit, next);
  b.run.emit({
    type: 'warn',
    message: `${broken.join(', ')} fail${broken.length === 1 ? 's' : ''} on ${b.run.branch} itself, without ${names}: set back to passes: false there; ${names} ${batch.length === 1 ? 'is' : 'are'} merged again`,
  });
  return broken;
}
