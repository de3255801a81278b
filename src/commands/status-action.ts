// `ralphkit status` once commander has parsed it: reads every loop's state and prints the table (or JSON).
import { logger } from '../logger.js';
import { resolveGitRoot } from '../cwd.js';
import { RalphkitError } from '../errors.js';
import { LoopExit } from '../engine/errors.js';
import { readLoopSummariesOrRefuse, renderLoopTable, renderUnreadableWarnings, type LoopSummary } from '../engine/store/summaries.js';
import type { StatusCommandOptions } from './status.js';
import { listLeftoverWorktrees, renderLeftovers } from '../engine/git/worktree.js';

export async function statusAction(opts: StatusCommandOptions): Promise<void> {
  const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
  let loops: LoopSummary[];
  try {
    loops = readLoopSummariesOrRefuse(repoRoot);
  } catch (err) {
    if (err instanceof LoopExit) throw new RalphkitError(err.message, { exitCode: err.code, hint: err.hint });
    throw err;
  }
  for (const line of renderUnreadableWarnings(loops)) logger.warn(line);
  const leftovers = await listLeftoverWorktrees(repoRoot).catch(() => []);
  if (opts.json) logger.json({ loops, leftoverWorktrees: leftovers });
  else logger.out(renderLoopTable(loops) + renderLeftovers(leftovers));
}
