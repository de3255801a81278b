import type { Command } from 'commander';

// `ralphkit run` is the loop engine itself: every argument goes to the engine's own parser, so
// ./ralph/ralph.sh and `ralphkit run` can never disagree about an option. The engine
// (src/commands/run-action.ts) is loaded when the command runs.
export function register(program: Command): void {
  program
    .command('run')
    .description('run the Ralph loop in this repository (same as ./ralph/ralph.sh; run --help for options)')
    .argument('[args...]', 'options and max_iterations, as for ./ralph/ralph.sh')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .action(async (args: string[]) => (await import('./run-action.js')).runAction(args));
}
