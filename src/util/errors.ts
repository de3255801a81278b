// The one error base class of ralphkit: an expected failure that ends a command (or a loop) with an exit code named
// in a table (EXIT here, the loop's LOOP_EXIT in engine/errors.ts), a hint saying what to type next, and, for a loop,
// the status recorded in state.json. The CLI (src/program.ts) and the engine's entry turn it into the process's exit
// code: no caller converts one kind into another. Built-ins only (the engine's errors extend it in ralph.mjs).

/** Exit codes shared by every command (SPEC §2). The loop has its own wider set (SPEC §4). */
export const EXIT = {
  ok: 0,
  error: 1,
  refused: 2,
} as const;

export interface RalphkitErrorOptions {
  exitCode?: number;
  hint?: string;
  /** A loop's status for state.json (engine/errors.ts ExitStatus); absent for a command outside a loop. */
  status?: string;
  cause?: unknown;
}

/** An expected failure: carries the exit code, a hint telling the user what to type next, and a loop's status. */
export class RalphkitError extends Error {
  readonly exitCode: number;
  readonly hint?: string;
  readonly status?: string;

  constructor(message: string, options: RalphkitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RalphkitError';
    this.exitCode = options.exitCode ?? EXIT.error;
    this.hint = options.hint;
    this.status = options.status;
  }
}
