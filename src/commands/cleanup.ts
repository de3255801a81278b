// `ralphkit cleanup`: its arguments; the removal (src/commands/cleanup-action.ts) is loaded when it runs.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('cleanup')
    .description(
      'remove the worktrees of --worktree loops that are not running (a crash left them; one with uncommitted changes is kept and named), and the verification checkouts killed runners left in the temp folder',
    )
    .option('--cwd <dir>', 'the repository (default: the current directory)')
    .action(async (opts: { cwd?: string }) => (await import('./cleanup-action.js')).cleanupAction(opts));
}
