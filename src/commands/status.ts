import type { Command } from 'commander';
import { RalphkitError } from '../errors.js';
import { logger } from '../logger.js';
import { LoopExit } from '../engine/contracts.js';
import { resolveRepoRoot } from '../engine/git.js';
import { readLoopSummaries, renderLoopTable } from '../engine/loops.js';

export function register(program: Command): void {
  program
    .command('status')
    .description('list the loops of this repository: status, iteration, agent, cost, stories passed and verified')
    .option('--json', 'print one JSON document on stdout')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (opts: { json?: boolean; cwd?: string }) => {
      const repoRoot = await resolveRepoRoot(opts.cwd ?? process.cwd()).catch((err: unknown) => {
        if (err instanceof LoopExit) throw new RalphkitError(err.message, { exitCode: 2, hint: err.hint });
        throw err;
      });
      const loops = readLoopSummaries(repoRoot);
      logger.out(opts.json ? JSON.stringify({ loops }, null, 2) : renderLoopTable(loops));
    });
}
