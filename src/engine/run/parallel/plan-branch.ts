// The plan branch of a --parallel run, as only the runner writes it: the merge queue's merges (merge-queue.ts, through
// the members it is handed here), and the runner's own commits of a story's failed attempt or of a story sent back.
// All of it happens in the integration tree, one thing at a time (PlanBranch.exclusive).
import path from 'node:path';
import type { Prd } from '../../../prd/types.js';
import type { LoopState } from '../../store/state-types.js';
import type { RunContext } from '../../types.js';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { readOwnTextOrNull } from '../../../util/read.js';
import { runGit } from '../../git/git.js';
import { headSha } from '../../git/head.js';
import { readChangedPaths, readFileAt } from '../../git/read.js';
import { tryCommitRunnerFiles } from '../../git/commit.js';
import { attemptRef } from '../../verify/baseline.js';
import { WorkProtected } from '../../errors.js';
import { settleBaseline, type RunTrust } from '../../verify/trust.js';
import { readBranchTip } from './merge.js';
import { mergeLogs, planWithOutcome, renderPlan, renderSentBack } from './plan-log.js';
import { readStorySide, type StorySide } from './story-side.js';
import type { SentBack } from './types.js';
import { shellQuote } from '../../../util/shell-quote.js';
import { readTipSeal, tipAccepted, writeTipSeal, type TipSeal } from './plan-tip.js';

export class PlanBranch {
  /** The branch's tip as the runner last left it, and the plan there (the runner's settled baseline). */
  tip: string;
  plan: Prd;
  /** The last merge's gate: the commit it passed on and the stories it judged there. */
  lastGate: { commit: string; judged: string[] } | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly run: RunContext,
    readonly state: LoopState,
    readonly trust: RunTrust,
    tip: string,
    plan: Prd,
  ) {
    this.tip = tip;
    this.plan = plan;
  }

  /** The integration tree, where the branch is written; the merge queue (merge-queue.ts) merges there too. */
  get tree(): string {
    return this.run.paths.repoRoot;
  }

  rel(file: string): string {
    return path.relative(this.tree, file).split(path.sep).join('/');
  }

  /** The prompt every later iteration reads is the owner's: a story branch's edit to it is never merged (in the tree only). */
  promptKept(): string[] {
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
  async sendBack(id: string, reason: string, fromBranch: StorySide, conflictsWith: string[]): Promise<SentBack> {
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

  readLog(): string {
    return readOwnTextOrNull(this.run.paths.progress) ?? '';
  }

  /** The plan's text on the branch's tip as the runner left it (the owner's formatting, kept in what it writes). */
  private readPlanText(): Promise<string | null> {
    return readFileAt(this.tree, this.tip, this.rel(this.run.paths.prd));
  }

  writeFiles(before: string | null, next: Prd, log: string): void {
    atomicWriteFileSync(this.run.paths.prd, renderPlan(before, next));
    atomicWriteFileSync(this.run.paths.progress, log);
  }
}
