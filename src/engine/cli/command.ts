// `ralph.mjs run`: the runner's command line in, an exit code out. Parses the arguments, answers --help, and
// reports a refusal that came before any loop was recorded; everything else is one run (run/run.ts).
import type { RunIo } from '../types.js';
import { LoopExit } from '../errors.js';
import { createEmitter } from '../events.js';
import { parseRunArgs } from './args.js';
import { renderRunHelp } from './help.js';
import { startRun } from '../run/run.js';

/** Runs the loop for `argv` (everything after `run`) and returns the exit code (SPEC §4). */
export async function runRalph(argv: string[], io: RunIo): Promise<number> {
  let emit = createEmitter(argv.includes('--json'), io.stdout, io.stderr);
  try {
    const { options, given } = parseRunArgs(argv);
    emit = createEmitter(options.json, io.stdout, io.stderr);
    if (options.help) {
      io.stdout(renderRunHelp());
      return 0;
    }
    return await startRun(options, given, io, emit);
  } catch (err) {
    if (!(err instanceof LoopExit)) throw err;
    // Only exits before the loop was recorded get here; the run reports the others with their loop id.
    emit({
      type: 'exit',
      loop: '',
      code: err.code,
      status: err.status,
      message: err.message,
      hint: err.hint,
      iteration: 0,
      costUsd: 0,
    });
    return err.code;
  }
}
