// How a loop ends, in words: every story passing, an interrupt, and the command that continues a stopped loop
// (the limits' words are limits.ts').
import type { Prd } from '../../prd/types.js';
import { activeStories } from '../../prd/skip.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';

/**
 * The words for exit 0. A story no check covers was accepted on the agent's word (SPEC §6), so "under verification"
 * would overstate it; how many such stories there are is a property of the plan.
 */
export function renderAllPass(prd: Prd, weak: readonly string[] = []): string {
  return `${renderPassing(prd)}${renderWeak(weak)}`;
}

/** Stories verified only by checks that passed before any work: named, since their checks proved nothing about them. */
function renderWeak(weak: readonly string[]): string {
  if (!weak.length) return '';
  const list = weak.length > 10 ? `${weak.slice(0, 10).join(', ')} and ${weak.length - 10} more` : weak.join(', ');
  return `; ${list} verified (weak check): ${weak.length === 1 ? 'its check' : 'their checks'} passed on the plan commit before any work, so read ${weak.length === 1 ? 'that story' : 'those stories'} yourself`;
}

function renderPassing(prd: Prd): string {
  const planChecks = (prd.checks ?? []).length > 0;
  const stories = activeStories(prd.userStories);
  const skipped = prd.userStories.length - stories.length;
  // Set-aside stories were neither worked on nor checked: said apart, so "all stories" never hides them.
  const aside = skipped ? `; ${skipped} set aside (skip), not worked on` : '';
  const unverified = stories.filter((s) => !planChecks && !(s.checks ?? []).length).length;
  if (!unverified) return `all stories pass under verification${aside}`;
  const verified = stories.length - unverified;
  const word = `${unverified} unverified: accepted on the agent's word`;
  return verified
    ? `all stories pass (${verified} under verification, ${word})${aside}`
    : `all stories pass (${word})${aside}`;
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted)
    throw new LoopExit(
      LOOP_EXIT.interrupted,
      'interrupted; state saved',
      'continue with: ./ralph/ralph.sh --resume-last',
    );
}

/** The command that continues a loop stopped at `ran` iterations, with a concrete higher max (never a placeholder). */
export function renderResumeCommand(id: string | null, ran: number): string {
  // Half as many again, at least 5: 10 → 15, 3 → 8, 100 → 150.
  const more = ran + Math.max(5, Math.ceil(ran / 2));
  return `./ralph/ralph.sh ${id ? `--resume ${id}` : '--resume-last'} ${more}`;
}
