// `ralphkit status` once commander has parsed it: reads every loop's state and prints the table (or JSON).
import { logger } from '../logger.js';
import { resolveGitRoot } from '../cwd.js';
import {
  readLoopSummariesOrRefuse,
  renderLoopTable,
  renderUnreadableWarnings,
  type LoopSummary,
} from '../engine/store/summaries.js';
import type { StatusCommandOptions } from './status.js';
import { listLeftoverWorktrees, renderLeftovers } from '../engine/git/worktree.js';

export async function statusAction(opts: StatusCommandOptions): Promise<void> {
  const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
  // A LoopExit is a RalphkitError: the CLI reports its message, hint and exit code as they are.
  const loops: LoopSummary[] = readLoopSummariesOrRefuse(repoRoot);
  for (const line of renderUnreadableWarnings(loops)) logger.warn(line);
  const leftovers = await listLeftoverWorktrees(repoRoot).catch(() => []);
  if (opts.json) logger.json({ loops, leftoverWorktrees: leftovers });
  else logger.out(renderLoopTable(loops) + renderLeftovers(leftovers));
}
