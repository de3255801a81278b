// `ralphkit cleanup` once commander has parsed it: removes the leftover worktrees of stopped --worktree loops and the
// verification checkouts of killed runners.
import { RalphkitError } from '../errors.js';
import { logger } from '../logger.js';
import { LoopExit } from '../engine/errors.js';
import { resolveGitRoot } from '../cwd.js';
import { sanitizeForTerminal } from '../util/ansi.js';
import { cleanupWorktrees } from '../engine/git/worktree.js';

export async function cleanupAction(opts: { cwd?: string }): Promise<void> {
  try {
    const said = await cleanupWorktrees(await resolveGitRoot(opts.cwd ?? process.cwd()));
    if (!said.length) logger.info('nothing of stopped loops to remove (no worktrees, no verification checkouts)');
    for (const line of said) logger.info(sanitizeForTerminal(line));
  } catch (err) {
    if (err instanceof LoopExit) throw new RalphkitError(err.message, { exitCode: err.code, hint: err.hint });
    throw err;
  }
}
