// The CLI's errors: the one base class (util/errors.ts, which the engine's LoopExit extends too) and ExitError.
import { RalphkitError } from './util/errors.js';

export { EXIT, RalphkitError, type RalphkitErrorOptions } from './util/errors.js';

/** A command that finished on purpose with a non-zero code, having already printed its output. */
export class ExitError extends RalphkitError {
  constructor(exitCode: number) {
    super(`exit ${exitCode}`, { exitCode });
    this.name = 'ExitError';
  }
}
