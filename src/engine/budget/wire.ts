// The usage ceiling (SPEC §7) wired to the real usage endpoint, the clock and the loop's log, so the runner
// and the loop only see the BudgetGate contract.
import type { BudgetGate } from './types.js';
import type { Clock } from '../types.js';
import type { RunOptions } from '../loop-options.js';
import type { Emit } from '../events.js';
import { createBudgetGate } from './gate.js';
import { readUsage, renderUsage } from './usage.js';

export interface BudgetContext {
  options: RunOptions;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  emit: Emit;
  signal: AbortSignal;
}

export function createBudget(ctx: BudgetContext): BudgetGate {
  return createBudgetGate({
    maxUsagePct: ctx.options.maxUsage,
    wait: ctx.options.wait,
    waitNextSession: ctx.options.waitNextSession,
    allowUnknownUsage: ctx.options.allowUnknownUsage,
    clock: ctx.clock,
    signal: ctx.signal,
    readUsage: () => readUsage({ env: ctx.env, signal: ctx.signal }),
    log: (level, message) => ctx.emit({ type: level, message }),
  });
}

/** Usage now, rendered for --dry-run; a reading that fails is reported, never thrown. */
export async function readUsageNow(ctx: Pick<BudgetContext, 'env' | 'clock'>): Promise<string> {
  try {
    return renderUsage(await readUsage({ env: ctx.env }), ctx.clock.now());
  } catch (err) {
    return `unknown: ${(err as Error).message}`;
  }
}
