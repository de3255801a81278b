// Claims at start: stories that already say `passes: true` without the runner's record behind them are verified
// before iteration 1, so a plan cannot end the loop with 0 on its own word. (An iteration whose checks were
// interrupted is finished first, by the run: run/deps.ts finishResumedIteration.)
import { readFileNoWait } from '../../util/read.js';
import type { Prd } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { headSha } from '../git/head.js';
import type { VerifyResult } from './types.js';
import { verifyClaims, type Pipeline } from './pipeline.js';

/**
 * Verifies the stories that say `passes: true` without the runner's own record behind them (the baseline: none for a
 * new loop, the plan as last settled for a resumed one), in one pass (plan checks run once), recorded as iteration 0.
 * Rejected ones are set back to false with a note, as after any iteration. Returns null when there was nothing to verify.
 */
export async function verifyStartClaims(p: Pipeline, signal: AbortSignal): Promise<VerifyResult | null> {
  const { run, trust } = p;
  const { paths, emit } = run;
  const prd = JSON.parse(readFileNoWait(paths.prd).toString('utf8')) as Prd;
  const settled = new Set(
    trust.baseline
      ? (JSON.parse(trust.baseline) as Prd).userStories.filter((s) => s.passes === true).map((s) => s.id)
      : [],
  );
  // A story set aside is never verified, whatever its passes says (prd/skip.ts).
  const claims = prd.userStories
    .filter((s) => s.passes === true && !isSkipped(s) && !settled.has(s.id))
    .map((s) => s.id);
  if (!claims.length) return null;
  emit({
    type: 'info',
    message: `${claims.length} stor${claims.length === 1 ? 'y says' : 'ies say'} passes: true (${claims.join(', ')}); verifying before the first iteration`,
  });
  const before =
    trust.baseline ??
    `${JSON.stringify({ ...prd, userStories: prd.userStories.map((s) => (claims.includes(s.id) ? { ...s, passes: false } : s)) }, null, 2)}\n`;
  const outcome = await verifyClaims(
    p,
    // A new loop's (no baseline): what the plan commit says is the owner's word. A resumed loop's are the agent's flips.
    { iteration: 0, prdBefore: before, head: await headSha(paths.repoRoot), ownersWord: trust.baseline === null },
    signal,
  );
  emit({
    type: 'verify',
    iteration: 0,
    verdicts: outcome.verdicts,
    restored: outcome.restored,
    allPass: outcome.allPass,
  });
  return outcome;
}
