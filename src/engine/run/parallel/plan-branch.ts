// The plan branch of a --parallel run, as only the runner writes it: the merge queue (a story branch merged onto it,
// verified again after the merge, then published), and the runner's own commits of a story's failed attempt or of
// a story sent back. All of it happens in the integration tree, one thing at a time (PlanBranch.exclusive).
import path from 'node:path';
import type { Prd } from '../../../prd/types.js';
import type { LoopState, QueuedMerge } from '../../store/state-types.js';
import type { RunContext } from '../../types.js';
import type { StoryVerdict } from '../../verify/types.js';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { readOwnTextOrNull } from '../../../util/read.js';
import { runGit } from '../../git/git.js';
import { headSha } from '../../git/head.js';
import { readChangedPaths, readFileAt } from '../../git/read.js';
import { tryCommitRunnerFiles } from '../../git/commit.js';
import { ENGINE_FILES } from '../../verify/runner-guard.js';
import { attemptRef } from '../../verify/baseline.js';
import { runFinalGate } from '../../verify/final-gate.js';
import { WorkProtected } from '../../errors.js';
import { settleBaseline, type RunTrust } from '../../verify/trust.js';
import { verifyInput } from '../deps.js';
import { abandonMerge, detachAt, mergedBetween, mergeStory, publishMerge, readBranchTip } from './merge.js';
import { mergeLogs, planWithOutcome, renderPlan, renderSentBack } from './plan-log.js';
import { storyBranch } from './worker.js';
import { readStorySide, type StorySide } from './story-side.js';
import { shellQuote } from '../../../util/shell-quote.js';
import { readTipSeal, tipAccepted, writeTipSeal, type TipSeal } from './plan-tip.js';

/**
 * What one pass of the merge queue came to: the stories merged and published (as one commit, checked once), those
 * sent back, and those stories merged before that failed on the branch by itself (set back there: the batch goes
 * again). A queued story named in none of them waits for the next pass.
 */
export interface BatchOutcome {
  merged: string[];
  /** The published tip, when stories were merged. */
  commit?: string;
  /** How many stories the published merge's gate judged. */
  judged: number;
  sentBack: SentBack[];
  broken?: string[];
  interrupted?: boolean;
}

export interface SentBack {
  story: string;
  reason: string;
  /** Stories merged since the story's branch left the plan branch that its branch conflicts with (a stale base). */
  conflictsWith: string[];
}

/** One merge of a batch: the queued story merged onto the link before it (or the tip), with the plan and log there. */
interface Link {
  entry: QueuedMerge;
  commit: string;
  plan: Prd;
  log: string;
}

export class PlanBranch {
  /** The branch's tip as the runner last left it, and the plan there (the runner's settled baseline). */
  tip: string;
  plan: Prd;
  /** The last merge's gate: the commit it passed on and the stories it judged there. */
  lastGate: { commit: string; judged: string[] } | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly run: RunContext,
    private readonly state: LoopState,
    private readonly trust: RunTrust,
    tip: string,
    plan: Prd,
  ) {
    this.tip = tip;
    this.plan = plan;
  }

  private get tree(): string {
    return this.run.paths.repoRoot;
  }

  private rel(file: string): string {
    return path.relative(this.tree, file).split(path.sep).join('/');
  }

  /** The prompt every later iteration reads is the owner's: a story branch's edit to it is never merged (in the tree only). */
  private promptKept(): string[] {
    const rel = this.rel(this.run.paths.prompt);
    return rel.startsWith('../') || path.isAbsolute(rel) ? [] : [rel];
  }

  /** The tip the runner leaves the branch at, sealed before it moves it (plan-tip.ts), for a resume to hold it to. */
  sealTip(seal: Partial<TipSeal> = {}): void {
    writeTipSeal(
      this.run.paths.repoRoot,
      this.state.id,
      { tip: this.tip, previous: this.tip, pending: false, ended: false, ...seal },
      this.trust.verdictKey,
    );
  }

  /**
   * `fn`, which may commit on the branch in the integration tree (the runner's own files only): sealed as under way
   * before, and the new tip sealed after.
   */
  async ownCommit<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.tip;
    this.sealTip({ pending: true });
    try {
      return await fn();
    } finally {
      this.tip = (await headSha(this.tree)) ?? before;
      this.sealTip({ previous: before });
    }
  }

  /** Runs `fn` after everything queued before it: the integration tree holds one merge or commit at a time. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * The branch must still be where the runner left it: only the runner writes it, and an agent that moved it (its
   * worktree shares the repository's refs) would have the queue build on work nobody verified.
   */
  async refuseMoved(): Promise<void> {
    const now = await readBranchTip(this.tree, this.run.branch);
    if (now === this.tip) return;
    throw this.moved(
      `the plan branch ${this.run.branch} moved from ${this.tip.slice(0, 7)} to ${now?.slice(0, 7) ?? '(deleted)'} behind the runner's back`,
      this.tip,
    );
  }

  /**
   * A resume: the branch, at `tip` now, against the seal the last runner of this loop left (plan-tip.ts). A branch
   * an agent moved while no runner could see it (one killed with -9 never looked at the end) is refused, with the
   * way back. No seal: a run an older ralphkit started.
   */
  async holdSeal(): Promise<void> {
    const check = readTipSeal(this.run.paths.repoRoot, this.state.id, this.trust.verdictKey);
    if (check.kind === 'none') return;
    if (check.kind === 'broken')
      throw new WorkProtected(
        `loop ${this.state.id} cannot go on: ${check.problem} (the file was changed, or the key in the ralphkit config folder was replaced)`,
        `look at the plan branch's history before you trust it: git log ${shellQuote(this.run.branch)}; a new run starts from a new loop: ./ralph/ralph.sh --parallel ${this.run.options.parallel ?? 1}`,
      );
    const { seal } = check;
    const parent = seal.pending ? await readBranchTip(this.tree, `${this.run.branch}^`) : null;
    const changed = parent === seal.tip ? await readChangedPaths(this.tree, seal.tip, this.tip) : null;
    const own = [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress)];
    if (tipAccepted(seal, this.tip, changed, own)) return;
    throw this.moved(
      `the plan branch ${this.run.branch} is at ${this.tip.slice(0, 7)}, but the runner of loop ${this.state.id} left it at ${seal.tip.slice(0, 7)} and did not end (killed?)`,
      seal.tip,
    );
  }

  /** The stop for a plan branch someone else moved: what happened, and how to put it back at `tip`. */
  private moved(what: string, tip: string): WorkProtected {
    return new WorkProtected(
      `${what}; in a --parallel run only the merge queue writes it, so nothing is merged onto work nobody verified`,
      `look at what moved it: git reflog ${shellQuote(this.run.branch)}; put it back with: git update-ref ${shellQuote(`refs/heads/${this.run.branch}`)} ${tip}; then continue with: ./ralph/ralph.sh --resume ${this.state.id}`,
    );
  }

  /**
   * The queued stories onto the branch in one pass (a batch, as merge queues do): each merged in turn onto the one
   * before, then the checks of every merged story run once, on the last merge. A failure splits the batch: the first
   * half is checked on its own last merge (a commit already made), down to the first story alone, which is then sent
   * back (unless the stories merged before fail on the tip by themselves). Only a checked merge is published.
   */
  mergeBatch(entries: readonly QueuedMerge[], signal: AbortSignal): Promise<BatchOutcome> {
    return this.exclusive(async () => {
      await this.refuseMoved();
      const sentBack: SentBack[] = [];
      const links = await this.buildLinks(entries, sentBack);
      let n = links.length;
      let blamedTip = false;
      while (n > 0) {
        const link = links[n - 1];
        const batch = links.slice(0, n).map((l) => l.entry.story);
        const gate = await this.gateAt(link, batch, signal);
        if (gate.interrupted) {
          await abandonMerge(this.tree, this.run.branch, this.tip);
          return { merged: [], judged: 0, sentBack, interrupted: true };
        }
        if (gate.passed) {
          if (
            await this.publish(
              links.slice(0, n),
              gate.verdicts.map((v) => v.id),
              sentBack,
            )
          )
            return { merged: batch, commit: link.commit, judged: gate.verdicts.length, sentBack };
          return { merged: [], judged: 0, sentBack };
        }
        await abandonMerge(this.tree, this.run.branch, this.tip);
        if (!blamedTip) {
          blamedTip = true;
          const broken = await this.blameTip(batch, gate.verdicts, signal);
          if (broken === 'interrupted') return { merged: [], judged: 0, sentBack, interrupted: true };
          if (broken) return { merged: [], judged: 0, sentBack, broken };
        }
        if (n > 1) {
          n = Math.ceil(n / 2);
          this.run.emit({
            type: 'info',
            message: `merge queue: the batch ${batch.join(', ')} failed its checks; checking the first ${n} on their own`,
          });
          continue;
        }
        const failed = gate.verdicts
          .filter((v) => v.status === 'rejected')
          .map((v) => `${v.id}: ${v.reason ?? 'rejected'}`);
        sentBack.push(
          await this.sendBackLocked(
            link.entry.story,
            `after the merge onto ${this.tip.slice(0, 7)}, checks failed (${failed.join('; ')})`,
            await readStorySide(this.tree, this.run.paths, link.entry.story, link.entry.head, this.tip),
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
  private async buildLinks(entries: readonly QueuedMerge[], sentBack: SentBack[]): Promise<Link[]> {
    const links: Link[] = [];
    for (const entry of entries) {
      const last = links.at(-1);
      const base = last?.commit ?? this.tip;
      const story = this.plan.userStories.find((s) => s.id === entry.story);
      if (!story) {
        sentBack.push({ story: entry.story, reason: `the plan has no story ${entry.story}`, conflictsWith: [] });
        continue;
      }
      const side = await readStorySide(this.tree, this.run.paths, entry.story, entry.head, base);
      const plan = planWithOutcome(last?.plan ?? this.plan, entry.story, true, side.notes, null);
      const log = mergeLogs(last?.log ?? this.readLog(), side.logBase, side.log);
      const branch = storyBranch(this.run.branch, entry.story);
      const attempt = await mergeStory(this.tree, {
        branch: this.run.branch,
        planTip: base,
        storyHead: entry.head,
        keep: [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress), ...this.promptKept(), ...ENGINE_FILES],
        write: () => this.writeFiles(side.ontoPlan, plan, log),
        written: [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress)],
        message: `ralph: merge ${entry.story} (${story.title}) from ${branch}\n\nVerified on ${branch} at ${entry.head.slice(0, 7)}, and again after this merge by the merge queue of loop ${this.state.id}.`,
      });
      if (attempt.kind === 'merged') {
        links.push({ entry, commit: attempt.commit, plan, log });
        continue;
      }
      if (last) {
        this.run.emit({
          type: 'info',
          message: `merge queue: ${entry.story} does not merge onto ${links.map((l) => l.entry.story).join(', ')}; it waits for the next pass`,
        });
        continue;
      }
      sentBack.push(await this.sendBackConflict(entry, attempt.files, attempt.message, side));
    }
    return links;
  }

  /** A story whose branch conflicts with the tip: sent back, naming the files and the stories merged since that changed them. */
  private async sendBackConflict(
    entry: QueuedMerge,
    files: readonly string[],
    message: string,
    side: StorySide,
  ): Promise<SentBack> {
    const ids = this.plan.userStories.map((s) => s.id);
    // No conflicted file: git refused the merge for another reason (say, an unrelated history), no other side to name.
    const since = side.base && files.length ? await mergedBetween(this.tree, side.base, this.tip, ids, files) : [];
    const where = files.length ? ` in ${files.slice(0, 10).join(', ')}` : `: ${message}`;
    const other = since.length
      ? ` with ${since.join(', ')}, merged since ${entry.story} started from ${side.base.slice(0, 7)}`
      : '';
    const sent = await this.sendBackLocked(
      entry.story,
      `its branch does not merge onto ${this.run.branch} at ${this.tip.slice(0, 7)} (conflict${where}${other})`,
      side,
      since,
    );
    return sent;
  }

  /** The tree detached at `link`'s merge, and the checks of every story passing there run once on it. */
  private async gateAt(link: Link, batch: readonly string[], signal: AbortSignal) {
    await detachAt(this.tree, link.commit);
    const gate = await runFinalGate({
      ...verifyInput(this.run, this.state, this.trust, this.state.iteration, signal),
      prd: link.plan,
      verifiedAt: this.trust.verifiedAt,
      shipped: this.trust.shipped,
      reviewed: this.trust.reviewed,
      verdictKey: this.trust.verdictKey,
      weak: this.trust.weak,
      onlyPassing: true,
      label: `merge queue: ${batch.join(', ')} merged; the checks of every merged story`,
    });
    // The gate checks the tree's HEAD: it must be the merge that is published (a worktree's HEAD is a file).
    if (!gate.interrupted && gate.commit !== link.commit) {
      await abandonMerge(this.tree, this.run.branch, this.tip);
      throw new WorkProtected(
        `the merge queue's tree moved from the merge of ${link.entry.story} (${link.commit.slice(0, 7)}) to ${gate.commit?.slice(0, 7) ?? 'no commit'} while it was verified; nothing was published`,
        `look at what moved it: git -C ${shellQuote(this.tree)} reflog; then continue with: ./ralph/ralph.sh --resume ${this.state.id}`,
      );
    }
    return gate;
  }

  /** The checked links become the branch (update-ref over the tip they were made on); their story branches go. */
  private async publish(links: readonly Link[], judged: string[], sentBack: SentBack[]): Promise<boolean> {
    const last = links[links.length - 1];
    this.sealTip({ tip: last.commit, previous: this.tip });
    if (!(await publishMerge(this.tree, this.run.branch, last.commit, this.tip))) {
      this.sealTip();
      await abandonMerge(this.tree, this.run.branch, this.tip);
      // Moved under the runner: a stop. Else git refused for its own reason (a lock): the stories go round again.
      await this.refuseMoved();
      for (const l of links)
        sentBack.push(
          await this.sendBackLocked(
            l.entry.story,
            `git could not move ${this.run.branch} to the verified merge (update-ref refused)`,
            await readStorySide(this.tree, this.run.paths, l.entry.story, l.entry.head, this.tip),
            [],
          ),
        );
      return false;
    }
    this.tip = last.commit;
    this.plan = last.plan;
    this.lastGate = { commit: last.commit, judged };
    for (const l of links) this.trust.verifiedAt.set(l.entry.story, last.commit);
    await settleBaseline(this.run.paths, this.state.id, this.trust, this.run.emit, last.plan);
    // Merged: the story branches have nothing the plan branch lacks.
    for (const l of links) await runGit(this.tree, ['branch', '-q', '-D', storyBranch(this.run.branch, l.entry.story)]);
    return true;
  }

  /**
   * Only stories merged before the batch failed after its merge: they may fail on the plan branch itself (a flaky
   * check, or something outside the repository that changed), and then the batch is not to blame. Their checks run
   * again on the tip; where they fail there too, the gate sets them back on the branch, as the final gate would, and
   * the batch is merged again (their ids returned). Null: the tip passes, so the batch broke them.
   */
  private async blameTip(
    batch: readonly string[],
    verdicts: readonly StoryVerdict[],
    signal: AbortSignal,
  ): Promise<string[] | 'interrupted' | null> {
    const failed = verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
    if (!failed.length || failed.some((id) => batch.includes(id))) return null;
    const names = batch.join(', ');
    // The gate writes its verdicts on the branch when they fail: a commit of the runner's own.
    const gate = await this.ownCommit(() =>
      runFinalGate({
        ...verifyInput(this.run, this.state, this.trust, this.state.iteration, signal),
        prd: this.plan,
        verifiedAt: this.trust.verifiedAt,
        shipped: this.trust.shipped,
        reviewed: this.trust.reviewed,
        verdictKey: this.trust.verdictKey,
        onlyStories: failed,
        // The tip's own pass sealed every merged story's verdict there: this one, over a few, must not replace it.
        seal: false,
        label: `merge queue: before blaming ${names}, the checks of ${failed.join(', ')} on ${this.run.branch} itself`,
      }),
    );
    if (gate.interrupted) return 'interrupted';
    if (gate.passed) return null;
    const broken = gate.verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
    // The gate wrote and committed its verdicts on the branch (the tree is on it): its plan is the one to go on with.
    const next = gate.prd;
    this.plan = next;
    this.lastGate = null;
    await settleBaseline(this.run.paths, this.state.id, this.trust, this.run.emit, next);
    this.run.emit({
      type: 'warn',
      message: `${broken.join(', ')} fail${broken.length === 1 ? 's' : ''} on ${this.run.branch} itself, without ${names}: set back to passes: false there; ${names} ${batch.length === 1 ? 'is' : 'are'} merged again`,
    });
    return broken;
  }

  /** A failed attempt: the worker's log entries and the story's notes join the plan branch, with `passes` unchanged. */
  recordAttempt(id: string, head: string): Promise<void> {
    return this.exclusive(async () => {
      await this.refuseMoved();
      await this.keepAttempt(id, head);
      const side = await readStorySide(this.tree, this.run.paths, id, head, this.tip);
      const log = mergeLogs(this.readLog(), side.logBase, side.log);
      await this.commitOwn(
        planWithOutcome(this.plan, id, false, side.notes, null),
        log,
        `chore(ralph): ${id}: an attempt was not accepted`,
      );
    });
  }

  /** A story the queue sends back: not merged, with the reason in its notes and in the plan's log. */
  private async sendBackLocked(
    id: string,
    reason: string,
    fromBranch: StorySide,
    conflictsWith: string[],
  ): Promise<SentBack> {
    this.run.emit({ type: 'warn', message: `${id} sent back by the merge queue: ${reason}` });
    await this.keepAttempt(id, fromBranch.head);
    const title = this.plan.userStories.find((s) => s.id === id)?.title ?? '';
    const log =
      mergeLogs(this.readLog(), fromBranch.logBase, fromBranch.log) +
      renderSentBack(new Date(), id, title, reason, this.tip);
    const next = planWithOutcome(this.plan, id, false, fromBranch.notes, `sent back by the merge queue: ${reason}`);
    await this.commitOwn(next, log, `chore(ralph): ${id} sent back by the merge queue`);
    return { story: id, reason, conflictsWith };
  }

  private async commitOwn(next: Prd, log: string, message: string): Promise<void> {
    this.writeFiles(await this.readPlanText(), next, log);
    const files = [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress)];
    await this.ownCommit(() =>
      tryCommitRunnerFiles(this.tree, files, message, (why) =>
        this.run.emit({
          type: 'warn',
          message: `could not commit ${files.join(' and ')} on ${this.run.branch}: ${why}`,
        }),
      ),
    );
    this.plan = next;
    await settleBaseline(this.run.paths, this.state.id, this.trust, this.run.emit, next);
  }

  /**
   * The next attempt resets the story branch to the plan's tip: the commits of this one stay reachable under
   * refs/ralphkit/loops/<id>/attempts/<story>/<sha> (attemptRef), so nothing an agent committed is lost.
   */
  private async keepAttempt(id: string, head: string): Promise<void> {
    const ref = attemptRef(this.state.id, id, head);
    const r = await runGit(this.tree, ['update-ref', ref, head]);
    if (r.code === 0) this.run.emit({ type: 'info', message: `${id}: this attempt's commits are kept under ${ref}` });
  }

  private readLog(): string {
    return readOwnTextOrNull(this.run.paths.progress) ?? '';
  }

  /** The plan's text on the branch's tip as the runner left it (the owner's formatting, kept in what it writes). */
  private readPlanText(): Promise<string | null> {
    return readFileAt(this.tree, this.tip, this.rel(this.run.paths.prd));
  }

  private writeFiles(before: string | null, next: Prd, log: string): void {
    atomicWriteFileSync(this.run.paths.prd, renderPlan(before, next));
    atomicWriteFileSync(this.run.paths.progress, log);
  }
}
