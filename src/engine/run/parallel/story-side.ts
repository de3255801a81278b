// What a story branch of a --parallel run says, read from git (never from a worker's tree): the story's notes in its
// plan, and its log with the log it started from, for the merge queue to write the plan branch's own files.
import path from 'node:path';
import type { Prd } from '../../../prd/types.js';
import type { RunPaths } from '../../types.js';
import { readBlobs } from '../../git/read.js';
import { mergeBase } from './merge.js';

export interface StorySide {
  head: string;
  /** Where the story branch left the plan branch (its merge base with the commit it goes onto; empty: none). */
  base: string;
  notes: string | undefined;
  logBase: string;
  log: string;
  /** The plan file as the commit it goes onto has it (null: none there). */
  ontoPlan: string | null;
}

/**
 * Story `id`'s branch at `head`, to go onto `onto`: the story's notes, its log with the log at the merge base, and the
 * plan as `onto` has it.
 */
export async function readStorySide(
  tree: string,
  paths: Pick<RunPaths, 'prd' | 'progress'>,
  id: string,
  head: string,
  onto: string,
): Promise<StorySide> {
  const rel = (file: string) => path.relative(tree, file).split(path.sep).join('/');
  const base = await mergeBase(tree, onto, head);
  const logRel = rel(paths.progress);
  const planRel = rel(paths.prd);
  // The four files in one git process (cat-file --batch).
  const [plan, ontoPlan, log, logBase] = await readBlobs(tree, [
    `${head}:${planRel}`,
    `${onto}:${planRel}`,
    `${head}:${logRel}`,
    ...(base ? [`${base}:${logRel}`] : []),
  ]);
  return {
    head,
    base,
    notes: readNotes(plan?.text ?? null, id),
    logBase: logBase?.text ?? '',
    log: log?.text ?? '',
    ontoPlan: ontoPlan?.text ?? null,
  };
}

/** The story's notes in a plan text from a story branch (any shape: the agent wrote it); undefined when unreadable. */
function readNotes(text: string | null, id: string): string | undefined {
  try {
    const plan = JSON.parse(text ?? 'null') as Prd | null;
    const notes = Array.isArray(plan?.userStories) ? plan.userStories.find((s) => s && s.id === id)?.notes : undefined;
    return typeof notes === 'string' ? notes : undefined;
  } catch {
    return undefined;
  }
}
