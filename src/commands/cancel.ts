import type { Command } from 'commander';
import { RalphkitError } from '../errors.js';
import { logger } from '../logger.js';
import { resolveGitRoot } from '../util/cwd.js';
import { cancelLoop, renderCancelResult, waitForLoopEnd } from '../engine/store/cancel.js';
import { LoopExit } from '../engine/errors.js';

export function register(program: Command): void {
  program
    .command('cancel')
    .description('stop a live loop (its agent too); its state becomes cancelled')
    .argument('<id>', 'the loop id, as `ralphkit status` lists it')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (id: string, opts: { cwd?: string }) => {
      try {
        const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
        const result = cancelLoop(repoRoot, id);
        if (result.action !== 'signalled') {
          logger.info(renderCancelResult(result));
          return;
        }
        const status = await waitForLoopEnd(repoRoot, id, 15_000);
        logger.success(status === 'running' ? `loop ${id} was signalled and is stopping` : `loop ${id} ${status}`);
      } catch (err) {
        if (err instanceof LoopExit) throw new RalphkitError(err.message, { exitCode: err.code, hint: err.hint });
        throw err;
      }
    });
}
