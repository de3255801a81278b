// What the final gate decides from its check results (SPEC §6), without git or processes: the reason a story is
// rejected, and the plan and commit message that undo the rejected claims. final-gate.ts runs the checks and writes.
import type { Prd } from '../../prd/types.js';
import type { StoryVerdict } from './types.js';
import { applyRunnerNote, renderPinnedChanges, type PinOwnerHint } from './report.js';

export interface GateFailure {
  /** The commit the gate checked (null: the branch has none). */
  commit: string | null;
  /** Why the story's checks failed there. */
  why: string;
  /** Pinned files the commit changed, which the checks ran with the plan commit's versions of. */
  pinnedChanges: readonly string[];
  /** The plan commit the pins come from. */
  pinCommit: string;
  /** The commit the story's claim was verified at in this run, if it was. */
  verifiedAt?: string;
  /** Who may allow the story to change the pinned files (report.ts). */
  owner?: PinOwnerHint;
}

/** The reason the final gate gives for rejecting a story: where it failed, the pinned changes, and since when it broke. */
export function renderGateReason(f: GateFailure): string {
  const pinned = f.pinnedChanges.length ? ` (${renderPinnedChanges(f.pinnedChanges, f.pinCommit, f.owner)})` : '';
  const since = f.verifiedAt;
  const range =
    since && f.commit && since !== f.commit
      ? `; it passed at ${short(since)}, so a commit since broke it (git log --oneline ${short(since)}..${short(f.commit)})`
      : '';
  return `the final gate at ${f.commit ? short(f.commit) : '(no commit)'}: ${f.why}${pinned}${range}`;
}

export interface GateRejection {
  /** The plan with each rejected story's claim undone and the reason in its notes. */
  prd: Prd;
  /** The rejected stories' ids, in verdict order. */
  ids: string[];
  /** The message of the runner's commit that records the rejections. */
  message: string;
}

/**
 * The gate's outcome on the plan: null when no verdict is a rejection (the gate passed), else the plan to write.
 * `kind` names the rejections in the commit message.
 */
export function planGateRejection(
  prd: Prd,
  verdicts: readonly StoryVerdict[],
  kind = 'check failed',
): GateRejection | null {
  const rejected = verdicts.filter((v) => v.status === 'rejected');
  if (!rejected.length) return null;
  const next = structuredClone(prd);
  for (const v of rejected) {
    const story = next.userStories.find((s) => s.id === v.id);
    if (!story) continue;
    story.passes = false;
    story.notes = applyRunnerNote(story.notes, `rejected: ${v.reason}`);
  }
  const ids = rejected.map((v) => v.id);
  return {
    prd: next,
    ids,
    message: `chore(ralph): final gate rejects ${ids.map((id) => `${id} (${kind})`).join(', ')}`,
  };
}

function short(sha: string): string {
  return sha.slice(0, 7);
}
