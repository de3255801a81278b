// The plan branch of a --parallel run, as only the runner writes it: the merge queue (a story branch merged onto it,
// verified again after the merge, then published), and the runner's own commits of a story's failed attempt or of
// a story sent back. All of it happens in the integration tree, one thing at a time (PlanBranch.exclusive).
import path from 'node:path';
import type { Prd } from '../../../prd/types.js';
import type { LoopState, RunContext, QueuedMerge, StoryVerdict } from '../../types.js';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { readTextOrNull } from '../../../util/read.js';
import { headSha, readFileAt, runGit, tryCommitRunnerFiles } from '../../git/git.js';
import { ENGINE_FILES } from '../../verify/runner-guard.js';
import { attemptRef } from '../../verify/baseline.js';
import { runFinalGate } from '../../verify/final-gate.js';
import { WorkProtected } from '../../errors.js';
import { settleBaseline, type RunTrust } from '../../verify/trust.js';
import { verifyInput } from '../deps.js';
import { abandonMerge, mergeStory, publishMerge, readBranchTip } from './merge.js';
import { mergeLogs, planWithOutcome, renderPlan, renderSentBack } from './plan-log.js';
import { storyBranch } from './worker.js';
import { shellQuote } from '../../../util/shell-quote.js';

export type MergeOutcome =
  | { kind: 'merged'; commit: string; judged: number }
  | { kind: 'sent-back'; reason: string }
  /** Stories merged before failed on the plan branch itself, and were set back there: merge this one again. */
  | { kind: 'retry'; broken: string[] }
  | { kind: 'interrupted' };

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
    throw new WorkProtected(
      `the plan branch ${this.run.branch} moved from ${this.tip.slice(0, 7)} to ${now?.slice(0, 7) ?? '(deleted)'} behind the runner's back; in a --parallel run only the merge queue writes it, so nothing is merged onto work nobody verified`,
      `look at what moved it: git reflog ${shellQuote(this.run.branch)}; put it back with: git update-ref ${shellQuote(`refs/heads/${this.run.branch}`)} ${this.tip}; then continue with: ./ralph/ralph.sh --resume ${this.state.id}`,
    );
  }

  /** One queued story onto the branch: merged, verified again on the merge commit, and only then published. */
  merge(entry: QueuedMerge, signal: AbortSignal): Promise<MergeOutcome> {
    return this.exclusive(async () => {
      await this.refuseMoved();
      const story = this.plan.userStories.find((s) => s.id === entry.story);
      if (!story) return { kind: 'sent-back', reason: `the plan has no story ${entry.story}` };
      const fromBranch = await this.storySide(entry.story, entry.head);
      const next = planWithOutcome(this.plan, entry.story, true, fromBranch.notes, null);
      const log = mergeLogs(this.readLog(), fromBranch.logBase, fromBranch.log);
      const planText = await this.readPlanText();
      const branch = storyBranch(this.run.branch, entry.story);
      const attempt = await mergeStory(this.tree, {
        branch: this.run.branch, planTip: this.tip, storyHead: entry.head,
        keep: [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress), ...this.promptKept(), ...ENGINE_FILES],
        write: () => this.writeFiles(planText, next, log), written: [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress)],
        message: `ralph: merge ${entry.story} (${story.title}) from ${branch}\n\nVerified on ${branch} at ${entry.head.slice(0, 7)}, and again after this merge by the merge queue of loop ${this.state.id}.`,
      });
      if (attempt.kind === 'conflict') {
        const files = attempt.files.length ? ` in ${attempt.files.slice(0, 10).join(', ')}` : `: ${attempt.message}`;
        return this.sendBackLocked(entry.story, `its branch does not merge onto ${this.run.branch} at ${this.tip.slice(0, 7)} (conflict${files})`, fromBranch);
      }
      const gate = await runFinalGate({ ...verifyInput(this.run, this.state, this.trust, this.state.iteration, signal), prd: next, verifiedAt: this.trust.verifiedAt, shipped: this.trust.shipped, verdictKey: this.trust.verdictKey, weak: this.trust.weak, onlyPassing: true, label: `merge queue: ${entry.story} merged; the checks of every merged story` });
      if (gate.interrupted) {
        await abandonMerge(this.tree, this.run.branch, this.tip);
        return { kind: 'interrupted' };
      }
      // The gate checks the tree's HEAD: it must be the merge that is published (a worktree's HEAD is a file).
      if (gate.commit !== attempt.commit) {
        await abandonMerge(this.tree, this.run.branch, this.tip);
        throw new WorkProtected(`the merge queue's tree moved from the merge of ${entry.story} (${attempt.commit.slice(0, 7)}) to ${gate.commit?.slice(0, 7) ?? 'no commit'} while it was verified; nothing was published`, `look at what moved it: git -C ${shellQuote(this.tree)} reflog; then continue with: ./ralph/ralph.sh --resume ${this.state.id}`);
      }
      if (!gate.passed) {
        await abandonMerge(this.tree, this.run.branch, this.tip);
        const blamed = await this.blameTip(entry.story, gate.verdicts, signal);
        if (blamed) return blamed;
        const failed = gate.verdicts.filter((v) => v.status === 'rejected').map((v) => `${v.id}: ${v.reason ?? 'rejected'}`);
        return this.sendBackLocked(entry.story, `after the merge onto ${this.tip.slice(0, 7)}, checks failed (${failed.join('; ')})`, fromBranch);
      }
      if (!(await publishMerge(this.tree, this.run.branch, attempt.commit, this.tip))) {
        await abandonMerge(this.tree, this.run.branch, this.tip);
        // Moved under the runner: a stop. Else git refused for its own reason (a lock): the story goes round again.
        await this.refuseMoved();
        return this.sendBackLocked(entry.story, `git could not move ${this.run.branch} to the verified merge (update-ref refused)`, fromBranch);
      }
      this.tip = attempt.commit;
      this.plan = next;
      this.lastGate = { commit: attempt.commit, judged: gate.verdicts.map((v) => v.id) };
      this.trust.verifiedAt.set(entry.story, attempt.commit);
      await settleBaseline(this.run.paths, this.state.id, this.trust, this.run.emit, next);
      // Merged: the story branch has nothing the plan branch lacks.
      await runGit(this.tree, ['branch', '-q', '-D', branch]);
      return { kind: 'merged', commit: attempt.commit, judged: gate.verdicts.length };
    });
  }

  /**
   * Only stories merged before failed after the merge: they may fail on the plan branch itself (a flaky check, or
   * something outside the repository that changed), and then the newcomer is not to blame. Their checks run again
   * on the tip; where they fail there too, the gate sets them back on the branch, as the final gate would, and the
   * newcomer is merged again. Null: the tip passes, so the newcomer broke them.
   */
  private async blameTip(id: string, verdicts: readonly StoryVerdict[], signal: AbortSignal): Promise<MergeOutcome | null> {
    const failed = verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
    if (!failed.length || failed.includes(id)) return null;
    const gate = await runFinalGate({ ...verifyInput(this.run, this.state, this.trust, this.state.iteration, signal), prd: this.plan, verifiedAt: this.trust.verifiedAt, shipped: this.trust.shipped, verdictKey: this.trust.verdictKey, onlyStories: failed, label: `merge queue: before blaming ${id}, the checks of ${failed.join(', ')} on ${this.run.branch} itself` });
    if (gate.interrupted) return { kind: 'interrupted' };
    if (gate.passed) return null;
    const broken = gate.verdicts.filter((v) => v.status === 'rejected').map((v) => v.id);
    // The gate wrote and committed its verdicts on the branch (the tree is on it): its plan is the one to go on with.
    const next = gate.prd;
    this.tip = (await headSha(this.tree)) ?? this.tip;
    this.plan = next;
    this.lastGate = null;
    await settleBaseline(this.run.paths, this.state.id, this.trust, this.run.emit, next);
    this.run.emit({ type: 'warn', message: `${broken.join(', ')} fail${broken.length === 1 ? 's' : ''} on ${this.run.branch} itself, without ${id}: set back to passes: false there; ${id} is merged again` });
    return { kind: 'retry', broken };
  }

  /** A failed attempt: the worker's log entries and the story's notes join the plan branch, with `passes` unchanged. */
  recordAttempt(id: string, head: string): Promise<void> {
    return this.exclusive(async () => {
      await this.refuseMoved();
      await this.keepAttempt(id, head);
      const side = await this.storySide(id, head);
      const log = mergeLogs(this.readLog(), side.logBase, side.log);
      await this.commitOwn(planWithOutcome(this.plan, id, false, side.notes, null), log, `chore(ralph): ${id}: an attempt was not accepted`);
    });
  }

  /** A story the queue sends back: not merged, with the reason in its notes and in the plan's log. */
  private async sendBackLocked(id: string, reason: string, fromBranch: StorySide): Promise<MergeOutcome> {
    this.run.emit({ type: 'warn', message: `${id} sent back by the merge queue: ${reason}` });
    await this.keepAttempt(id, fromBranch.head);
    const title = this.plan.userStories.find((s) => s.id === id)?.title ?? '';
    const log = mergeLogs(this.readLog(), fromBranch.logBase, fromBranch.log) + renderSentBack(new Date(), id, title, reason, this.tip);
    const next = planWithOutcome(this.plan, id, false, fromBranch.notes, `sent back by the merge queue: ${reason}`);
    await this.commitOwn(next, log, `chore(ralph): ${id} sent back by the merge queue`);
    return { kind: 'sent-back', reason };
  }

  private async commitOwn(next: Prd, log: string, message: string): Promise<void> {
    this.writeFiles(await this.readPlanText(), next, log);
    const files = [this.rel(this.run.paths.prd), this.rel(this.run.paths.progress)];
    await tryCommitRunnerFiles(this.tree, files, message, (why) => this.run.emit({ type: 'warn', message: `could not commit ${files.join(' and ')} on ${this.run.branch}: ${why}` }));
    this.tip = (await headSha(this.tree)) ?? this.tip;
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

  /** What the story branch says at `head`: the story's notes, and its log with the log it started from (the merge base). */
  private async storySide(id: string, head: string): Promise<StorySide> {
    const base = (await runGit(this.tree, ['merge-base', this.tip, head])).stdout.trim();
    const logRel = this.rel(this.run.paths.progress);
    return {
      head,
      notes: readNotes(await readFileAt(this.tree, head, this.rel(this.run.paths.prd)), id),
      logBase: base ? ((await readFileAt(this.tree, base, logRel)) ?? '') : '',
      log: (await readFileAt(this.tree, head, logRel)) ?? '',
    };
  }

  private readLog(): string {
    return readTextOrNull(this.run.paths.progress) ?? '';
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

interface StorySide {
  head: string;
  notes: string | undefined;
  logBase: string;
  log: string;
}

/** The story's notes in a plan text from a story branch (any shape: the agent wrote it); undefined when unreadable. */
function readNotes(text: string | null, id: string): string | undefined {
  try {
    const plan = JSON.parse(text ?? 'null') as Prd | null;
    const notes = Array.isArray(plan?.userStories) ? plan.userStories.find((s) => s && s.id === id)?.notes : undefined;
    return typeof notes === 'string' ? notes : undefined;
  } catch {
    return undefined;
  }
}
