// `ralphkit status`: its options; the listing (src/commands/status-action.ts) is loaded when it runs.
import type { Command } from 'commander';

export interface StatusCommandOptions {
  json?: boolean;
  cwd?: string;
}

export function register(program: Command): void {
  program
    .command('status')
    .description(
      'list the loops of this repository: status, iteration, agent, cost, stories passed, verified (from the sealed verdict record), reported, unverified and rejected',
    )
    .option('--json', 'print one JSON document on stdout')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (opts: StatusCommandOptions) => (await import('./status-action.js')).statusAction(opts));
}
