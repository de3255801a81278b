// The runner's own upkeep around an agent run: progress.txt compaction before it, the note an iteration killed at
// its timeout leaves for the next one, and the runner's commits of its own files.
import { appendOwnFileSync } from '../../util/atomic.js';
import type { AgentResult, RunContext } from '../types.js';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { readFileAt } from '../git/read.js';
import { tryCommitRunnerFiles } from '../git/commit.js';
import type { RefsView } from './refs-view.js';
import { formatDuration } from '../core/duration.js';
import { renderTimeoutBlock } from '../verify/report.js';
import { applyCompaction } from '../store/progress.js';
import { iterationLogPath } from '../store/layout.js';
import { guardWrite, refuseLinkedFolders } from '../errors.js';
import { readFileTail } from '../agents/tail.js';
import { isIgnored, readEditedPrompt, renderPromptCommitPart, renderPromptEditNote } from './prompt.js';

/** Before each agent run: progress.txt compacted when it grew too large, and the owner's prompt edits committed. */
export async function beforeAgent(
  run: RunContext,
  iteration: number,
  refs: RefsView,
  promptAt: PromptCache,
): Promise<void> {
  const { paths } = run;
  refs.hold(null);
  const moved = guardWrite(
    paths.progress,
    paths.repoRoot,
    // Old entries move into ralph/archive/: only through folders of the repository, like the log itself.
    () => applyCompaction(paths.progress, new Date(), undefined, (file) => refuseLinkedFolders(file, paths.repoRoot)),
    'progress.txt could not be compacted',
  );
  if (moved)
    await commitOwn(
      run,
      [moved, paths.progress],
      'chore(ralph): compact progress.txt',
      `progress.txt compacted; older entries moved to ${path.relative(paths.repoRoot, moved)}`,
    );
  const now = await refs.read();
  // A prompt commit moves HEAD: the loop then asks git again.
  if (!(await commitPromptEdits(run, iteration, now.head, promptAt))) refs.hold(now);
}

/** The prompt's committed text at one commit and path (a commit never changes), kept until HEAD moves. */
export interface PromptCache {
  at: { key: string; text: string | null } | null;
}

/** A run killed at --iteration-timeout leaves a note in progress.txt and a trailer in its log for the next agent. */
export function recordTimeout(run: RunContext, loopId: string, iteration: number, result: AgentResult): void {
  const { paths, options } = run;
  const log = iterationLogPath(paths.repoRoot, loopId, iteration);
  const output = readFileTail(log, 64 * 1024) ?? `${result.stdout}\n${result.stderr}`;
  const timeout = formatDuration(options.iterationTimeoutMs);
  const block = renderTimeoutBlock(new Date(), iteration, timeout, output);
  guardWrite(
    paths.progress,
    paths.repoRoot,
    () => appendOwnFileSync(paths.progress, block),
    'the timeout note for the next iteration could not be written',
  );
  try {
    appendFileSync(
      log,
      `\n[ralph] iteration ${iteration} timed out after ${timeout}; the agent and everything it started were killed\n`,
    );
  } catch {
    /* the log is a record; progress.txt already carries the note */
  }
}

/** Commits the runner's own files; a commit git refuses is a warning, never the end of the loop. */
export async function commitOwn(run: RunContext, files: string[], message: string, note?: string): Promise<void> {
  const rel = [...new Set(files.map((f) => path.relative(run.paths.repoRoot, f)))];
  let failed = false;
  const sha = await tryCommitRunnerFiles(run.paths.repoRoot, rel, message, (reason) => {
    failed = true;
    run.emit({ type: 'warn', message: `could not commit ${rel.join(', ')}: ${reason}` });
  });
  if (failed) return;
  if (note) run.emit({ type: 'info', message: note });
  if (sha) run.emit({ type: 'info', message: `committed ${rel.join(', ')} as ${sha.slice(0, 7)}` });
}

/**
 * Owners steer a running loop by editing the prompt; left uncommitted, that edit would reject the next claim as
 * uncommitted work, or be swept into the agent's own commit. Committed here, before HEAD is read for the
 * iteration, so it never counts as the agent's progress. A prompt git ignores has nothing to commit.
 */
async function commitPromptEdits(
  run: RunContext,
  iteration: number,
  head: string | null,
  promptAt: PromptCache,
): Promise<boolean> {
  const { paths } = run;
  const atHead = async (rel: string): Promise<string | null> => {
    if (head === null) return null;
    const key = `${head}:${rel}`;
    if (promptAt.at?.key !== key) promptAt.at = { key, text: await readFileAt(paths.repoRoot, head, rel) };
    return promptAt.at.text;
  };
  if ((await readEditedPrompt(paths, atHead)) === null || (await isIgnored(paths.repoRoot, paths.prompt))) return false;
  await commitOwn(
    run,
    [paths.prompt],
    `chore(ralph): ${renderPromptCommitPart(paths)}`,
    renderPromptEditNote(paths, `iteration ${iteration}`),
  );
  return true;
}
