import type { Command } from 'commander';
import { logger } from '../logger.js';
import { resolveGitRoot } from '../util/cwd.js';
import { RalphkitError } from '../errors.js';
import { readLoopSummariesOrRefuse, renderLoopTable, renderUnreadableWarnings, type LoopSummary } from '../engine/store/summaries.js';
import { LoopExit } from '../engine/errors.js';

export function register(program: Command): void {
  program
    .command('status')
    .description('list the loops of this repository: status, iteration, agent, cost, stories passed, verified (from the sealed verdict record), reported, unverified and rejected')
    .option('--json', 'print one JSON document on stdout')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (opts: { json?: boolean; cwd?: string }) => {
      const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
      let loops: LoopSummary[];
      try {
        loops = readLoopSummariesOrRefuse(repoRoot);
      } catch (err) {
        if (err instanceof LoopExit) throw new RalphkitError(err.message, { exitCode: err.code, hint: err.hint });
        throw err;
      }
      for (const line of renderUnreadableWarnings(loops)) logger.warn(line);
      logger.out(opts.json ? JSON.stringify({ loops }, null, 2) : renderLoopTable(loops));
    });
}
