// One stop of an in-session loop, verified exactly as an iteration of the runner (SPEC §6, §12): the claims are the
// stories flipped to `passes: true` against the loop's baseline in refs/ralphkit/, checked in a fresh checkout of
// HEAD with the tests pinned at the plan commit, through the runner's own pipeline (verify/pipeline.ts: the claims,
// then the final gate), after the loop's refs are held against their seal as a resume holds them
// (verify/resume-anchors.ts). Nothing of the session's transcript is read.
import { realpathSync } from 'node:fs';
import type { Prd } from '../../prd/types.js';
import type { LoopState } from '../store/state-types.js';
import type { RunContext } from '../types.js';
import type { StoryVerdict } from '../verify/types.js';
import { headSha } from '../git/head.js';
import { readBaseline } from '../verify/baseline.js';
import { establishTrust } from '../verify/trust.js';
import { holdResumeAnchors, renderPutBack } from '../verify/resume-anchors.js';
import { finalGate, verifyClaims, type Pipeline, type PipelineWiring } from '../verify/pipeline.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { loopCommand } from '../../util/invocation.js';

export interface StopOutcome {
  verdicts: StoryVerdict[];
  /** The plan as verification left it (rejected claims back to false). */
  prd: Prd;
  /** Every story verified, and the final gate passed on this commit. */
  allPass: boolean;
  /** Stories the final gate found broken on this commit (they passed before). */
  gateRejected: StoryVerdict[];
  /** Edits to prd.json other than passes and notes, undone (an owner's committed edit too): said in the session. */
  restored: string[];
}

/**
 * A session's loop has no sandbox and no reviewer (sessionOptionsOf keeps neither option): its checks run as the
 * runner's do without --sandbox, and the reviewer's back-off is never read.
 */
const SESSION_WIRING: PipelineWiring = { sandbox: () => undefined, retryBaseMs: 0 };

/** Thrown when the deadline stopped the checks: nothing was decided about the claims. */
export class VerificationTimedOut extends Error {}

export async function verifySessionStop(
  run: RunContext,
  state: LoopState,
  iteration: number,
  signal: AbortSignal,
): Promise<StopOutcome> {
  const top = realpathSync(run.paths.repoRoot);
  // Before anything reads them: the pins and the plan record are what this loop sealed (hook start, the last stop).
  await holdResumeAnchors(top, run.id, run.options, run.emit, renderSessionAnchorHint);
  const baseline = await readBaseline(top, run.id);
  if (baseline === null)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `the loop's plan record (refs/ralphkit/loops/${run.id}/plan) is gone, so its claims cannot be judged`,
      'start the loop again: /ralph-loop',
    );
  const trust = Object.assign(await establishTrust(run.paths, top, run.id, true, run.options, baseline, run.emit), {
    recorded: true,
  });
  const pipeline: Pipeline = { run, state, trust, wiring: SESSION_WIRING };
  const head = await headSha(run.paths.repoRoot);
  let result;
  try {
    result = await verifyClaims(
      pipeline,
      { iteration, prdBefore: baseline, head, planEditHint: renderSessionPlanEditHint(run.id) },
      signal,
    );
  } catch (err) {
    if (err instanceof LoopExit && err.code === LOOP_EXIT.interrupted) throw new VerificationTimedOut(err.message);
    throw err;
  }
  const restored = result.restored;
  if (!result.allPass)
    return { verdicts: result.verdicts, prd: result.prd, allPass: false, gateRejected: [], restored };
  // Every story says passes: only the final gate on this commit turns that into the end of the loop (as core/loop.ts).
  const gate = await finalGate(pipeline, iteration, signal);
  if (gate.interrupted) throw new VerificationTimedOut('interrupted during the final gate');
  const gateRejected = gate.verdicts.filter((v) => v.status === 'rejected');
  return {
    verdicts: result.verdicts,
    prd: gate.passed ? result.prd : gate.prd,
    allPass: gate.passed,
    gateRejected,
    restored,
  };
}

/** What the owner types when a session loop's refs moved: put the loop's own back, or start a new loop. */
export function renderSessionAnchorHint(
  loopId: string,
  sealed: { pins: string | null; plan: string | null } | null,
): string {
  const back = renderPutBack(loopId, sealed);
  return `${back ? `if you did not move them, put the loop's own back (${back}) and type /ralph-loop to start a new loop on the same plan; ` : ''}otherwise start a new loop from the plan as committed now: /ralph-loop`;
}

/** How the owner changes the plan of an in-session loop: never the runner's --resume-last. */
export function renderSessionPlanEditHint(id: string): string {
  return `end this loop (${loopCommand(`cancel ${id}`)}), commit the plan, then type /ralph-loop to start a new one from it`;
}
