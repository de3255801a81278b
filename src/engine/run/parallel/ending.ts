// What a --parallel run decides from its outcomes alone (no git, no processes): which accepted claims another
// worker's guard finding voids, how a run with nothing left to start ends, and the stop that merges nothing more.
import type { AttemptOutcome } from './types.js';
import { LoopExit, LOOP_EXIT } from '../../errors.js';

/**
 * A change to files the runner trusts or to a branch of yours, found and undone at `at` (epoch ms) by the guard of
 * worker `worker`, after the agent of iteration `iteration` (whose own claims that finding rejects on the spot).
 */
export interface FoundChange {
  at: number;
  worker: number;
  iteration: number;
  reason: string;
}

/**
 * The workers share git's configuration, hooks and your branches, so which running agent changed them cannot be told:
 * an accepted claim of an attempt running when another worker's guard found such a change is rejected. Returns `o` itself when
 * nothing changes.
 */
export function rejectOverlapping(o: AttemptOutcome, startedAt: number, found: readonly FoundChange[]): AttemptOutcome {
  if (!o.verdict || o.verdict.status === 'rejected') return o;
  const hit = findOverlap(o.iteration, startedAt, found);
  if (!hit) return o;
  const reason = `while its agent ran, worker ${hit.worker}'s guard found that ${hit.reason.replace(/^the agent /, 'an agent ')}; the workers share git's configuration, hooks and branches, so no claim made meanwhile counts`;
  return { ...o, verdict: { id: o.story, status: 'rejected', reason } };
}

/** Every open story is given up or waits on one that is: exit 3 when STUCK is behind all of them, else 4. */
export function renderNoWayOn(
  givenUp: Readonly<Record<string, string>>,
  blocked: readonly { id: string; by: string }[],
): LoopExit {
  const given = Object.entries(givenUp);
  const list = [...given.map(([id, why]) => `${id}: ${why}`), ...blocked.map((b) => `${b.id}: waits on ${b.by}`)].join(
    '; ',
  );
  const hint =
    'read the notes of those stories and progress.txt on the plan branch, fix the cause, then --resume-last (stories given up are tried again)';
  if (given.every(([, why]) => why === STUCK))
    return new LoopExit(LOOP_EXIT.stuck, `every story left is stuck or waits on a stuck one (${list})`, hint);
  return new LoopExit(LOOP_EXIT.noProgress, `no story left can make progress (${list})`, hint);
}

/** A stop that must not merge anything more: the plan branch moved, or an agent rewrote history. */
export class ProtectedStop extends LoopExit {
  constructor(readonly exit: LoopExit) {
    super(exit.code, exit.message, exit.hint);
  }
}

/** Why a story is given up when its agent said STUCK. */
export const STUCK = 'the agent said it is STUCK';

/**
 * A guard finding since the attempt of `iteration` started at `startedAt`, but that attempt's own, if any. Told by the
 * attempt, not the worker: a later attempt of the same worker counts too (the work may be judged again after it).
 */
export function findOverlap(
  iteration: number,
  startedAt: number,
  found: readonly FoundChange[],
): FoundChange | undefined {
  return found.find((v) => v.at >= startedAt && v.iteration !== iteration);
}
