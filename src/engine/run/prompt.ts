// The prompt between iterations: what the agent reads (the file, and a note when the plan lives elsewhere),
// and the owner's edits to it, which the runner commits before an iteration so they never count as the agent's work.
import path from 'node:path';
import type { RunContext, RunPaths } from '../types.js';
import { runGit } from '../git/git.js';
import { readFileAt } from '../git/read.js';
import { relPath } from '../../util/repo-path.js';
import { readBytesOrNull, readOwnTextOrNull } from '../../util/read.js';
import { readPromptBytes } from '../plan-file.js';
import { relToTop } from '../../util/repo-path.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { describeError, guardWrite, LoopFailure } from '../errors.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * The prompt's text when it lives in the repository and differs from HEAD (edited, or never committed); else null.
 * Read at start and again before every agent run (run/upkeep.ts), because owners steer a running loop by editing it.
 */
export async function readEditedPrompt(
  paths: RunPaths,
  atHead: (rel: string) => Promise<string | null> = (rel) => readFileAt(paths.repoRoot, 'HEAD', rel),
): Promise<string | null> {
  const promptRel = relPath(paths.repoRoot, paths.prompt);
  if (promptRel.startsWith('../') || path.isAbsolute(promptRel)) return null;
  const text = readOwnTextOrNull(paths.prompt);
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

// An agent (or a reset it ran) can remove the prompt; that ends the loop with a message, not a Node stack.
export function readPrompt(run: RunContext, iteration: number): string {
  try {
    return readPromptBytes(run.paths).toString('utf8');
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
export async function restorePrompt(
  run: RunContext,
  topLevel: string,
  hold: PromptHold,
  iteration: number,
): Promise<string[]> {
  const held = hold.bytes;
  hold.bytes = undefined;
  if (!held) return [];
  const now = readBytesOrNull(run.paths.prompt);
  if (now?.equals(held)) return [];
  guardWrite(
    run.paths.prompt,
    run.paths.repoRoot,
    () => atomicWriteFileSync(run.paths.prompt, held),
    'the agent changed the prompt and it could not be put back',
  );
  const rel = relToTop(topLevel, run.paths.prompt);
  run.emit({
    type: 'warn',
    iteration,
    message: `the agent ${now === null ? 'deleted' : 'changed'} ${rel}, the instructions every iteration gets; put it back as it was when the agent started (an edit made while an agent runs is the agent's; to steer the loop, edit the prompt while no agent runs: between iterations or before --resume-last, and the runner commits it)`,
  });
  if (rel.startsWith('../') || (await isIgnored(run.paths.repoRoot, run.paths.prompt))) return [];
  return [rel];
}
