import type { Command } from 'commander';
import { logger } from '../logger.js';
import { resolveGitRoot } from '../util/cwd.js';
import { readLoopSummaries, renderLoopTable } from '../engine/loops.js';

export function register(program: Command): void {
  program
    .command('status')
    .description('list the loops of this repository: status, iteration, agent, cost, stories passed and verified')
    .option('--json', 'print one JSON document on stdout')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (opts: { json?: boolean; cwd?: string }) => {
      const repoRoot = await resolveGitRoot(opts.cwd ?? process.cwd());
      const loops = readLoopSummaries(repoRoot);
      logger.out(opts.json ? JSON.stringify({ loops }, null, 2) : renderLoopTable(loops));
    });
}
