// The end of a --parallel run, asked by the coordinator (run.ts) when nothing runs and nothing waits to merge: done
// (the last merge's gate stood as the final gate, or the final gate passes), stopped (a protected stop, an interrupt,
// a limit), waiting out a rate limit, or no way on (ending.ts). Once it ends, but for a protected stop, the plan
// branch's tip is sealed as the run's end: from then on the branch is its owner's.
import { loopSetupCache } from '../../verify/setup-cache.js';
import type { ParallelState } from '../../store/state-types.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';
import { renderAllPass } from '../../core/exits.js';
import { finalGate } from '../deps.js';
import { activeStories } from '../../../prd/skip.js';
import { planSchedule } from './schedule.js';
import { ProtectedStop, renderNoWayOn } from './ending.js';
import type { PlanBranch } from './plan-branch.js';
import type { ParallelInput } from './types.js';

export interface EndContext {
  input: ParallelInput;
  par: ParallelState;
  branch: PlanBranch;
  /** Why no new agent starts, if something stopped them (the run ends with it once the workers are done). */
  stop: LoopExit | null;
  /** No agent ran during the last merge: its gate may stand as the final gate. */
  quietMerge: boolean;
  /** Until when no agent starts, for a rate limit (epoch ms). */
  pausedUntil: number;
  /** Stories that waited for a merge go again, or count their failure (outcomes.ts). */
  releaseStale: () => void;
}

const INTERRUPTED = () =>
  new LoopExit(
    LOOP_EXIT.interrupted,
    'interrupted; every worker stopped, state saved',
    'continue with: ./ralph/ralph.sh --resume-last',
  );

/** Nothing runs and nothing waits to merge: the run is done, or ends with why it cannot go on; null: go on. */
export async function settleEnd(c: EndContext): Promise<LoopExit | null> {
  const end = await settle(c);
  // The run ends with every agent gone and the branch where it left it: from now on the branch is yours.
  if (end && end.code !== LOOP_EXIT.protected) c.branch.sealTip({ ended: true });
  return end;
}

async function settle(c: EndContext): Promise<LoopExit | null> {
  const { input, branch } = c;
  const signal = input.controller.signal;
  // A protected stop outranks an interrupt: a plan branch moved behind the runner's back must not end as a
  // resumable 130, whose resume would build on the moved tip.
  if (c.stop instanceof ProtectedStop) return c.stop.exit;
  // Every agent is gone now: one that moved the plan branch before the run ended (Ctrl-C, a limit) without a merge
  // after it is found here (exit 6), not adopted by the next run as the runner's own tip.
  await branch.refuseMoved();
  if (signal.aborted) return INTERRUPTED();
  c.releaseStale();
  const schedule = planSchedule(branch.plan, new Set(), new Set(Object.keys(c.par.givenUp)));
  if (schedule.done) return settleDone(c);
  if (c.stop) return c.stop;
  if (schedule.ready.length) {
    // Held by a rate limit with nothing else running: wait it out here rather than spin.
    const wait = c.pausedUntil - input.clock.now().getTime();
    if (wait > 0) await input.clock.sleep(wait, signal);
    return null;
  }
  return renderNoWayOn(c.par.givenUp, schedule.blocked);
}

/** Every active story passes on the plan branch: the last merge's gate or the final gate says whether it holds. */
async function settleDone(c: EndContext): Promise<LoopExit | null> {
  const { run, state, trust, controller } = c.input;
  const branch = c.branch;
  // A setup built while an agent ran is not what exit 0 rests on: an agent that served a dependency (a tarball
  // from a server on 127.0.0.1) is gone now. Dropped, so the final gate installs again; its merge gate is no
  // final gate then.
  const rebuilt = loopSetupCache(run.paths.repoRoot, state.id).dropBuiltWhileAgentsRan();
  // The last merge was verified with every story's checks on this very commit: that was the final gate.
  const last = branch.lastGate;
  const active = activeStories(branch.plan.userStories).map((s) => s.id);
  if (!rebuilt && c.quietMerge && last && last.commit === branch.tip && active.every((id) => last.judged.includes(id)))
    // Its weak stories are named as the final gate names them (its sealed record lists them already).
    return new LoopExit(
      LOOP_EXIT.complete,
      renderAllPass(branch.plan, active.filter((id) => trust.weak.has(id)).sort()),
    );
  // The gate writes its verdicts on the plan branch when they fail: a commit of the runner's own.
  const gate = await branch.ownCommit(() => finalGate(run, state, trust, state.iteration, controller.signal));
  if (gate.interrupted) return INTERRUPTED();
  if (gate.passed) return new LoopExit(LOOP_EXIT.complete, renderAllPass(gate.prd, gate.weak));
  // The final gate set the broken stories back (and committed that on the plan branch): they go round again.
  branch.plan = gate.prd;
  return c.stop;
}
