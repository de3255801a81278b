// Ctrl-C, SIGTERM (`cancel`) and SIGHUP while the runner runs: the first ends the loop (130, resumable) at its next
// step; once the loop has ended, one stops the announcements of its end. A failure while stopping is the interrupt.
import type { RunContext } from '../types.js';
import type { RunEnd } from './finish.js';
import { LoopExit, LOOP_EXIT, EXIT_FAILURE } from '../errors.js';

export interface Interrupt {
  /** Aborted by the first signal: the loop ends. */
  controller: AbortController;
  /** Aborted by a signal after the loop has ended (or was told to): the announcements of its end stop. */
  late: AbortController;
  signalled?: NodeJS.Signals;
  /** The run, once it is set up: its `signalled`. */
  run?: RunContext;
  /** How the run ends, once it is set up (run/finish.ts): after its `ending` is recorded, a signal is a late one. */
  end?: RunEnd;
}

/**
 * Listens from before the start's first side effect (a worktree, a branch): a Ctrl-C while the start is set up ends
 * the loop at its first step instead of killing the runner between a worktree made and a loop recorded.
 */
export function listenForInterrupts(): { stop: Interrupt; dispose: () => void } {
  const stop: Interrupt = { controller: new AbortController(), late: new AbortController() };
  const handler = (signal: NodeJS.Signals) => {
    stop.signalled ??= signal;
    if (stop.run) stop.run.signalled ??= signal;
    if (stop.end?.ending || stop.controller.signal.aborted) stop.late.abort();
    else stop.controller.abort();
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, handler);
  return { stop, dispose: () => signals.forEach((s) => process.off(s, handler)) };
}

/**
 * A failure while the runner is being interrupted is the interrupt (130, the resume hint), not an unexpected error: a
 * child in the terminal's process group (a check's `npm`, a synchronous git) got the same Ctrl-C and failed of it.
 * A signal that arrived while the runner was blocked is handled on the next turn of the event loop: one is let by.
 */
export async function interruptedOr(run: RunContext, err: unknown): Promise<LoopExit> {
  if (err instanceof LoopExit) return err;
  await new Promise((resolve) => setImmediate(resolve));
  if (!run.signalled) return new LoopExit(EXIT_FAILURE, `unexpected error: ${(err as Error).message}`);
  run.emit({ type: 'warn', message: `while stopping (${run.signalled}): ${(err as Error).message}` });
  return new LoopExit(
    LOOP_EXIT.interrupted,
    'interrupted; state saved',
    'continue with: ./ralph/ralph.sh --resume-last',
  );
}
