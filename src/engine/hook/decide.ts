// Pure: what one stop of an in-session loop decides once its claims are verified, and the words the session is
// sent back with. The count on disk decides the limit, never the hook input (`stop_hook_active`) or the transcript.
import type { LoopStatus } from '../store/state-types.js';
import type { Tag } from '../core/tags.js';
import { renderTag } from '../core/tags.js';
import { renderAllPass } from '../core/exits.js';
import { isSettled } from '../../prd/skip.js';
import { renderSessionPlanEditHint, type StopOutcome } from './verify-stop.js';

export type StopDecision =
  | { allow: true; status: LoopStatus; exitCode: number; message: string }
  | { allow: false; reason: string };

export interface StopFacts {
  /** The loop's id, for the plan-edit hint. */
  id: string;
  iteration: number;
  /** The stops this loop may count (session.ts planStopLimit). */
  limit: number;
  outcome: StopOutcome;
  /** The tag the session's last message ends with (core/tags.ts detectTag). */
  tag: Tag | null;
  completionPromise: string;
}

export function decideStop(f: StopFacts): StopDecision {
  const open = f.outcome.prd.userStories.filter((s) => !isSettled(s)).map((s) => s.id);
  const undone = renderUndonePlanEdits(f);
  if (f.outcome.allPass)
    return { allow: true, status: 'complete', exitCode: 0, message: renderAllPass(f.outcome.prd) + undone };
  if (f.tag === 'stuck')
    return {
      allow: true,
      status: 'stuck',
      exitCode: 3,
      message: `the session said it is STUCK at iteration ${f.iteration}; open: ${open.join(', ')}${undone}`,
    };
  if (f.iteration >= f.limit) {
    return {
      allow: true,
      status: 'max-iterations',
      exitCode: 1,
      message: `stopped at the loop's limit (${f.limit} stop${f.limit === 1 ? '' : 's'}) with stories still open: ${open.join(', ')}${undone}`,
    };
  }
  return { allow: false, reason: renderBlockReason(f, open) };
}

/**
 * Plan edits other than passes and notes were undone against the plan the loop started from, whoever made them (an
 * owner's commit mid-session too): said where the session and the user read it, with how the owner changes the plan.
 */
function renderUndonePlanEdits(f: StopFacts): string {
  if (!f.outcome.restored.length) return '';
  return `; prd.json: only passes and notes may change during the loop, so these edits were undone: ${f.outcome.restored.join('; ')} (to change the plan yourself: ${renderSessionPlanEditHint(f.id)})`;
}

/** Why the stop was refused: the rejected claims with their reasons, what is still open, then what to do. */
function renderBlockReason(f: StopFacts, open: string[]): string {
  const lines = [
    `ralph: the in-session loop is not done (iteration ${f.iteration} of at most ${f.limit}), so this stop was refused.`,
  ];
  const rejected = [...f.outcome.verdicts, ...f.outcome.gateRejected].filter((v) => v.status === 'rejected');
  if (rejected.length) {
    lines.push(
      '',
      "Rejected (set back to passes: false; the reasons are also in each story's notes and at the end of ralph/progress.txt):",
    );
    for (const v of rejected) lines.push(`- ${v.id}: ${v.reason ?? 'rejected'}`);
  }
  if (f.outcome.restored.length) {
    lines.push(
      '',
      'Undone in ralph/prd.json (only passes and notes may change during the loop; the plan is as the loop started it):',
    );
    for (const r of f.outcome.restored) lines.push(`- ${r}`);
    lines.push(`If the user changed the plan, tell them: ${renderSessionPlanEditHint(f.id)}.`);
  }
  const accepted = f.outcome.verdicts.filter((v) => v.status !== 'rejected').map((v) => v.id);
  if (accepted.length) lines.push('', `Verified: ${accepted.join(', ')}.`);
  if (f.tag === 'complete')
    lines.push(
      '',
      `You ended with ${renderTag(f.completionPromise)}, but these stories are not verified: ${open.join(', ')}.`,
    );
  lines.push('', `Still open: ${open.join(', ')}. Take the next one now, following the loop's instructions below.`);
  return lines.join('\n');
}

/** What the user is told in the session when its loop ends: how, after how many stops, and what to type next. */
export function renderEndNotice(id: string, stops: number, status: LoopStatus, message: string): string {
  const head = `ralph: the in-session loop ended (${status}) after ${stops} stop${stops === 1 ? '' : 's'}: ${message}.`;
  if (status === 'complete') return head;
  const log =
    status === 'failed' || status === 'interrupted' ? `; what each stop checked is in ralph/.runs/${id}/hook.log` : '';
  return `${head} Type /ralph-loop to start it again${log}.`;
}
