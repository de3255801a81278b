// The one verification pipeline (SPEC §6, STYLE "one pipeline per decision"): what every verification of a loop
// shares, and the steps after it, for the four that verify: the single loop (run/deps.ts), a --parallel worker and
// the merge queue (run/parallel/, through run/deps.ts), and the Stop hook (hook/verify-stop.ts). Each opens a
// `Pipeline` with the parts of its run that verification uses but does not own (the checks' sandbox, the reviewer's
// back-off); the claims judged, the baseline settled, the SHIPs kept and the final gate are this code for all four.
import { readFileNoWait } from '../../util/read.js';
import type { Prd } from '../../prd/types.js';
import type { AgentRunRecord, LoopState } from '../store/state-types.js';
import type {
  CheckSandbox,
  GateOutcome,
  OwnStatusMemo,
  ReviewSetup,
  VerifyInput,
  VerifyResult,
  Violation,
} from './types.js';
import type { RunContext } from '../types.js';
import { relToTop } from '../../util/repo-path.js';
import { renderUsd } from '../../util/usd.js';
import { ledgerPath, loopDir } from '../store/layout.js';
import { writeState } from '../store/state-file.js';
import { verifyIteration } from './verify.js';
import { runFinalGate } from './final-gate.js';
import { recordShipped } from './shipped.js';
import { settleBaseline, type RunTrust } from './trust.js';
import { guardRunnerFiles } from './trusted-files.js';
import { reviewInstructionsPath } from './review-prompt.js';

/** What a run wires into its verification: the parts that are the run's, not verification's. */
export interface PipelineWiring {
  /** The sandbox the checks (and the reviewer) run in with --sandbox (run/sandbox.ts), else undefined. */
  sandbox: () => CheckSandbox | undefined;
  /** The back-off of the reviewer's transient retries (run/deps.ts loopConfig). */
  retryBaseMs: number;
}

/** One loop's verification: its run, its state, what it decides with, and what its run wired in. */
export interface Pipeline {
  run: RunContext;
  state: LoopState;
  trust: RunTrust;
  wiring: PipelineWiring;
}

/** The claims of one pass: the plan they are judged against, and what the run saw of the agent's work. */
export interface Claims {
  iteration: number;
  prdBefore: string;
  head: string | null;
  offBranch?: AgentRunRecord['offBranch'];
  violation?: Violation;
  ownStatus?: OwnStatusMemo;
  /** Runner files put back after the agent (the prompt), committed with the runner's edits. */
  ownFiles?: string[];
  /** How the owner changes the plan, when it is not the runner's `--resume … --accept-plan-edits` (the hook's). */
  planEditHint?: string;
  /** A new loop's claims at start: the owner's word (VerifyInput.ownersWord). */
  ownersWord?: boolean;
}

export type PipelineInput = Omit<VerifyInput, 'prdBefore'> & { topLevel: string; signal: AbortSignal };

/** What every verification of this loop shares (an iteration's claims, the claims at start, the final gate, the merge queue's gates). */
export function verifyInput(p: Pipeline, iteration: number, signal: AbortSignal): PipelineInput {
  const { run, state, trust } = p;
  const { paths, options } = run;
  const loopId = state.id;
  return {
    // repoRoot is git's --show-toplevel, resolved at start; a run cannot move it, so verification need not ask again.
    topLevel: trust.topLevel,
    repoRoot: paths.repoRoot,
    prdPath: paths.prd,
    progressPath: paths.progress,
    ledgerPath: ledgerPath(paths.repoRoot, loopId),
    loopId,
    iteration,
    checkTimeoutMs: options.checkTimeoutMs,
    inPlace: options.verifyInPlace,
    pins: trust.pins,
    sandbox: p.wiring.sandbox(),
    checkBase: trust.checkBase,
    log: (level, message) => run.emit({ type: level, iteration, message }),
    guardTrusted: (who) => guardRunnerFiles(run, trust, iteration, who)?.reason,
    signal,
    ...(options.reviewAgent || options.reviewCmd ? { review: reviewSetup(p, iteration) } : {}),
  };
}

/** The reviewer of this loop (verify/review.ts): its command, its instructions' path, and where its diff starts. */
function reviewSetup(p: Pipeline, iteration: number): ReviewSetup {
  const { run, state, trust } = p;
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
    retryBaseMs: p.wiring.retryBaseMs,
    base: trust.lastReviewed ?? trust.pins?.commit ?? null,
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
    run.emit({
      type: 'info',
      iteration,
      message: `the reviewer's run cost ${renderUsd(costUsd)} · cost so far ${renderUsd(state.costUsd)} (reviewer ${renderUsd(state.reviewCostUsd)})`,
    });
  }
  writeState(run.paths.repoRoot, state);
}

/** One pass over the claims (verify/verify.ts), then what follows every pass: the new baseline and the SHIPs kept. */
export async function verifyClaims(p: Pipeline, claims: Claims, signal: AbortSignal): Promise<VerifyResult> {
  const { trust } = p;
  const { violation } = claims;
  const result = await verifyIteration({
    ...verifyInput(p, claims.iteration, signal),
    prdBefore: claims.prdBefore,
    headAfterAgent: claims.head,
    offBranch: claims.offBranch,
    // The settled baseline parsed, when it is this iteration's plan: a plan left as it was is not parsed again.
    ...(trust.baselinePrd && claims.prdBefore === trust.baseline
      ? { prdBeforeParsed: trust.baselinePrd, prdBeforeBytes: trust.baselineBytes }
      : {}),
    ...(violation ? { violation: violation.reason } : {}),
    ...(violation || claims.ownFiles?.length
      ? { extraOwnFiles: [...(violation?.files ?? []), ...(claims.ownFiles ?? [])] }
      : {}),
    ...(claims.ownStatus ? { ownStatus: claims.ownStatus } : {}),
    ...(claims.planEditHint ? { planEditHint: claims.planEditHint } : {}),
    ...(claims.ownersWord ? { ownersWord: true } : {}),
  });
  await afterVerification(p, result, claims.head);
  return result;
}

/** After a verification pass: the new baseline, and where each accepted claim was verified. */
export async function afterVerification(p: Pipeline, result: VerifyResult, head: string | null): Promise<void> {
  const { run, trust } = p;
  const loopId = p.state.id;
  for (const v of result.verdicts) {
    if (v.shipped) trust.reviewed.push(v.shipped);
    if (v.shipped && v.status !== 'rejected') trust.shipped.set(v.id, v.shipped);
    else trust.shipped.delete(v.id);
    if (v.status === 'rejected' || !head) continue;
    if (v.status === 'verified') trust.verifiedAt.set(v.id, head);
    if (v.shipped) trust.lastReviewed = v.shipped.commit;
  }
  // An empty record where none was written says nothing new: a loop without a reviewer writes none.
  if (result.verdicts.length && head && trust.verdictKey && (trust.shipped.size || trust.shippedRecorded)) {
    trust.shippedRecorded = true;
    // Kept for a resume: its final gate seals these SHIPs again (verify/shipped.ts).
    await recordShipped(trust.topLevel, loopId, head, trust.shipped, trust.verdictKey).catch((err: Error) =>
      run.emit({
        type: 'warn',
        message: `could not record the reviewer's SHIPs in git (refs/ralphkit): ${err.message}; after a resume they show as reported`,
      }),
    );
  }
  await settleBaseline(run.paths, loopId, trust, run.emit, result.prd);
}

/** The final gate of the loop (verify/final-gate.ts) on the plan as last settled, then its verdicts as the new baseline. */
export async function finalGate(p: Pipeline, iteration: number, signal: AbortSignal): Promise<GateOutcome> {
  const { run, trust } = p;
  const gate = await runFinalGate({
    ...verifyInput(p, iteration, signal),
    prd: JSON.parse(trust.baseline ?? readFileNoWait(run.paths.prd).toString('utf8')) as Prd,
    verifiedAt: trust.verifiedAt,
    shipped: trust.shipped,
    reviewed: trust.reviewed,
    verdictKey: trust.verdictKey,
    weak: trust.weak,
  });
  if (!gate.interrupted) await settleBaseline(run.paths, p.state.id, trust, run.emit, gate.prd);
  trust.gatePassed =
    gate.passed && gate.commit
      ? { commit: gate.commit, allVerified: gate.verdicts.every((v) => v.status === 'verified') }
      : undefined;
  return gate;
}
