// The one place that builds the commander program, catches errors and sets process.exitCode.
import { Command, CommanderError } from 'commander';
import { RalphkitError, ExitError, EXIT } from './errors.js';
import { logger } from './logger.js';
import { readVersion } from './version.js';
import { register as registerInstall } from './commands/install.js';
import { register as registerSkill } from './commands/skill.js';
import { register as registerValidate } from './commands/validate.js';
import { register as registerRun } from './commands/run.js';
import { register as registerStatus } from './commands/status.js';
import { register as registerCancel } from './commands/cancel.js';
import { register as registerCleanup } from './commands/cleanup.js';
import { register as registerView } from './commands/view.js';
import { sanitizeForTerminal } from './util/ansi.js';
import { renderExamples } from './util/invocation.js';

export function buildProgram(): Command {
  const program = new Command('ralphkit')
    .description('Install an honest Ralph loop into a git repository, run it, and watch it.')
    .version(readVersion(), '-v, --version', 'print the ralphkit version')
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const register of [
    registerInstall,
    registerSkill,
    registerValidate,
    registerRun,
    registerStatus,
    registerCancel,
    registerCleanup,
    registerView,
  ]) {
    register(program);
  }
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

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    return handleError(err);
  }
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

// Run when loaded as the entry (bin/ralphkit.js imports the built file); tests import main() instead.
if (!process.env.RALPHKIT_NO_AUTORUN) {
  ignoreClosedPipe(process.stdout);
  ignoreClosedPipe(process.stderr);
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
