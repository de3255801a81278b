// The plan branch's own files in a --parallel run are written by the runner alone: prd.json and progress.txt are never
// merged from story branches. What a worker added to its log since its attempt started reaches the plan's log whole,
// after what is there already (merge order, SPEC §9): lines that repeat across entries (`---`, the same learning) stay,
// and two entries never interleave. Lines it added inside the older part (its `## Codebase Patterns` lines) go to
// the same place in the plan's log, so the next agent on any worker reads them.
import type { Prd } from '../../../prd/types.js';
import { renderPlanText } from '../../../prd/plan-text.js';
import { diffLines } from '../../../util/diff.js';
import { applyRunnerNote } from '../../verify/report.js';

/** The plan's log (`ours`) with what a worker added to its copy since `base` (its log when the attempt started). */
export function mergeLogs(ours: string, base: string, theirs: string): string {
  if (theirs === base) return ours;
  if (ours === base) return theirs;
  if (theirs.startsWith(base)) return joinText(ours, theirs.slice(base.length));
  const baseLines = lines(base);
  // The worker's added lines, each by the number of base lines before it; its deletions (a compaction) are not the plan's.
  const inserts = new Map<number, string[]>();
  let at = 0;
  for (const op of diffLines(baseLines, lines(theirs))) {
    if (op.kind === '+') inserts.set(at, [...(inserts.get(at) ?? []), op.line]);
    else at++;
  }
  const tail = inserts.get(baseLines.length) ?? [];
  inserts.delete(baseLines.length);
  if (!ours.startsWith(base) || !inserts.size)
    return joinText(ours, [...[...inserts.values()].flat(), ...tail].map((l) => `${l}\n`).join(''));
  const head = baseLines.flatMap((line, i) => [...(inserts.get(i) ?? []), line]);
  return joinText(
    joinText(head.map((l) => `${l}\n`).join(''), ours.slice(base.length)),
    tail.map((l) => `${l}\n`).join(''),
  );
}

function lines(text: string): string[] {
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
}

/** `more` after `text`, on a line of its own. */
function joinText(text: string, more: string): string {
  if (!more) return text;
  return text === '' || text.endsWith('\n') ? text + more : `${text}\n${more}`;
}

/** The plan with one story's outcome: `passes` as the merge queue decided, and its notes as the worker left them plus the runner's note. */
export function planWithOutcome(
  prd: Prd,
  id: string,
  passes: boolean,
  workerNotes: string | undefined,
  runnerNote: string | null,
): Prd {
  const next = structuredClone(prd);
  const story = next.userStories.find((s) => s.id === id);
  if (!story) return next;
  story.passes = passes;
  const notes = applyRunnerNote(workerNotes ?? story.notes, runnerNote);
  if (notes) story.notes = notes;
  else delete story.notes;
  return next;
}

/** The plan's file with `next` written over its text `before`: only passes and notes edited, the owner's formatting kept. */
export function renderPlan(before: string | null, next: Prd): string {
  return renderPlanText(before, next);
}

/** The log entry of a story the merge queue sent back: why, and where the next attempt starts. */
export function renderSentBack(time: Date, id: string, title: string, reason: string, planTip: string): string {
  return [
    '',
    `## ${time.toISOString()} - ralph: ${id} sent back by the merge queue`,
    `Story: ${id} ${title}`,
    `Reason: ${reason}`,
    `The next attempt starts from the plan branch as it is now (${planTip.slice(0, 7)}).`,
    '---',
    '',
  ].join('\n');
}
