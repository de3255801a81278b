// `ralphkit cancel <id>`: its arguments; the cancelling (src/commands/cancel-action.ts) is loaded when it runs.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('cancel')
    .description('stop a live loop (its agent too); its state becomes cancelled')
    .argument('<id>', 'the loop id, as `ralphkit status` lists it')
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (id: string, opts: { cwd?: string }) => (await import('./cancel-action.js')).cancelAction(id, opts));
}
