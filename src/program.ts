// The one place that builds the commander program, catches errors and sets process.exitCode. Its entries pass the
// commands to register: src/cli.ts all of them, src/cli-install.ts `install` alone.
import { Command, CommanderError } from 'commander';
import { RalphkitError, ExitError, EXIT } from './errors.js';
import { logger } from './logger.js';
import { readVersion } from './version.js';
import { sanitizeForTerminal } from './util/ansi.js';
import { renderExamples } from './util/invocation.js';

/** Adds one command (its options, help and action) to the program. */
export type RegisterCommand = (program: Command) => void;

export function buildProgram(commands: readonly RegisterCommand[]): Command {
  const program = new Command('ralphkit')
    .description('Install an honest Ralph loop into a git repository, run it, and watch it.')
    .version(readVersion(), '-v, --version', 'print the ralphkit version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const register of commands) register(program);
  for (const cmd of program.commands) cmd.exitOverride();
  program.addHelpText('after', () =>
    renderExamples(`
Examples:
  $ npx ralphkit install              put the loop into the current repository
  $ ./ralph/ralph.sh 20               run up to 20 iterations with Claude Code
  $ npx ralphkit validate             check ralph/prd.json before a long run
  $ npx ralphkit view                 watch the plan live in a browser`),
  );
  return program;
}

export async function main(argv: string[], commands: readonly RegisterCommand[]): Promise<number> {
  try {
    await buildProgram(commands).parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    return handleError(err);
  }
}

/** Runs the program on this process's arguments when its entry is loaded (bin/ralphkit.js imports the built one). */
export function runAsEntry(commands: readonly RegisterCommand[]): void {
  // Tests and scripts import the entries for their exports and run nothing.
  if (process.env.RALPHKIT_NO_AUTORUN) return;
  ignoreClosedPipe(process.stdout);
  ignoreClosedPipe(process.stderr);
  main(process.argv.slice(2), commands).then((code) => {
    process.exitCode = code;
  });
}

function handleError(err: unknown): number {
  if (err instanceof ExitError) return err.exitCode;
  if (err instanceof RalphkitError) {
    logger.error(err.message);
    if (err.hint) logger.hint(err.hint);
    return err.exitCode;
  }
  if (err instanceof CommanderError) {
    // commander has already printed help, the version or its own error message.
    return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version'
      ? EXIT.ok
      : EXIT.error;
  }
  process.stderr.write(
    sanitizeForTerminal(
      `ralphkit: unexpected error\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    ),
  );
  return EXIT.error;
}

// A reader that closes early (`ralphkit --help | head`) is not an error of ours.
function ignoreClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}
