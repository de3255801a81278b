/** Exit codes shared by every command (SPEC §2). The loop has its own wider set (SPEC §4). */
export const EXIT = {
  ok: 0,
  error: 1,
  refused: 2,
} as const;

/**
 * An expected failure: carries the exit code and a hint telling the user what to type next.
 * Commands throw it; only src/cli.ts (and the engine's entry) turn it into an exit code.
 */
export class RalphkitError extends Error {
  readonly exitCode: number;
  readonly hint?: string;

  constructor(message: string, options: { exitCode?: number; hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RalphkitError';
    this.exitCode = options.exitCode ?? EXIT.error;
    this.hint = options.hint;
  }
}

/** A command that finished on purpose with a non-zero code, having already printed its output. */
export class ExitError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'ExitError';
    this.exitCode = exitCode;
  }
}
