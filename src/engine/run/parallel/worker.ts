// One attempt of one worker of a --parallel run: its worktree set on the story branch at the plan branch's tip, one
// agent run told which story is its own, then the same steps a single loop takes after an agent (deps.ts): what it
// left running is stopped, the runner's files put back, git inspected, and the claim verified on the story branch.
import { holdNestedGits } from '../../verify/nested-git.js';
import { loopSetupCache } from '../../verify/setup-cache.js';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { BudgetGate } from '../../budget/types.js';
import type { LoopConfig, LoopDeps, RunContext } from '../../types.js';
import type { LoopState } from '../../store/state-types.js';
import type { Tag } from '../../core/tags.js';
import type { StoryNote } from '../../core/preamble.js';
import type { Story } from '../../../prd/types.js';
import { gitOk, runGit } from '../../git/git.js';
import { snapshotRunnerFiles } from '../../verify/runner-guard.js';
import { verifyIteration, type VerifyOutcome } from '../../verify/verify.js';
import type { Prd } from '../../../prd/types.js';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { ENGINE_FILES } from '../../verify/runner-guard.js';
import { mergeStory } from './merge.js';
import { reportAgentExit, runAgentWithRetries } from '../../core/retries.js';
import { throwIfAborted } from '../../core/exits.js';
import { buildDeps, runAgent, verifyInput } from '../deps.js';
import type { RunTrust } from '../../verify/trust.js';
import type { AttemptOutcome } from './types.js';
import { openWorkerTree, storyBranch, workerGitDirs, workerGuard } from './worker-trees.js';

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
