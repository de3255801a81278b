// The prompt between iterations: what the agent reads (the file, and a note when the plan lives elsewhere),
// and the owner's edits to it, which the runner commits before an iteration so they never count as the agent's work.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunContext, RunOptions, RunPaths } from '../types.js';
import { DEFAULT_COMPLETION, renderTag } from '../core/tags.js';
import type { Prd } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { readFileAt, runGit } from '../git/git.js';
import { relPath } from '../../util/repo-path.js';
import { readBytesOrNull, readTextOrNull } from '../../util/read.js';
import { relToTop } from '../../util/repo-path.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { describeError, guardWrite, LoopFailure } from '../errors.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * The prompt's text when it lives in the repository and differs from HEAD (edited, or never committed); else null.
 * Read at start and again before every agent run (run/upkeep.ts), because owners steer a running loop by editing it.
 */
export async function readEditedPrompt(paths: RunPaths, atHead: (rel: string) => Promise<string | null> = (rel) => readFileAt(paths.repoRoot, 'HEAD', rel)): Promise<string | null> {
  const promptRel = relPath(paths.repoRoot, paths.prompt);
  if (promptRel.startsWith('../') || path.isAbsolute(promptRel)) return null;
  const text = readTextOrNull(paths.prompt);
  return text !== null && text !== (await atHead(promptRel)) ? text : null;
}

/** A file git ignores (and does not track) is nobody's uncommitted work and is never committed. */
export async function isIgnored(repoRoot: string, file: string): Promise<boolean> {
  return (await runGit(repoRoot, ['check-ignore', '-q', '--', relPath(repoRoot, file)])).code === 0;
}

/** The runner's commit of the owner's prompt edits, at start and between iterations: `chore(ralph): <this>`. */
export function renderPromptCommitPart(paths: RunPaths): string {
  return `commit the edits to ${relPath(paths.repoRoot, paths.prompt)}`;
}

export function renderPromptEditNote(paths: RunPaths, before: string): string {
  return `${relPath(paths.repoRoot, paths.prompt)} has uncommitted edits: the runner commits them before ${before}, so they are not taken for the agent's work`;
}

/**
 * The runner's preamble (SPEC §4): what the agent must know beyond the owner's prompt.md, added in memory when the
 * prompt is sent (the file is never rewritten). Empty for a loop with the defaults. `plan` is the runner's baseline.
 */
export function renderPreamble(paths: RunPaths, options: Pick<RunOptions, 'completionPromise'>, plan: Prd | undefined): string {
  return renderPathNote(paths) + renderCompletionNote(options.completionPromise) + renderSkipNote(plan);
}

/**
 * A worker of a --parallel run works on one story, named here (and in RALPH_STORY_ID): the installed prompt says to
 * pick the first open story, which several workers would all do at once, and to work on the plan's branch, which
 * the integration tree holds (git refuses to check it out in a second tree).
 */
export function renderStoryNote(story: StoryNote): string {
  return `Note from the runner: ${story.workers} agents work on this plan at the same time, each in a worktree of its own; your story is ${story.id} (${story.title}). Work on it only, and set passes: true for it only; a claim of any other story is rejected, since another agent has it. The stories it depends on are already merged into your branch. Wherever these instructions say to pick a story, take ${story.id}. RALPH_STORY_ID names it too. Your branch is \`${story.branch}\`: stay on it and commit there. Wherever these instructions say to work on the plan's branch (\`${story.planBranch}\`), that means yours; do not check out \`${story.planBranch}\` (the runner merges your branch into it once it has verified your work).\n\n`;
}

/** The story a --parallel worker's agent works on, and the branches it works on and for. */
export interface StoryNote {
  id: string;
  title: string;
  workers: number;
  branch: string;
  planBranch: string;
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

// An agent (or a reset it ran) can remove the prompt; that ends the loop with a message, not a Node stack.
export function readPrompt(run: RunContext, iteration: number): string {
  try {
    return readFileSync(run.paths.prompt, 'utf8');
  } catch (err) {
    const rel = path.relative(run.paths.repoRoot, run.paths.prompt).split(path.sep).join('/');
    throw new LoopFailure(
      `could not read the prompt ${rel} (${describeError(err as Error)}) before iteration ${iteration}`,
      `restore it (git checkout ${shellQuote(run.branch)} -- ${shellQuote(rel)}, or find it with git log --all -- ${shellQuote(rel)}), commit it, then continue with: ./ralph/ralph.sh --resume-last`,
    );
  }
}


/** The prompt's bytes when the agent started (null: none): what it reads, and what the runner puts back after it. */
export interface PromptHold {
  bytes?: Buffer | null;
}

export function holdPrompt(paths: RunPaths, hold: PromptHold): void {
  hold.bytes = readBytesOrNull(paths.prompt);
}

/**
 * After an agent run: a prompt the agent changed (edited, committed, deleted) is put back as it was when it started,
 * so its words never reach a later iteration; the owner edits it between iterations, and those edits stand.
 * Returns the repository path to commit with the runner's files (empty when nothing changed or it is not tracked).
 */
export async function restorePrompt(run: RunContext, topLevel: string, hold: PromptHold, iteration: number): Promise<string[]> {
  const held = hold.bytes;
  hold.bytes = undefined;
  if (!held) return [];
  const now = readBytesOrNull(run.paths.prompt);
  if (now?.equals(held)) return [];
  guardWrite(run.paths.prompt, run.paths.repoRoot, () => atomicWriteFileSync(run.paths.prompt, held), 'the agent changed the prompt and it could not be put back');
  const rel = relToTop(topLevel, run.paths.prompt);
  run.emit({ type: 'warn', iteration, message: `the agent ${now === null ? 'deleted' : 'changed'} ${rel}, the instructions every iteration gets; put it back as it was when the agent started (an edit made while an agent runs is the agent's; to steer the loop, edit the prompt while no agent runs: between iterations or before --resume-last, and the runner commits it)` });
  if (rel.startsWith('../') || (await isIgnored(run.paths.repoRoot, run.paths.prompt))) return [];
  return [rel];
}
