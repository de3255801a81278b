// An agent run with the loop's patience: a transient failure (a crash, a dropped connection) is repeated up to
// MAX_TRANSIENT_RETRIES times with a doubling back-off, and a rate limit waits for its reset (or a capped back-off).
import type { AgentResult, LoopConfig, LoopDeps } from '../types.js';
import type { LoopState } from '../store/state-types.js';
import type { RateLimitHit } from '../budget/types.js';
import type { Emit } from '../events.js';
import { detectTag, type Tag } from './tags.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { throwIfAborted } from './exits.js';
import { durationExit } from './limits.js';

export const MAX_TRANSIENT_RETRIES = 3;

// A limit that keeps coming back after this many waits is more likely a misread message than a real limit.
export const MAX_RATE_LIMIT_WAITS = 24;

const MAX_RATE_LIMIT_WAIT_MS = 12 * 3_600_000;

const RESET_SLACK_MS = 30_000;

/**
 * One counted iteration: repeats the agent run, without counting it, after a rate-limit message (waiting
 * for the named reset or a bounded back-off) and after a transient failure (at most 3 retries).
 */
export async function runAgentWithRetries(
  state: LoopState,
  config: LoopConfig,
  deps: LoopDeps,
  iteration: number,
): Promise<AgentResult> {
  const time = watchDeadline(config, deps);
  try {
    return await runWithRetries(state, config, deps, iteration, time);
  } finally {
    time.dispose();
  }
}

async function runWithRetries(
  state: LoopState,
  config: LoopConfig,
  deps: LoopDeps,
  iteration: number,
  time: DeadlineWatch,
): Promise<AgentResult> {
  let transient = 0;
  let limitHits = 0;
  for (;;) {
    const result = await deps.runAgent(iteration, time.signal);
    if (result.costUsd !== undefined) {
      state.costUsd += result.costUsd;
      deps.saveState(state, 'cost');
    }
    throwIfAborted(deps.signal);
    if (result.timedOut) return result;
    // Stopped like an agent past --iteration-timeout: what it committed is still verified, then the loop ends (loop.ts decide).
    if (time.up()) {
      deps.emit({
        type: 'warn',
        iteration,
        message: `the --max-duration time is up: the agent was stopped with everything it started; what it committed is checked, then the loop ends`,
      });
      return result;
    }
    const hit = result.rateLimit ?? deps.detectRateLimit(`${result.finalMessage}\n${result.stderr}`, deps.clock.now());
    if (hit) {
      if (++limitHits > MAX_RATE_LIMIT_WAITS)
        throw new LoopExit(
          LOOP_EXIT.budget,
          `rate limit still hit after ${MAX_RATE_LIMIT_WAITS} waits: ${hit.message}`,
        );
      const waitMs = planRateLimitWait(hit, deps.clock.now(), config.rateLimitBackoffMs, limitHits);
      deps.emit({
        type: 'rate-limit',
        iteration,
        message: hit.message,
        waitMs,
        resetAt: hit.resetAt?.toISOString() ?? null,
      });
      await waitOrEnd(deps, time, waitMs, config);
      continue;
    }
    const reason = deps.transientReason(result);
    if (!reason || transient >= MAX_TRANSIENT_RETRIES) return result;
    const waitMs = config.retryBaseMs * 2 ** transient++;
    deps.emit({ type: 'retry', iteration, attempt: transient, reason, waitMs });
    await waitOrEnd(deps, time, waitMs, config);
  }
}

// A wait the time limit cuts short ends the loop like an interrupt: the iteration stays not done, so a resume repeats it.
async function waitOrEnd(deps: LoopDeps, time: DeadlineWatch, waitMs: number, config: LoopConfig): Promise<void> {
  await deps.clock.sleep(waitMs, time.signal);
  throwIfAborted(deps.signal);
  if (time.up()) throw durationExit(config);
}

interface DeadlineWatch {
  /** Aborted by the loop's own signal (Ctrl-C, cancel) or when --max-duration's time is up. */
  signal: AbortSignal;
  up(): boolean;
  dispose(): void;
}

/** The agent's signal: the loop's, plus --max-duration's deadline through the injected clock. */
function watchDeadline(config: LoopConfig, deps: LoopDeps): DeadlineWatch {
  if (config.deadline === undefined) return { signal: deps.signal, up: () => false, dispose: () => {} };
  const combined = new AbortController();
  const stop = new AbortController();
  let up = false;
  const onLoopAbort = () => combined.abort();
  deps.signal.addEventListener('abort', onLoopAbort, { once: true });
  if (deps.signal.aborted) combined.abort();
  void deps.clock.sleep(Math.max(0, config.deadline - deps.clock.now().getTime()), stop.signal).then(() => {
    if (stop.signal.aborted) return;
    up = true;
    combined.abort();
  });
  const dispose = () => {
    stop.abort();
    deps.signal.removeEventListener('abort', onLoopAbort);
  };
  return { signal: combined.signal, up: () => up, dispose };
}

/**
 * The agent's run as both loops announce it: its exit (with the tag its final message ends with) and, past the
 * iteration timeout, that the iteration failed. Returns the tag.
 */
export function reportAgentExit(emit: Emit, iteration: number, result: AgentResult, completion: string): Tag | null {
  const tag = detectTag(result.finalMessage, completion);
  emit({
    type: 'agent-exit',
    iteration,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    costUsd: result.costUsd,
    tag,
  });
  if (result.timedOut)
    emit({
      type: 'warn',
      iteration,
      message: `iteration ${iteration} failed: the agent outlived the iteration timeout and was killed`,
    });
  return tag;
}

/** Until the named reset (plus slack for clock skew), else an exponential back-off; never more than 12h. */
export function planRateLimitWait(hit: RateLimitHit, now: Date, backoffMs: number, attempt: number): number {
  const wait = hit.resetAt
    ? hit.resetAt.getTime() - now.getTime() + Math.min(RESET_SLACK_MS, backoffMs)
    : backoffMs * 2 ** (attempt - 1);
  return Math.max(backoffMs > 0 ? Math.min(backoffMs, 1000) : 0, Math.min(wait, MAX_RATE_LIMIT_WAIT_MS));
}
