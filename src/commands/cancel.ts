import type { Command } from 'commander';
import { RalphkitError } from '../errors.js';

// Placeholder until its issue lands; the owner replaces this file.
export function register(program: Command): void {
  program.command('cancel').description('(not built yet)').action(() => {
    throw new RalphkitError('ralphkit cancel is not built yet');
  });
}
