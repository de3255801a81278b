// Before a resumed loop reads its refs (the plan record, the pins): they must be what the runner sealed when it last
// moved them (verify/anchors.ts). Otherwise something else moved them, and the loop stops to protect its work (exit 6):
// moved pins would have the checks run with someone else's tests, a moved plan record would change what a story asks.
import type { RunOptions } from '../loop-options.js';
import type { Emit } from '../events.js';
import { WorkProtected } from '../errors.js';
import { readKey } from '../store/verdict-record.js';
import { checkAnchors, restoreAnchoredRefs, type AnchorValues } from './anchors.js';
import { baselineRef, pinsRef } from './baseline.js';

/** What the owner types when the refs moved (the runner's --resume and --repin by default; the hook has its own). */
export type AnchorHint = (loopId: string, sealed: AnchorValues | null) => string;

export async function holdResumeAnchors(
  repoRoot: string,
  loopId: string,
  options: Pick<RunOptions, 'repin'>,
  emit: Emit,
  hint: AnchorHint = renderHint,
): Promise<void> {
  const check = await checkAnchors(repoRoot, loopId, readKey(false));
  if (check.warning) emit({ type: 'warn', message: check.warning });
  if (!check.problems.length) {
    if (check.sealed) await putBack(repoRoot, loopId, check.sealed);
    return;
  }
  const list = check.problems.map((p) => `  - ${p}`).join('\n');
  if (!options.repin)
    throw new WorkProtected(
      `loop ${loopId}'s own refs are not what the runner recorded when it last moved them:\n${list}\nAn agent (or a person) moved them; continuing would check the work against something the loop did not start with`,
      hint(loopId, check.sealed),
    );
  // --repin: the pins are taken from HEAD again; the plan record goes back to the runner's own when the seal holds.
  emit({
    type: 'warn',
    message: `--repin: loop ${loopId}'s refs were not what the runner recorded:\n${list}\nthe tests are pinned again at HEAD${check.sealed?.plan ? "; the plan record is the runner's own again" : ', and the plan record is taken as it is'}`,
  });
  if (check.sealed?.plan) await putBack(repoRoot, loopId, { pins: null, plan: check.sealed.plan });
}

async function putBack(repoRoot: string, loopId: string, sealed: AnchorValues): Promise<void> {
  try {
    await restoreAnchoredRefs(repoRoot, loopId, sealed);
  } catch (err) {
    throw new WorkProtected(
      `loop ${loopId}: ${(err as Error).message}`,
      `start a new loop: ./ralph/ralph.sh (or pin HEAD's tests on purpose: ./ralph/ralph.sh --resume ${loopId} --repin)`,
    );
  }
}

// Loop ids match LOOP_ID and the values are hex: the commands paste as they are.
function renderHint(loopId: string, sealed: AnchorValues | null): string {
  const back = renderPutBack(loopId, sealed);
  const restore = back
    ? `if you did not move them, put the loop's own back and continue: ${back} && ./ralph/ralph.sh --resume ${loopId}; `
    : '';
  return `${restore}to accept them on purpose (the tests pinned again at HEAD): ./ralph/ralph.sh --resume ${loopId} --repin; or start a new loop: ./ralph/ralph.sh`;
}

/** The git commands that point the loop's refs back at what it sealed ('' when the seal names none). */
export function renderPutBack(loopId: string, sealed: AnchorValues | null): string {
  return [
    sealed?.pins ? `git update-ref ${pinsRef(loopId)} ${sealed.pins}` : null,
    sealed?.plan ? `git update-ref ${baselineRef(loopId)} ${sealed.plan}` : null,
  ]
    .filter(Boolean)
    .join(' && ');
}
