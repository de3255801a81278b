// The runner's preamble (SPEC §4): pure text put before the owner's prompt.md in memory, for the single loop, a
// --parallel worker (its story) and the in-session hook alike.
import path from 'node:path';
import type { RunOptions } from '../loop-options.js';
import type { RunPaths } from '../types.js';
import type { Prd } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { DEFAULT_COMPLETION, renderTag } from './tags.js';

/**
 * The runner's preamble (SPEC §4): what the agent must know beyond the owner's prompt.md, added in memory when the
 * prompt is sent (the file is never rewritten). Empty for a loop with the defaults. `plan` is the runner's baseline.
 */
export function renderPreamble(
  paths: RunPaths,
  options: Pick<RunOptions, 'completionPromise'>,
  plan: Prd | undefined,
): string {
  return renderPathNote(paths) + renderCompletionNote(options.completionPromise) + renderSkipNote(plan);
}

/**
 * A worker of a --parallel run works on one story, named here (and in RALPH_STORY_ID): the installed prompt says to
 * pick the first open story, which several workers would all do at once, and to work on the plan's branch, which
 * the integration tree holds (git refuses to check it out in a second tree).
 */
export function renderStoryNote(story: StoryNote): string {
  return (
    `Note from the runner: ${story.workers} agents work on this plan at the same time, each in a worktree of its own; your story is ${story.id} (${story.title}). Work on it only, and set passes: true for it only; a claim of any other story is rejected, since another agent has it. The stories it depends on are already merged into your branch. Wherever these instructions say to pick a story, take ${story.id}. RALPH_STORY_ID names it too. Your branch is \`${story.branch}\`: stay on it and commit there. Wherever these instructions say to work on the plan's branch (\`${story.planBranch}\`), that means yours; do not check out \`${story.planBranch}\` (the runner merges your branch into it once it has verified your work).\n\n` +
    renderSinceNote(story)
  );
}

/**
 * A story tried again on a newer plan tip (its last attempt failed on a base other stories have moved on from, or
 * conflicted with them): what was merged since, so the agent builds on it rather than redoing or undoing it.
 */
function renderSinceNote(story: StoryNote): string {
  const since = story.mergedSince ?? [];
  if (!since.length) return '';
  const list = since.map((s) => `${s.id} (${s.title})`).join(', ');
  return `Note from the runner: your last attempt at ${story.id} did not pass on the plan as it was then${story.lastFailure ? ` (${story.lastFailure})` : ''}; since it started, the runner merged ${list} onto \`${story.planBranch}\`. Your branch starts from there now: read what they changed (git log) and build on it.\n\n`;
}

/** The story a --parallel worker's agent works on, and the branches it works on and for. */
export interface StoryNote {
  id: string;
  title: string;
  workers: number;
  branch: string;
  planBranch: string;
  /** Stories merged onto the plan branch since this story's last attempt started (a retry on the new tip). */
  mergedSince?: { id: string; title: string }[];
  /** Why the last attempt failed, in a few words (a conflict with both sides named, a failed check). */
  lastFailure?: string;
}

// The installed prompt names ralph/prd.json and ralph/progress.txt; with --prd elsewhere, tell the agent where they are.
function renderPathNote(paths: RunPaths): string {
  const prd = path.relative(paths.repoRoot, paths.prd).split(path.sep).join('/');
  const progress = path.relative(paths.repoRoot, paths.progress).split(path.sep).join('/');
  if (prd === 'ralph/prd.json' && progress === 'ralph/progress.txt') return '';
  return `Note from the runner: in this loop the plan is \`${prd}\` and the progress log is \`${progress}\`. Wherever these instructions say ralph/prd.json or ralph/progress.txt, use those files.\n\n`;
}

// The installed prompt asks for the default tag; a loop with its own word says which one counts.
function renderCompletionNote(word: string): string {
  if (word === DEFAULT_COMPLETION) return '';
  return `Note from the runner: in this loop the completion tag is ${renderTag(word)}. When every story is done, end your final message with it on a line of its own; wherever these instructions say ${renderTag(DEFAULT_COMPLETION)}, use ${renderTag(word)} instead (the runner still checks every story itself).\n\n`;
}

/**
 * Stories the plan sets aside (prd/skip.ts), named for the agent: a prompt.md installed before `skip` existed
 * says to pick any story with `passes: false`. `plan` is the runner's baseline, never the file the agent edits.
 */
function renderSkipNote(plan: Prd | undefined): string {
  const ids = plan ? plan.userStories.filter(isSkipped).map((s) => s.id) : [];
  if (!ids.length) return '';
  const which = ids.length === 1 ? `story ${ids[0]} is` : `stories ${ids.join(', ')} are`;
  return `Note from the runner: ${which} set aside in the plan ("skip"). Do not work on ${ids.length === 1 ? 'it' : 'them'} or change ${ids.length === 1 ? 'its' : 'their'} entries; for dependsOn, ${ids.length === 1 ? 'it counts' : 'they count'} as done.\n\n`;
}
