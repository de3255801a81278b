// `ralphkit cancel` once commander has parsed it: signals the loop, then waits (up to 15 s) to report how it ended.
import { logger } from '../logger.js';
import { resolveGitRoot } from '../cwd.js';
import { sanitizeForTerminal } from '../util/ansi.js';
import { cancelLoop, renderCancelResult, waitForLoopEnd } from '../engine/store/cancel.js';

export async function cancelAction(id: string, opts: { cwd?: string }): Promise<void> {
  const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
  const result = cancelLoop(repoRoot, id);
  if (result.action !== 'signalled') {
    logger.info(sanitizeForTerminal(renderCancelResult(result)));
    return;
  }
  const status = await waitForLoopEnd(repoRoot, id, 15_000);
  logger.success(status === 'running' ? `loop ${id} was signalled and is stopping` : `loop ${id} ${status}`);
}
