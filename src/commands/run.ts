import type { Command } from 'commander';
import { ExitError } from '../errors.js';
import path from 'node:path';
import { runRalph } from '../engine/cli/command.js';
import { packageRoot } from '../paths.js';

// `ralphkit run` is the loop engine itself: every argument goes to the engine's own parser, so
// ./ralph/ralph.sh and `ralphkit run` can never disagree about an option.
export function register(program: Command): void {
  program
    .command('run')
    .description('run the Ralph loop in this repository (same as ./ralph/ralph.sh; run --help for options)')
    .argument('[args...]', 'options and max_iterations, as for ./ralph/ralph.sh')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .action(async (args: string[]) => {
      const code = await runRalph(args, {
        cwd: process.cwd(),
        env: process.env,
        packagedEngine: path.join(packageRoot(), 'dist', 'ralph.mjs'),
        stdout: (s) => process.stdout.write(s),
        stderr: (s) => process.stderr.write(s),
      });
      if (code !== 0) throw new ExitError(code);
    });
}
