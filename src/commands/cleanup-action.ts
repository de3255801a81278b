// `ralphkit cleanup` once commander has parsed it: removes the leftover worktrees of stopped --worktree loops and the
// verification checkouts of killed runners.
import { logger } from '../logger.js';
import { resolveGitRoot } from '../cwd.js';
import { sanitizeForTerminal } from '../util/ansi.js';
import { cleanupWorktrees } from '../engine/git/worktree.js';

export async function cleanupAction(opts: { cwd?: string }): Promise<void> {
  const said = await cleanupWorktrees(await resolveGitRoot(opts.cwd ?? process.cwd()));
  if (!said.length) logger.info('nothing of stopped loops to remove (no worktrees, no verification checkouts)');
  for (const line of said) logger.info(sanitizeForTerminal(line));
}
