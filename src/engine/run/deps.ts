// The real edges of one run, handed to the loop (core/loop.ts) as LoopDeps: each member is one named function of
// this folder or an edge module, so the loop itself sees no fs, git or processes.
import { readFileSync } from 'node:fs';
import type { AgentResult, AgentRunRecord, BudgetGate, GateOutcome, LoopConfig, LoopDeps, LoopState, OwnStatusMemo, ReviewSetup, RunContext, RunOptions, RunPaths, SaveReason, VerifyInput, VerifyResult, Violation } from '../types.js';
import type { Prd } from '../../prd/types.js';
import { realClock } from '../clock.js';
import { readChangedPaths } from '../git/git.js';
import type { GitDirs } from '../git/fingerprint.js';
import { iterationLogPath, ledgerPath, loopDir } from '../store/layout.js';
import { writeState } from '../store/state-file.js';
import { planAgent } from '../agents/index.js';
import { runAgentOnce } from '../agents/run.js';
import { planAgentEnv } from '../agents/env.js';
import { detectRateLimit, transientReason } from '../budget/ratelimit.js';
import { verifyIteration } from '../verify/verify.js';
import { runFinalGate } from '../verify/final-gate.js';
import { recordShipped } from './shipped.js';
import { relToTop } from '../../util/repo-path.js';
import { settleBaseline, type RunTrust } from './trust.js';
import { readPrompt, holdPrompt, restorePrompt, type PromptHold } from './prompt.js';
import { renderPreamble, renderStoryNote, type StoryNote } from '../core/preamble.js';
import { stopLeftovers, guardRunnerFiles, inspectAgentGit } from './after-agent.js';
import { ensureScratch, checkSandbox, sandboxCommand } from './sandbox.js';
import { beforeAgent, recordTimeout, type PromptCache } from './upkeep.js';
import { RefsView } from './refs-view.js';
import { deliverBranch } from './deliver.js';
import { reviewInstructionsPath } from './review-setup.js';
import { renderUsd } from '../../util/usd.js';

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
export function buildDeps(run: RunContext, state: LoopState, budget: BudgetGate, controller: AbortController, trust: RunTrust, promptAtHead: PromptCache['at'] = null): LoopDeps {
  const { paths } = run;
  const signal = controller.signal;
  // git's folders, for the fingerprints (git/fingerprint.ts) that tell whether git's answers can have changed.
  const dirs: GitDirs | null = trust.guard.ownGitDir ? { top: trust.topLevel, own: trust.guard.ownGitDir, common: trust.gitDir } : null;
  const refs = new RefsView(paths.repoRoot, dirs);
  // The prompt as committed at a commit (which never changes), so an unedited prompt costs no git process.
  const promptAt: PromptCache = { at: promptAtHead };
  // The runner's own files as they were when status last listed none of them (verify.ts readOwnStatus).
  const ownStatus: OwnStatusMemo | undefined = dirs ? { dirs, clean: null } : undefined;
  // The prompt as the agent got it, put back after it ran; a restored tracked prompt is committed with the runner's files.
  const prompt: PromptHold & { toCommit: string[] } = { toCommit: [] };
  return {
    clock: realClock,
    emit: run.emit,
    signal,
    budget,
    saveState: (s, at) => saveState(paths.repoRoot, s, at),
    // The runner's own record, never a file in ralph/.runs/: the agent can write those (SPEC §6).
    prdBefore: () => trust.baseline ?? readFileSync(paths.prd, 'utf8'),
    headSha: () => refs.headSha(),
    committedWork: (before, after) => committedWork(paths, trust.topLevel, before, after),
    detectRateLimit,
    transientReason,
    beforeAgent: (iteration) => beforeAgent(run, iteration, refs, promptAt),
    runAgent: (iteration, agentSignal) => {
      holdPrompt(paths, prompt);
      return runAgent(run, state, trust, iteration, agentSignal);
    },
    readBranchTips: () => refs.branchTips(),
    inspectAgentGit: async (iteration, before, tips) => {
      prompt.toCommit = await restorePrompt(run, trust.topLevel, prompt, iteration);
      return afterAgent(run, trust, refs, iteration, before, tips);
    },
    recordTimeout: (iteration, result) => recordTimeout(run, state.id, iteration, result),
    verify: (iteration, prdBefore, head, offBranch, violation) => verifyClaims(run, state, trust, { iteration, prdBefore, head, offBranch, violation, ownStatus, ownFiles: prompt.toCommit.splice(0) }, signal),
    finalGate: (iteration) => finalGate(run, state, trust, iteration, signal),
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

/** What every verification of this run shares (an iteration's claims, the claims at start, the final gate). */
export function verifyInput(run: RunContext, state: LoopState, trust: RunTrust, iteration: number, signal: AbortSignal): Omit<VerifyInput, 'prdBefore'> & { topLevel: string; signal: AbortSignal } {
  const { paths, options } = run;
  const loopId = state.id;
  return {
    // repoRoot is git's --show-toplevel, resolved at start; a run cannot move it, so verification need not ask again.
    topLevel: trust.topLevel,
    repoRoot: paths.repoRoot, prdPath: paths.prd, progressPath: paths.progress, ledgerPath: ledgerPath(paths.repoRoot, loopId),
    loopId, iteration, checkTimeoutMs: options.checkTimeoutMs, inPlace: options.verifyInPlace, pins: trust.pins, sandbox: checkSandbox(run, trust), checkBase: trust.checkBase,
    log: (level, message) => run.emit({ type: level, iteration, message }),
    guardTrusted: (who) => guardRunnerFiles(run, trust, iteration, who)?.reason,
    signal,
    ...(options.reviewAgent || options.reviewCmd ? { review: reviewSetup(run, state, trust, iteration) } : {}),
  };
}

/** The reviewer of this run (verify/review.ts): its command, its instructions' path, and where its diff starts. */
function reviewSetup(run: RunContext, state: LoopState, trust: RunTrust, iteration: number): ReviewSetup {
  const { options, paths, io } = run;
  return {
    agent: options.reviewAgent ?? options.agent,
    ...(options.reviewCmd ? { agentCmd: options.reviewCmd } : {}),
    ...(run.reviewerBin ? { bin: run.reviewerBin } : {}),
    ...(run.reviewerLogin ? { login: run.reviewerLogin } : {}),
    ...(options.reviewModel ? { model: options.reviewModel } : {}),
    instructionsPath: relToTop(trust.topLevel, reviewInstructionsPath(paths)),
    runDir: loopDir(paths.repoRoot, state.id),
    env: io.env,
    timeoutMs: options.iterationTimeoutMs,
    retryBaseMs: loopConfig(options, io.env).retryBaseMs,
    base: trust.lastVerified ?? trust.pins?.commit ?? null,
    spend: (costUsd) => spendOnReview(run, state, iteration, costUsd),
  };
}

/**
 * A reviewer run's cost joins the loop's (--max-cost counts both), with its own figure beside it; saved at once, as an
 * agent run's is, so an interrupt cannot lose it. A run that reported none is counted, for the unpriced rule.
 */
function spendOnReview(run: RunContext, state: LoopState, iteration: number, costUsd: number | undefined): void {
  if (costUsd === undefined) state.reviewRunsUnpriced = (state.reviewRunsUnpriced ?? 0) + 1;
  else {
    state.costUsd += costUsd;
    state.reviewCostUsd = (state.reviewCostUsd ?? 0) + costUsd;
    run.emit({ type: 'info', iteration, message: `the reviewer's run cost ${renderUsd(costUsd)} · cost so far ${renderUsd(state.costUsd)} (reviewer ${renderUsd(state.reviewCostUsd)})` });
  }
  writeState(run.paths.repoRoot, state);
}

/** A first commit ever is work; otherwise work is any changed path besides the plan, its progress log and the prompt. */
async function committedWork(paths: RunPaths, topLevel: string, headBefore: string | null, headAfter: string | null): Promise<boolean> {
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
}

export async function runAgent(run: RunContext, state: LoopState, trust: RunTrust, iteration: number, signal: AbortSignal, extras: AgentRunExtras = {}): Promise<AgentResult> {
  const { paths, options, io } = run;
  const dir = loopDir(paths.repoRoot, state.id);
  // The baseline parsed, or (a resumed loop before its first settlement) its text.
  const baseline = trust.baselinePrd ?? (trust.baseline ? (JSON.parse(trust.baseline) as Prd) : undefined);
  const prompt = renderPreamble(paths, options, baseline) + (extras.story ? renderStoryNote(extras.story) : '') + readPrompt(run, iteration);
  const scratch = options.sandbox ? ensureScratch(dir) : dir;
  const agent = planAgent({ agent: options.agent, agentCmd: options.agentCmd, prompt, runDir: scratch, iteration, env: io.env });
  // The runner's secrets stay with the runner, and a mark in the environment finds what the agent leaves behind.
  const story: Record<string, string> = extras.story ? { RALPH_STORY_ID: extras.story.id } : {};
  const { env, token } = planAgentEnv(io.env, { RALPH_LOOP_ID: state.id, RALPH_ITERATION: String(iteration), RALPH_PRD: paths.prd, RALPH_PROGRESS: paths.progress, RALPH_RUN_DIR: scratch, ...story });
  const plan = options.sandbox ? { ...agent, ...sandboxCommand(run, trust, agent, scratch), inner: { file: agent.file, args: agent.args } } : agent;
  // A pid left in the file after the agent exited is told apart from a live agent by its start time, and goes
  // with the next save.
  const onPid = extras.onPid ?? ((pid: number | undefined) => (pid === undefined ? (state.agentPid = undefined) : writeState(paths.repoRoot, Object.assign(state, { agentPid: pid }))));
  const result = await runAgentOnce({
    plan, cwd: paths.repoRoot, env, timeoutMs: options.iterationTimeoutMs, signal, logFile: iterationLogPath(paths.repoRoot, state.id, iteration),
    onTool: (text) => run.emit({ type: 'tool', iteration, text }),
    onStart: (pid) => onPid(pid),
  });
  onPid(undefined);
  await stopLeftovers(run, token, iteration);
  return result;
}

/** The runner's files and git's configuration first (before any git command reads what the agent planted), then git. */
async function afterAgent(run: RunContext, trust: RunTrust, refs: RefsView, iteration: number, headBefore: string | null, tips: string[]) {
  const violation = guardRunnerFiles(run, trust, iteration);
  return { ...(await inspectAgentGit(run, trust.topLevel, iteration, headBefore, tips, await refs.read())), ...(violation ? { violation } : {}) };
}

interface Claims {
  iteration: number;
  prdBefore: string;
  head: string | null;
  offBranch?: AgentRunRecord['offBranch'];
  violation?: Violation;
  ownStatus?: OwnStatusMemo;
  /** Runner files put back after the agent (the prompt), committed with the runner's edits. */
  ownFiles?: string[];
}

async function verifyClaims(run: RunContext, state: LoopState, trust: RunTrust, claims: Claims, signal: AbortSignal): Promise<VerifyResult> {
  const { violation } = claims;
  const result = await verifyIteration({
    ...verifyInput(run, state, trust, claims.iteration, signal),
    prdBefore: claims.prdBefore, headAfterAgent: claims.head, offBranch: claims.offBranch,
    // The settled baseline parsed, when it is this iteration's plan: a plan left as it was is not parsed again.
    ...(trust.baselinePrd && claims.prdBefore === trust.baseline ? { prdBeforeParsed: trust.baselinePrd, prdBeforeBytes: trust.baselineBytes } : {}),
    ...(violation ? { violation: violation.reason } : {}),
    ...(violation || claims.ownFiles?.length ? { extraOwnFiles: [...(violation?.files ?? []), ...(claims.ownFiles ?? [])] } : {}),
    ...(claims.ownStatus ? { ownStatus: claims.ownStatus } : {}),
  });
  await afterVerification(run, state.id, trust, result, claims.head);
  if (result.verdicts.some((v) => v.status !== 'rejected')) await deliverBranch(run, `after iteration ${claims.iteration}`, claims.iteration);
  return result;
}

/** After a verification pass: the new baseline, and where each accepted claim was verified. */
export async function afterVerification(run: RunContext, loopId: string, trust: RunTrust, result: VerifyResult, head: string | null): Promise<void> {
  for (const v of result.verdicts) {
    if (v.shipped && v.status !== 'rejected') trust.shipped.set(v.id, v.shipped);
    else trust.shipped.delete(v.id);
    if (v.status === 'rejected' || !head) continue;
    if (v.status === 'verified') trust.verifiedAt.set(v.id, head);
    trust.lastVerified = head;
  }
  if (result.verdicts.length && head && trust.verdictKey) {
    // Kept for a resume: its final gate seals these SHIPs again (run/shipped.ts).
    await recordShipped(trust.topLevel, loopId, head, trust.shipped, trust.verdictKey).catch((err: Error) => run.emit({ type: 'warn', message: `could not record the reviewer's SHIPs in git (refs/ralphkit): ${err.message}; after a resume they show as reported` }));
  }
  await settleBaseline(run.paths, loopId, trust, run.emit, result.prd);
}

/** The final gate of the run (verify/final-gate.ts), then its verdicts as the new baseline. */
export async function finalGate(run: RunContext, state: LoopState, trust: RunTrust, iteration: number, signal: AbortSignal): Promise<GateOutcome> {
  const gate = await runFinalGate({
    ...verifyInput(run, state, trust, iteration, signal),
    prd: JSON.parse(trust.baseline ?? readFileSync(run.paths.prd, 'utf8')) as Prd,
    verifiedAt: trust.verifiedAt,
    shipped: trust.shipped,
    verdictKey: trust.verdictKey,
    weak: trust.weak,
  });
  if (!gate.interrupted) await settleBaseline(run.paths, state.id, trust, run.emit, gate.prd);
  run.gatePassed = gate.passed && gate.commit ? { commit: gate.commit, allVerified: gate.verdicts.every((v) => v.status === 'verified') } : undefined;
  return gate;
}
