// The plan branch's own files in a --parallel run are written by the runner alone: prd.json and progress.txt are never
// merged from story branches. A worker's progress entries reach the plan's log by a union merge (each side's new
// lines kept, in merge order), so nothing one worker wrote is lost or overwritten by another; its `## Codebase
// Patterns` lines included, which the next agent on any worker then reads.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../../prd/types.js';
import { gitOk } from '../../git/git.js';
import { applyRunnerNote } from '../../verify/report.js';
import { makeTempFolder } from '../../store/temp-folders.js';

/**
 * The plan's log with what a worker added to its copy since `base` (its log at the start of the attempt): git's
 * union merge, so lines both sides added are all kept, ours first.
 */
export async function mergeLogs(cwd: string, ours: string, base: string, theirs: string): Promise<string> {
  if (theirs === base) return ours;
  if (ours === base) return theirs;
  const dir = makeTempFolder('ralphkit-log');
  try {
    const files = [['ours', ours], ['base', base], ['theirs', theirs]].map(([name, text]) => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    });
    return await gitOk(cwd, ['merge-file', '-p', '--union', ...files]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The plan with one story's outcome: `passes` as the merge queue decided, and its notes as the worker left them plus the runner's note. */
export function planWithOutcome(prd: Prd, id: string, passes: boolean, workerNotes: string | undefined, runnerNote: string | null): Prd {
  const next = structuredClone(prd);
  const story = next.userStories.find((s) => s.id === id);
  if (!story) return next;
  story.passes = passes;
  const notes = applyRunnerNote(workerNotes ?? story.notes, runnerNote);
  if (notes) story.notes = notes;
  else delete story.notes;
  return next;
}

export function renderPlan(prd: Prd): string {
  return `${JSON.stringify(prd, null, 2)}\n`;
}

/** The log entry of a story the merge queue sent back: why, and where the next attempt starts. */
export function renderSentBack(time: Date, id: string, title: string, reason: string, planTip: string): string {
  return ['', `## ${time.toISOString()} - ralph: ${id} sent back by the merge queue`, `Story: ${id} ${title}`, `Reason: ${reason}`, `The next attempt starts from the plan branch as it is now (${planTip.slice(0, 7)}).`, '---', ''].join('\n');
}
