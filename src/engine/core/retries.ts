// An agent run with the loop's patience: a transient failure (a crash, a dropped connection) is repeated up to
// MAX_TRANSIENT_RETRIES times with a doubling back-off, and a rate limit waits for its reset (or a capped back-off).
import type { AgentResult, LoopConfig, LoopDeps, LoopState, RateLimitHit } from '../types.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { throwIfAborted } from './exits.js';

export const MAX_TRANSIENT_RETRIES = 3;

// A limit that keeps coming back after this many waits is more likely a misread message than a real limit.
export const MAX_RATE_LIMIT_WAITS = 24;

const MAX_RATE_LIMIT_WAIT_MS = 12 * 3_600_000;

const RESET_SLACK_MS = 30_000;

/**
 * One counted iteration: repeats the agent run, without counting it, after a rate-limit message (waiting
 * for the named reset or a bounded back-off) and after a transient failure (at most 3 retries).
 */
export async function runAgentWithRetries(state: LoopState, config: LoopConfig, deps: LoopDeps, iteration: number): Promise<AgentResult> {
  let transient = 0;
  let limitHits = 0;
  for (;;) {
    const result = await deps.runAgent(iteration, deps.signal);
    if (result.costUsd !== undefined) {
      state.costUsd += result.costUsd;
      deps.saveState(state, 'cost');
    }
    throwIfAborted(deps.signal);
    if (result.timedOut) return result;
    const hit = result.rateLimit ?? deps.detectRateLimit(`${result.finalMessage}\n${result.stderr}`, deps.clock.now());
    if (hit) {
      if (++limitHits > MAX_RATE_LIMIT_WAITS) throw new LoopExit(LOOP_EXIT.budget, `rate limit still hit after ${MAX_RATE_LIMIT_WAITS} waits: ${hit.message}`);
      const waitMs = planRateLimitWait(hit, deps.clock.now(), config.rateLimitBackoffMs, limitHits);
      deps.emit({ type: 'rate-limit', iteration, message: hit.message, waitMs, resetAt: hit.resetAt?.toISOString() ?? null });
      await deps.clock.sleep(waitMs, deps.signal);
      throwIfAborted(deps.signal);
      continue;
    }
    const reason = deps.transientReason(result);
    if (!reason || transient >= MAX_TRANSIENT_RETRIES) return result;
    const waitMs = config.retryBaseMs * 2 ** transient++;
    deps.emit({ type: 'retry', iteration, attempt: transient, reason, waitMs });
    await deps.clock.sleep(waitMs, deps.signal);
    throwIfAborted(deps.signal);
  }
}

/** Until the named reset (plus slack for clock skew), else an exponential back-off; never more than 12h. */
export function planRateLimitWait(hit: RateLimitHit, now: Date, backoffMs: number, attempt: number): number {
  const wait = hit.resetAt ? hit.resetAt.getTime() - now.getTime() + Math.min(RESET_SLACK_MS, backoffMs) : backoffMs * 2 ** (attempt - 1);
  return Math.max(backoffMs > 0 ? Math.min(backoffMs, 1000) : 0, Math.min(wait, MAX_RATE_LIMIT_WAIT_MS));
}
