// One attempt of one worker of a --parallel run: its worktree set on the story branch at the plan branch's tip, one
// agent run told which story is its own, then the same steps a single loop takes after an agent (deps.ts): what it
// left running is stopped, the runner's files put back, git inspected, and the claim verified on the story branch.
import { holdNestedGits } from '../../verify/nested-git.js';
import { loopSetupCache } from '../../verify/setup-cache.js';
import { existsSync, mkdirSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { BudgetGate } from '../../budget/types.js';
import type { LoopConfig, LoopDeps, RepoLocation, RunContext } from '../../types.js';
import type { LoopState, WorkerState } from '../../store/state-types.js';
import type { StoryVerdict } from '../../verify/types.js';
import type { Tag } from '../../core/tags.js';
import type { StoryNote } from '../../core/preamble.js';
import type { Story } from '../../../prd/types.js';
import { storyRefPart } from '../../../prd/story-ref.js';
import { gitOk, readGitDirs, runGit, unpinGitDirs } from '../../git/git.js';
import { keepRecordsIn } from '../../store/layout.js';
import { realpathOrUndefined } from '../../../util/read.js';
import { snapshotRunnerFiles, type RunnerGuard } from '../../verify/runner-guard.js';
import { verifyIteration, type VerifyOutcome } from '../../verify/verify.js';
import type { Prd } from '../../../prd/types.js';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { ENGINE_FILES } from '../../verify/runner-guard.js';
import { mergeStory } from './merge.js';
import { reportAgentExit, runAgentWithRetries } from '../../core/retries.js';
import { throwIfAborted } from '../../core/exits.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';
import { addWorktree, closeWorktree, holdTreeDirs, worktreePath } from '../../git/worktree.js';
import { buildDeps, runAgent, verifyInput } from '../deps.js';
import type { RunTrust } from '../../verify/trust.js';

/** The worktree of worker `k`: beside the run's own, named after the loop so status and cleanup can tell whose it is. */
export function workerTreePath(mainRoot: string, loopId: string, k: number): string {
  return worktreePath(mainRoot, `${loopId}--w${k}`);
}

/**
 * `<branchName>--<story id>`: a ref cannot sit under the plan branch's own ref, so it goes beside it. The id is
 * encoded (prd/story-ref.ts): any id makes a valid branch, and two ids never share one.
 */
export function storyBranch(planBranch: string, storyId: string): string {
  return `${planBranch}--${storyRefPart(storyId)}`;
}

export interface AttemptInput {
  /** The coordinator's run (the integration tree's paths); the worker's is made from it. */
  run: RunContext;
  state: LoopState;
  trust: RunTrust;
  mainRoot: string;
  worker: number;
  workers: number;
  story: Story;
  iteration: number;
  /** The plan branch's tip the attempt starts from, and the plan's text there (the runner's own, settled). */
  planTip: string;
  planText: string;
  /** A retry on a newer tip: the stories merged since the story's last attempt started, and why that one failed. */
  mergedSince?: StoryNote['mergedSince'];
  lastFailure?: string;
  config: LoopConfig;
  budget: BudgetGate;
  controller: AbortController;
  /** The agent's process group while it runs (undefined once it is gone), for the run's state. */
  onPid: (pid: number | undefined) => void;
  onPhase: (phase: 'verifying') => void;
  /** The guard found (and undid) a change to files the runner trusts right after this worker's agent. */
  onViolation: (reason: string) => void;
}

export interface AttemptOutcome {
  story: string;
  worker: number;
  iteration: number;
  branch: string;
  /** The story's verdict on its branch; null when the agent did not claim it. */
  verdict: StoryVerdict | null;
  /** The story branch's head after verification (the runner's own commit of the verdict included). */
  head: string | null;
  tag: Tag | null;
  /** The story's notes as the worker's plan has them after verification. */
  notes: string | undefined;
}

/** A worker's tree set on the story branch at the plan tip, and the run, trust and paths an attempt there uses. */
interface WorkerSetup {
  root: string;
  branch: string;
  wrun: RunContext;
  wtrust: RunTrust;
  emit: RunContext['emit'];
}

async function openAttempt(input: AttemptInput): Promise<WorkerSetup> {
  const { run, state, story, worker } = input;
  const branch = storyBranch(run.branch, story.id);
  const root = await openWorkerTree(input.mainRoot, state.id, worker, branch, input.planTip);
  const rel = (p: string) => path.relative(run.paths.repoRoot, p);
  // The prompt is read where the owner edits it: the user's tree (the integration tree's copy is rewritten by the
  // merge queue's checkouts, and a read between two of them would find none).
  const paths = {
    repoRoot: root,
    prd: path.join(root, rel(run.paths.prd)),
    progress: path.join(root, rel(run.paths.progress)),
    prompt: path.join(input.mainRoot, rel(run.paths.prompt)),
  };
  const emit: RunContext['emit'] = (e) => run.emit({ ...e, worker });
  const wrun: RunContext = {
    ...run,
    paths,
    branch,
    emit,
    worktree: { path: root, branch },
    siblingBranches: [run.branch, `${run.branch}--*`],
  };
  // The configuration's includes and hooks folders are the run's (workerGuard takes them from its snapshot).
  const guard = workerGuard(await snapshotRunnerFiles(root, await workerGitDirs(root), false), input.trust.guard);
  const nested = await holdNestedGits(root, guard.ownGitDir ?? guard.gitDir);
  const wtrust: RunTrust = {
    topLevel: realpathSync(root),
    baseline: input.planText,
    pins: input.trust.pins,
    guard,
    verifiedAt: new Map(),
    shipped: new Map(),
    reviewed: [],
    // This attempt's SHIPs: an empty record of its own would only write over another worker's.
    shippedRecorded: false,
    weak: input.trust.weak,
    verdictKey: input.trust.verdictKey,
    gitDir: guard.gitDir,
    nested,
    indexFlags: nested.links.flagged,
    ...(input.trust.indexSince === undefined ? {} : { indexSince: input.trust.indexSince }),
    anchored: input.trust.anchored,
    checkBase: input.trust.checkBase,
    // The run's own map, not a copy: a branch checked out in a worktree is named once for the whole run, and the run's
    // end (ref-sweep.ts settleRefsAtEnd) compares against the same values the workers put back to.
    ...(input.trust.heldBranches ? { heldBranches: input.trust.heldBranches } : {}),
  };
  return { root, branch, wrun, wtrust, emit };
}

export async function runAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  const { state, story, iteration, worker } = input;
  const w = await openAttempt(input);
  const { root, branch, wrun, wtrust, emit } = w;
  const signal = input.controller.signal;
  const base = buildDeps(wrun, state, input.budget, input.controller, wtrust);
  const deps: LoopDeps = {
    ...base,
    runAgent: (it, s) =>
      runAgent(wrun, state, wtrust, it, s, {
        story: {
          id: story.id,
          title: story.title,
          workers: input.workers,
          branch,
          planBranch: input.run.branch,
          ...(input.mergedSince ? { mergedSince: input.mergedSince, lastFailure: input.lastFailure } : {}),
        },
        onPid: input.onPid,
      }),
  };
  emit({ type: 'iteration-start', iteration, maxIterations: input.config.maxIterations });
  emit({
    type: 'info',
    iteration,
    message: `worker ${worker} works on ${story.id} (${story.title}) in ${root}, on ${branch}`,
  });
  // openAttempt set the story branch at the plan tip: that is HEAD before the agent.
  const headBefore = input.planTip;
  const tips = await deps.readBranchTips();
  // While it runs, a setup the loop builds (another worker's claim, the merge queue) counts as built beside an agent.
  const agentEnded = loopSetupCache(root, state.id).agentRuns();
  const result = await runAgentWithRetries(state, input.config, deps, iteration).finally(agentEnded);
  throwIfAborted(signal);
  const tag = reportAgentExit(emit, iteration, result, input.config.completionPromise);
  input.onPhase('verifying');
  const git = await deps.inspectAgentGit(iteration, headBefore, tips);
  if (result.timedOut) deps.recordTimeout(iteration, result);
  const { violation } = git;
  if (violation) input.onViolation(violation.reason);
  const verified = await verifyIteration({
    ...verifyInput(wrun, state, wtrust, iteration, signal),
    prdBefore: input.planText,
    headAfterAgent: git.headAfter,
    offBranch: git.offBranch,
    story: story.id,
    ...(violation ? { violation: violation.reason, extraOwnFiles: violation.files } : {}),
  });
  return settleAttempt(input, w, tag, verified, verified.runnerCommit ?? git.headAfter);
}

/**
 * The attempt's outcome once its claim is judged; its story branch is let go. `head` is the commit verification
 * judged (or the runner's own commit of the plan on it), not HEAD read again: a process the agent left behind could
 * have moved HEAD since, and the merge queue takes this commit as the verified one.
 */
async function settleAttempt(
  input: AttemptInput,
  { root, branch, emit }: WorkerSetup,
  tag: Tag | null,
  verified: VerifyOutcome,
  head: string | null,
): Promise<AttemptOutcome> {
  const { story, iteration, worker } = input;
  emit({ type: 'verify', iteration, verdicts: verified.verdicts, restored: verified.restored, allPass: false });
  const outcome: AttemptOutcome = {
    story: story.id,
    worker,
    iteration,
    branch,
    tag,
    head,
    verdict: verified.verdicts.find((v) => v.id === story.id) ?? null,
    notes: verified.prd.userStories.find((s) => s.id === story.id)?.notes,
  };
  // The story branch is let go, so another worker can take the story up again from the new plan tip.
  await runGit(root, ['checkout', '-q', '--detach']);
  return outcome;
}

/**
 * A claim its checks failed on an older plan tip, judged again with no agent run (stale-base.ts): the runner merges
 * that attempt's head onto the new tip (the plan, its log, the prompt and the engine kept as the tip has them, the
 * story's passes set as the claim set it), and verifies the merge as it verifies an agent's work, on the story
 * branch. `input.iteration` is the attempt's own. Null when the attempt does not merge onto the new tip.
 */
export async function rejudgeAttempt(input: AttemptInput & { head: string }): Promise<AttemptOutcome | null> {
  const { state, story, iteration } = input;
  const w = await openAttempt(input);
  const { root, branch, wrun, wtrust, emit } = w;
  const rel = (p: string) => path.relative(root, p).split(path.sep).join('/');
  // The prompt is read in the user's tree (openAttempt): its path in this one is the same relative to the repository.
  const prompt = path.relative(input.mainRoot, wrun.paths.prompt).split(path.sep).join('/');
  const claim = JSON.parse(input.planText) as Prd;
  const claimed = claim.userStories.find((s) => s.id === story.id);
  if (claimed) claimed.passes = true;
  const merged = await mergeStory(root, {
    branch,
    planTip: input.planTip,
    storyHead: input.head,
    keep: [
      rel(wrun.paths.prd),
      rel(wrun.paths.progress),
      ...(prompt.startsWith('../') ? [] : [prompt]),
      ...ENGINE_FILES,
    ],
    write: () => atomicWriteFileSync(wrun.paths.prd, `${JSON.stringify(claim, null, 2)}\n`),
    written: [rel(wrun.paths.prd)],
    message: `ralph: ${story.id}: the work of iteration ${iteration}, merged onto ${input.planTip.slice(0, 7)} to be judged again`,
  });
  if (merged.kind === 'conflict') {
    await runGit(root, ['checkout', '-q', '--detach']);
    return null;
  }
  await gitOk(root, ['checkout', '-q', '-B', branch, merged.commit]);
  emit({
    type: 'info',
    iteration,
    message: `${story.id}: the work of iteration ${iteration} merged onto the new tip ${input.planTip.slice(0, 7)} as ${merged.commit.slice(0, 7)}, judged again there before any agent redoes it`,
  });
  const verified = await verifyIteration({
    ...verifyInput(wrun, state, wtrust, iteration, input.controller.signal),
    prdBefore: input.planText,
    headAfterAgent: merged.commit,
    story: story.id,
  });
  return settleAttempt(input, w, null, verified, verified.runnerCommit ?? merged.commit);
}

/**
 * The files a worker's guard holds: its own tree's engine and per-worktree config, and the run's shared snapshot of
 * everything the workers share (.git/config, hooks, ~/.gitconfig, the user's engine). Shared, not taken again: a
 * snapshot taken while another worker's agent had changed .git/config would hold that change as the truth, and put
 * it back after the other worker's guard had undone it.
 */
export function workerGuard(own: RunnerGuard, shared: RunnerGuard): RunnerGuard {
  // The worker's own files: its tree's (its .git file too), and its own git dir's config.worktree and commondir. Everything else comes
  // from the run's snapshot, the main .git's files of those names and a configuration include that happens to be
  // called config.worktree among them (told by where it is, not by its name).
  const ownGitDir = (f: RunnerGuard['files'][number]) => realpathOrUndefined(path.dirname(f.abs)) === own.ownGitDir;
  const perTree = (f: RunnerGuard['files'][number]) =>
    f.inRepo || f.shown === '.git' || (['config.worktree', 'commondir'].includes(path.basename(f.abs)) && ownGitDir(f));
  return {
    files: [...own.files.filter(perTree), ...shared.files.filter((f) => !perTree(f))],
    dirs: shared.dirs,
    logLinks: new Map([...(shared.logLinks ?? []), ...(own.logLinks ?? [])]),
    gitDir: shared.gitDir,
    ownGitDir: own.ownGitDir,
  };
}

/**
 * Worker `k`'s worktree on `branch`, reset to `planTip`: created the first time, then re-used for each story it
 * takes. What an earlier attempt left uncommitted there is dropped (its claims were judged on its commits).
 */
async function openWorkerTree(
  mainRoot: string,
  loopId: string,
  k: number,
  branch: string,
  planTip: string,
): Promise<string> {
  const root = workerTreePath(mainRoot, loopId, k);
  if (!existsSync(root)) {
    // Stale worktree records were pruned once, before any worker started (releaseStoryBranches).
    mkdirSync(path.dirname(root), { recursive: true });
    unpinGitDirs(root);
    const r = await addWorktree(mainRoot, ['--quiet', '-B', branch, root, planTip]);
    if (r.code !== 0)
      throw new LoopExit(
        LOOP_EXIT.refused,
        `could not create worker ${k}'s worktree ${root}: ${r.stderr.trim()}`,
        `check that ${path.dirname(root)} can be written, then continue with: ./ralph/ralph.sh --resume ${loopId}`,
      );
    await holdTreeDirs(mainRoot, root);
  } else {
    // Held when the run made it, or checked now (a tree a killed run left): before the runner's git runs there.
    await holdTreeDirs(mainRoot, root);
    await gitOk(root, ['checkout', '-q', '--force', '-B', branch, planTip]);
    await gitOk(root, ['clean', '-q', '-f', '-d']);
  }
  keepRecordsIn([root, realpathSync(root)], mainRoot);
  return root;
}

// Each worker tree's git dirs: held since the run made the tree (or checked it, holdTreeDirs), never read again from
// its .git file, which the agent could have pointed elsewhere since.
function workerGitDirs(root: string): Promise<Pick<RepoLocation, 'gitDir' | 'commonDir'>> {
  return readGitDirs(root);
}

/** Worker trees hold no story branch between attempts: a killed run's may, and another worker may need it. */
export async function releaseStoryBranches(mainRoot: string, states: readonly WorkerState[]): Promise<void> {
  // Before any worker starts: the records of worktrees a crash left without their folder go.
  await runGit(mainRoot, ['worktree', 'prune']);
  for (const ws of states) if (existsSync(ws.path)) await runGit(ws.path, ['checkout', '-q', '--detach']);
}

/**
 * Story branches of stories already merged: the queue deletes each right after its merge, and an interrupt in between
 * leaves it behind. `branch -d` (run in the plan branch's tree) deletes only a branch merged there.
 */
export async function deleteMergedStoryBranches(
  tree: string,
  planBranch: string,
  merged: readonly string[],
): Promise<void> {
  const names = new Set(merged.map((id) => storyBranch(planBranch, id)));
  const listed = await runGit(tree, ['for-each-ref', '--format=%(refname:lstrip=2)', `refs/heads/${planBranch}--*`]);
  const left = listed.stdout.split('\n').filter((b) => names.has(b));
  if (left.length) await runGit(tree, ['branch', '-q', '-d', '--', ...left]);
}

/**
 * The trees of workers a run no longer has, as idle workers: it ran with more before a kill -9 and was resumed with
 * fewer. Their story branches are let go and their trees removed like the others'.
 */
export function formerWorkers(mainRoot: string, loopId: string, workers: number): WorkerState[] {
  const folder = path.dirname(workerTreePath(mainRoot, loopId, 1));
  const prefix = `${loopId}--w`;
  const ks = (existsSync(folder) ? readdirSync(folder) : [])
    .filter((n) => n.startsWith(prefix))
    .map((n) => Number(n.slice(prefix.length)));
  return ks
    .filter((k) => Number.isInteger(k) && k > workers)
    .map((k) => ({ worker: k, path: workerTreePath(mainRoot, loopId, k), phase: 'idle' }));
}

/** The workers' trees go at the end of a run; one that holds uncommitted work is kept, and named. */
export async function closeWorkerTrees(
  mainRoot: string,
  states: readonly WorkerState[],
  loopId: string,
  emit: RunContext['emit'],
): Promise<void> {
  for (const ws of states) {
    if (!existsSync(ws.path)) continue;
    const kept = await closeWorktree(mainRoot, realpathSync(ws.path), loopId);
    if (kept) emit({ type: 'warn', worker: ws.worker, message: kept });
  }
  await runGit(mainRoot, ['worktree', 'prune']);
}
