// The real edges of one run, handed to the loop (core/loop.ts) as LoopDeps: each member is one named function of
// this folder or an edge module, so the loop itself sees no fs, git or processes.
import { readFileNoWait } from '../../util/read.js';
import type { AgentResult, LoopConfig, LoopDeps, RunContext, RunPaths, SaveReason } from '../types.js';
import type { BudgetGate } from '../budget/types.js';
import type { GateOutcome, OwnStatusMemo, VerifyResult, Violation } from '../verify/types.js';
import type { LoopState } from '../store/state-types.js';
import type { RunOptions } from '../loop-options.js';
import type { Prd } from '../../prd/types.js';
import { realClock } from '../clock.js';
import { readChangedPaths } from '../git/read.js';
import type { GitDirs } from '../git/fingerprint.js';
import { iterationLogPath, loopDir } from '../store/layout.js';
import { writeState } from '../store/state-file.js';
import { planAgent } from '../agents/index.js';
import { runAgentOnce } from '../agents/run.js';
import { planAgentEnv } from '../agents/env.js';
import { detectRateLimit, transientReason } from '../budget/ratelimit.js';
import { relToTop } from '../../util/repo-path.js';
import type { RunTrust } from '../verify/trust.js';
import {
  finalGate as pipelineGate,
  verifyClaims as pipelineClaims,
  verifyInput as pipelineInput,
  type Claims,
  type Pipeline,
  type PipelineInput,
} from '../verify/pipeline.js';
import { readPrompt, holdPrompt, restorePrompt, type PromptHold } from './prompt.js';
import { renderPreamble, renderStoryNote, type StoryNote } from '../core/preamble.js';
import { finishInterruptedIteration } from '../core/loop.js';
import { isSkipped } from '../../prd/skip.js';
import { stopLeftovers, inspectAgentGit, otherLoopBranches } from './after-agent.js';
import { restoreMovedBranches, skips } from '../verify/branch-moves.js';
import { heldRefsRecord, writeAgentRun } from '../verify/agent-run-record.js';
import type { RefsSnapshot } from '../git/head.js';
import { guardRunnerFiles } from '../verify/trusted-files.js';
import { restoreNestedGits } from '../verify/nested-git.js';
import { clearNewFlags, distrustStat, unsplitIndex } from '../verify/index-flags.js';
import { ensureScratch, checkSandbox, sandboxCommand } from './sandbox.js';
import { beforeAgent, recordTimeout, type PromptCache } from './upkeep.js';
import { RefsView } from './refs-view.js';
import { deliverBranch } from '../deliver/deliver.js';

export function loopConfig(options: RunOptions, env: NodeJS.ProcessEnv): LoopConfig {
  // RALPH_RETRY_MS scales every back-off, so tests of rate limits and retries run in milliseconds.
  const scale = Number(env.RALPH_RETRY_MS) >= 0 && env.RALPH_RETRY_MS ? Number(env.RALPH_RETRY_MS) : undefined;
  return {
    maxIterations: options.maxIterations,
    completionPromise: options.completionPromise,
    pauseMs: options.pauseMs,
    noProgressLimit: options.noProgressLimit,
    maxCost: options.maxCost,
    retryBaseMs: scale ?? 10_000,
    rateLimitBackoffMs: scale ?? 60_000,
  };
}

/** `promptAtHead`: the prompt as committed at the commit the loop starts on, when the start read it (run/branch.ts). */
export function buildDeps(
  run: RunContext,
  state: LoopState,
  budget: BudgetGate,
  controller: AbortController,
  trust: RunTrust,
  promptAtHead: PromptCache['at'] = null,
): LoopDeps {
  const { paths } = run;
  const signal = controller.signal;
  // git's folders, for the fingerprints (git/fingerprint.ts) that tell whether git's answers can have changed.
  const dirs: GitDirs | null = trust.guard.ownGitDir
    ? { top: trust.topLevel, own: trust.guard.ownGitDir, common: trust.gitDir }
    : null;
  const refs = new RefsView(paths.repoRoot, dirs);
  // The prompt as committed at a commit (which never changes), so an unedited prompt costs no git process.
  const promptAt: PromptCache = { at: promptAtHead };
  // The runner's own files as they were when status last listed none of them (verify.ts readOwnStatus).
  const ownStatus: OwnStatusMemo | undefined = dirs ? { dirs, clean: null } : undefined;
  // The prompt as the agent got it, put back after it ran; a restored tracked prompt is committed with the runner's files.
  const prompt: PromptHold & { toCommit: string[] } = { toCommit: [] };
  const pipeline = pipelineOf(run, state, trust);
  return {
    clock: realClock,
    emit: run.emit,
    signal,
    budget,
    saveState: (s, at) => saveState(paths.repoRoot, s, at),
    // The runner's own record, never a file in ralph/.runs/: the agent can write those (SPEC §6).
    prdBefore: () => trust.baseline ?? readFileNoWait(paths.prd).toString('utf8'),
    headSha: () => refs.headSha(),
    committedWork: (before, after) => committedWork(paths, trust.topLevel, before, after),
    detectRateLimit,
    transientReason,
    beforeAgent: (iteration) => beforeAgent(run, iteration, refs, promptAt),
    runAgent: (iteration, agentSignal) => {
      holdPrompt(paths, prompt);
      return runAgent(run, state, trust, iteration, agentSignal, { refs });
    },
    readBranchTips: () => refs.branchTips(),
    inspectAgentGit: async (iteration, before, tips) => {
      prompt.toCommit = await restorePrompt(run, trust.topLevel, prompt, iteration);
      return afterAgent(run, trust, refs, iteration, before, tips);
    },
    recordTimeout: (iteration, result) => recordTimeout(run, state.id, iteration, result),
    verify: (iteration, prdBefore, head, offBranch, violation) =>
      verifyClaims(
        run,
        pipeline,
        { iteration, prdBefore, head, offBranch, violation, ownStatus, ownFiles: prompt.toCommit.splice(0) },
        signal,
      ),
    finalGate: (iteration) => pipelineGate(pipeline, iteration, signal),
  };
}

/**
 * The iteration's start is written with the agent's pid (a runner killed before the agent starts resumes the same
 * iteration either way), so a no-op iteration writes state.json three times: the pid, the record of the agent's run
 * before its checks, and the end. Each write is durable (fsync before the rename): a rename that is not may leave an
 * empty file after a power loss on some file systems (XFS), which would lose the loop's state, not only its last step.
 */
function saveState(repoRoot: string, state: LoopState, at: SaveReason): void {
  if (at === 'iteration-start') return;
  writeState(repoRoot, state);
}

/** This run's verification pipeline (verify/pipeline.ts), with what the run wires in: the checks' sandbox, the reviewer's back-off. */
export function pipelineOf(run: RunContext, state: LoopState, trust: RunTrust): Pipeline {
  return {
    run,
    state,
    trust,
    wiring: { sandbox: () => checkSandbox(run, trust), retryBaseMs: loopConfig(run.options, run.io.env).retryBaseMs },
  };
}

/** The pipeline's shared input, for the --parallel worker and the merge queue (run/parallel/). */
export function verifyInput(
  run: RunContext,
  state: LoopState,
  trust: RunTrust,
  iteration: number,
  signal: AbortSignal,
): PipelineInput {
  return pipelineInput(pipelineOf(run, state, trust), iteration, signal);
}

/** The pipeline's final gate, for the --parallel coordinator. */
export function finalGate(
  run: RunContext,
  state: LoopState,
  trust: RunTrust,
  iteration: number,
  signal: AbortSignal,
): Promise<GateOutcome> {
  return pipelineGate(pipelineOf(run, state, trust), iteration, signal);
}

/** A first commit ever is work; otherwise work is any changed path besides the plan, its progress log and the prompt. */
async function committedWork(
  paths: RunPaths,
  topLevel: string,
  headBefore: string | null,
  headAfter: string | null,
): Promise<boolean> {
  if (headBefore === null || headAfter === null) return headAfter !== null;
  // The prompt too: an agent that only rewrites its own instructions has done no work (and is warned about).
  const own = new Set([paths.prd, paths.progress, paths.prompt].map((p) => relToTop(topLevel, p)));
  return (await readChangedPaths(topLevel, headBefore, headAfter)).some((p) => !own.has(p));
}

/** What a worker of a --parallel run adds to an agent run: its story, and where its agent's pid is kept. */
export interface AgentRunExtras {
  story?: StoryNote;
  /** Called with the agent's process group when it starts, and with undefined once it is gone. */
  onPid?: (pid: number | undefined) => void;
  /** The loop's view of its refs (a single loop's): an interrupted run puts back the branches it moved too. */
  refs?: RefsView;
}

export async function runAgent(
  run: RunContext,
  state: LoopState,
  trust: RunTrust,
  iteration: number,
  signal: AbortSignal,
  extras: AgentRunExtras = {},
): Promise<AgentResult> {
  const { paths, options, io } = run;
  const dir = loopDir(paths.repoRoot, state.id);
  // The baseline parsed, or (a resumed loop before its first settlement) its text.
  const baseline = trust.baselinePrd ?? (trust.baseline ? (JSON.parse(trust.baseline) as Prd) : undefined);
  const prompt =
    renderPreamble(paths, options, baseline) +
    (extras.story ? renderStoryNote(extras.story) : '') +
    readPrompt(run, iteration);
  const scratch = options.sandbox ? ensureScratch(dir) : dir;
  const agent = planAgent({
    agent: options.agent,
    agentCmd: options.agentCmd,
    prompt,
    runDir: scratch,
    iteration,
    env: io.env,
  });
  // The runner's secrets stay with the runner, and a mark in the environment finds what the agent leaves behind.
  const story: Record<string, string> = extras.story ? { RALPH_STORY_ID: extras.story.id } : {};
  const { env, token } = planAgentEnv(io.env, {
    RALPH_LOOP_ID: state.id,
    RALPH_ITERATION: String(iteration),
    RALPH_PRD: paths.prd,
    RALPH_PROGRESS: paths.progress,
    RALPH_RUN_DIR: scratch,
    ...story,
  });
  const sandbox = options.sandbox ? await sandboxCommand(run, trust, agent, scratch) : null;
  // inner: the command inside bwrap, so a shell that cannot start it is read as the agent not found (exit 2).
  const plan = sandbox
    ? { ...agent, file: sandbox.file, args: sandbox.args, inner: { file: agent.file, args: agent.args } }
    : agent;
  // A pid left in the file after the agent exited is told apart from a live agent by its start time, and goes
  // with the next save.
  const onPid =
    extras.onPid ??
    ((pid: number | undefined) =>
      pid === undefined
        ? (state.agentPid = undefined)
        : writeState(paths.repoRoot, Object.assign(state, { agentPid: pid })));
  // What the agent finds, kept where it cannot write: a runner killed while it runs has its resume put back what it
  // changed (verify/agent-run-record.ts).
  if (extras.refs) recordAgentRun(run, trust, iteration);
  try {
    const result = await runAgentOnce({
      plan,
      cwd: paths.repoRoot,
      env,
      timeoutMs: options.iterationTimeoutMs,
      signal,
      logFile: iterationLogPath(paths.repoRoot, state.id, iteration),
      onTool: (text) => run.emit({ type: 'tool', iteration, text }),
      onStart: (pid) => onPid(pid),
    });
    onPid(undefined);
    await stopLeftovers(run, token, iteration);
    return result;
  } finally {
    // Before anything reads git: the agent's commits are in its quarantine until then.
    await sandbox?.after();
    // Interrupted (Ctrl-C, a timeout of the run): no sweep follows in afterAgent, and your git status in the tree would
    // run what a repository the agent made at a gitlink says; taken out now (its claims are judged on resume).
    if (signal.aborted) {
      const swept = await sweepIndex(trust).catch((err: unknown) => [
        {
          reason: `the index could not be checked after the interrupted agent run (${err instanceof Error ? err.message : String(err)}): look at \`git ls-files -s | grep ^160000\` and \`git ls-files -v\` before you run git status in the tree`,
        },
      ]);
      for (const v of swept) run.emit({ type: 'warn', iteration, message: v.reason });
      if (extras.refs) {
        const refs = extras.refs;
        const { violation, left } = await refs
          .read()
          .then((now) => putBackBranches(run, trust, now))
          .catch((err: unknown) => ({
            violation: undefined,
            left: `the branches could not be checked: ${String(err)}`,
          }));
        for (const message of [violation?.reason, left]) if (message) run.emit({ type: 'warn', iteration, message });
      }
    }
  }
}

/** agent-run.json before an agent run of a single loop; not written is said, and the run goes on as before. */
function recordAgentRun(run: RunContext, trust: RunTrust, iteration: number): void {
  const branches = trust.heldBranches;
  if (run.siblingBranches || !branches || !trust.heldRefs || !trust.indexFlags || !trust.nested) return;
  const skip = [run.branch, ...otherLoopBranches(run)];
  try {
    writeAgentRun(run.paths.repoRoot, run.id, {
      branches: Object.fromEntries([...branches].filter(([b]) => !skips(skip, b))),
      skip,
      ...heldRefsRecord(trust.heldRefs),
      flags: [...trust.indexFlags],
      ownGitDir: trust.nested.ownGitDir,
    });
  } catch (err) {
    run.emit({
      type: 'warn',
      iteration,
      message: `could not record what the agent finds (${(err as Error).message}): if this runner is killed while the agent runs, its resume cannot put back the branches, tags and index flags the agent changed`,
    });
  }
}

/**
 * After an agent run: the repositories at the index's gitlinks put back (verify/nested-git.ts), the stat data of an
 * index the agent wrote distrusted, and the flags set since the loop started cleared (verify/index-flags.ts).
 */
async function sweepIndex(trust: RunTrust): Promise<Violation[]> {
  if (!trust.nested) return [];
  await unsplitIndex(trust.nested.top, trust.nested.ownGitDir);
  const listed = trust.nested.links;
  const nested = await restoreNestedGits(trust.nested);
  // An index the agent wrote: its stat data is not trusted (index-flags.ts distrustStat; git status then shows what
  // is on disk, and the claims of work left uncommitted are rejected as such).
  if (trust.nested.links !== listed && trust.indexSince !== undefined)
    distrustStat(trust.nested.top, trust.nested.links, trust.indexSince);
  const flags = trust.indexFlags
    ? await clearNewFlags(trust.nested.top, trust.indexFlags, trust.nested.links)
    : undefined;
  return [nested, flags].filter((v): v is Violation => v !== undefined);
}

/**
 * The branches moved since the loop started, other than the loop's and those other loops move: put back
 * (verify/branch-moves.ts). A --parallel worker skips its run's branches too (the plan branch and every story branch,
 * which the queue and the other workers move while its agent runs), and holds the run's map of your branches, shared
 * with its siblings and the run's end. Which running agent moved a branch cannot be told: the first worker to look
 * after its own agent puts it back and has its claims rejected, even when another worker's agent moved it (the safe
 * side); that other worker then finds the branch in place, and its claims are rejected with those of every attempt
 * that ran meanwhile (ending.ts rejectOverlapping). Two workers putting back at once is harmless: each writes the
 * value held.
 */
async function putBackBranches(
  run: RunContext,
  trust: RunTrust,
  after: RefsSnapshot,
): Promise<{ violation?: Violation; left?: string }> {
  const held = trust.heldBranches;
  const branches = after.branches ?? new Map<string, string>();
  if (!held) return {};
  try {
    const r = await restoreMovedBranches({
      top: run.paths.repoRoot,
      loopId: run.id,
      before: held,
      now: after,
      skip: [run.branch, ...(run.siblingBranches ?? []), ...otherLoopBranches(run)],
      commonDir: trust.gitDir,
      ...(run.siblingBranches
        ? { by: 'an agent of this run (which one is not known: the workers run side by side)' }
        : {}),
    });
    // Named once: a branch checked out in a worktree moves with your commits there too.
    for (const b of r.leftBranches ?? []) {
      const now = branches.get(b);
      if (now) held.set(b, now);
      else held.delete(b);
    }
    return r;
  } catch (err) {
    return { left: `the branches the agent run may have moved could not be checked: ${(err as Error).message}` };
  }
}

/** Both reasons, when both are there. */
function joinViolations(a: Violation | undefined, b: Violation | undefined): Violation | undefined {
  if (!a || !b) return a ?? b;
  return { reason: `${a.reason}; ${b.reason}`, files: [...a.files, ...b.files] };
}

/** The runner's files and git's configuration first (before any git command reads what the agent planted), then git. */
async function afterAgent(
  run: RunContext,
  trust: RunTrust,
  refs: RefsView,
  iteration: number,
  headBefore: string | null,
  tips: string[],
) {
  const guarded = guardRunnerFiles(run, trust, iteration);
  // Then the index (its `git ls-files` after .git/config is put back): the repositories at its gitlinks, and the flags
  // that hide a file from git status, before the status below reads it.
  const swept = await sweepIndex(trust);
  for (const v of swept) run.emit({ type: 'warn', iteration, message: v.reason });
  const git = await inspectAgentGit(run, trust.topLevel, iteration, headBefore, tips, await refs.read());
  // Then, on the loop's branch again (inspectAgentGit switched back), the other branches the run moved: put back. An
  // agent that worked on another branch has its claims rejected for that already.
  const { violation: moved, left } = await putBackBranches(run, trust, await refs.read());
  for (const message of [moved?.reason, left]) if (message) run.emit({ type: 'warn', iteration, message });
  const violation = [guarded, ...swept, git.offBranch ? undefined : moved].reduce(joinViolations, undefined);
  return { ...git, ...(violation ? { violation } : {}) };
}

/** An iteration's claims through the pipeline; a pass that accepted a story is delivered (--deliver push, pr). */
async function verifyClaims(
  run: RunContext,
  pipeline: Pipeline,
  claims: Claims,
  signal: AbortSignal,
): Promise<VerifyResult> {
  const result = await pipelineClaims(pipeline, claims, signal);
  if (result.verdicts.some((v) => v.status !== 'rejected'))
    await deliverBranch(run, pipeline.trust, `after iteration ${claims.iteration}`, claims.iteration);
  return result;
}

// The budget was settled at start, and finishing an iteration runs no agent.
const NO_BUDGET: BudgetGate = { beforeStart: async () => {}, beforeIteration: async () => 'continue' };

/**
 * Ctrl-C (or kill -9) while the runner checked the claims of iteration N left them pending. They are decided
 * now, as iteration N, before any agent runs: a claim that passes is accepted, one that fails is rejected with
 * its note, and the loop's decision (every story passes, STUCK, no progress, last iteration) is taken as if
 * the iteration had never been interrupted. A second interrupt here again decides nothing (exit 130). The claims
 * are the flips against the runner's own baseline, so nothing in ralph/.runs/ decides which they are.
 */
export async function finishResumedIteration(
  run: RunContext,
  state: LoopState,
  signal: AbortSignal,
  trust: RunTrust,
): Promise<VerifyResult | null> {
  if (state.iterationDone || state.iteration < 1 || !state.verifying) return null;
  const base = trust.baseline ? (JSON.parse(trust.baseline) as Prd) : null;
  const now = JSON.parse(readFileNoWait(run.paths.prd).toString('utf8')) as Prd;
  const open = new Set(
    base?.userStories.filter((s) => s.passes !== true).map((s) => s.id) ?? now.userStories.map((s) => s.id),
  );
  const pending = now.userStories.filter((s) => s.passes === true && !isSkipped(s) && open.has(s.id)).map((s) => s.id);
  const what = pending.length ? `checking ${pending.join(', ')} now` : 'finishing its verification now';
  run.emit({
    type: 'info',
    message: `iteration ${state.iteration} was interrupted while its claims were checked; ${what}, before the agent runs again`,
  });
  // buildDeps wants a controller; this one follows the run's signal, so Ctrl-C still reaches the checks.
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener('abort', () => controller.abort(), { once: true });
  return finishInterruptedIteration(
    state,
    loopConfig(run.options, run.io.env),
    buildDeps(run, state, NO_BUDGET, controller, trust),
  );
}
