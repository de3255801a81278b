// The usage ceiling (SPEC §7) as the loop sees it: a gate asked once before the first iteration and again
// before every later one. It fails closed: usage it cannot read stops the start unless --allow-unknown-usage.
// The ceiling applies to both the 5-hour and the 7-day window; reaching it (utilisation ≥ ceiling) counts.
import type { BudgetGate, UsageReading, UsageWindow } from './types.js';
import type { Clock } from '../types.js';
import { formatDuration } from '../core/duration.js';
import { renderUsage } from './usage.js';
import { LOOP_EXIT, LoopExit } from '../errors.js';

export const USAGE_RECHECK_MS = 5 * 60_000;
/** Mid-run, a failed reading is retried this often (a minute apart) before the gate gives up. */
export const MID_RUN_READ_ATTEMPTS = 3;
const MID_RUN_RETRY_MS = 60_000;
// The server's reset time is exact to the second; starting a few seconds late avoids reading the old block.
const RESET_SLACK_MS = 15_000;

/** How the loop's budget gate is configured; built from the run options by the engine. */
export interface BudgetGateOptions {
  /** --max-usage: a percentage 0–100; undefined means no ceiling. */
  maxUsagePct?: number;
  /** --wait: sleep until the reset instead of refusing (start) or stopping (mid-run). */
  wait: boolean;
  /** --wait-next-session: before the first iteration, sleep until the current 5-hour block resets. */
  waitNextSession: boolean;
  /** --allow-unknown-usage: run (with a warning) when usage cannot be read. */
  allowUnknownUsage: boolean;
  clock: Clock;
  readUsage: () => Promise<UsageReading>;
  log: (level: 'info' | 'warn', message: string) => void;
  /** Aborted on SIGINT/SIGTERM: waits end at once. */
  signal?: AbortSignal;
  /** How often a --wait re-reads usage; default 5 minutes. */
  recheckMs?: number;
}

export const UNKNOWN_USAGE_HINT =
  'check your Claude Code login (run `claude` once) or set RALPH_USAGE_TOKEN; add --allow-unknown-usage to run without the usage ceiling';

export function createBudgetGate(options: BudgetGateOptions): BudgetGate {
  const gate = new Gate(options);
  return { beforeStart: () => gate.beforeStart(), beforeIteration: () => gate.beforeIteration() };
}

/** The windows at or over the ceiling, with a short description each. */
export function planOverCeiling(reading: UsageReading, maxPct: number): { name: string; window: UsageWindow }[] {
  const windows = [
    { name: '5-hour', window: reading.fiveHour },
    { name: '7-day', window: reading.sevenDay },
  ];
  return windows.filter((w) => w.window.utilization >= maxPct);
}

/** When every over-ceiling window has reset: the latest of their reset times (null when none is known). */
export function planResetTime(over: { window: UsageWindow }[]): Date | null {
  const times = over.map((o) => o.window.resetsAt?.getTime()).filter((t): t is number => t !== undefined);
  return times.length === over.length && times.length > 0 ? new Date(Math.max(...times)) : null;
}

class Gate {
  // The loop asks beforeIteration() before iteration 1 as well; usage checked at start needs no second request.
  private checkedAtStart = false;

  constructor(private readonly o: BudgetGateOptions) {}

  async beforeStart(): Promise<void> {
    if (this.o.maxUsagePct === undefined && !this.o.waitNextSession) return;
    const reading = await this.readAtStart();
    if (!reading) return;
    if (this.o.waitNextSession) await this.waitForNextSession(reading);
    if (this.o.maxUsagePct === undefined) return;
    const current = this.o.waitNextSession ? await this.readAtStart() : reading;
    if (current) await this.enforce(current, 'start');
    this.checkedAtStart = true;
  }

  async beforeIteration(): Promise<'continue' | 'stop'> {
    if (this.o.maxUsagePct === undefined) return 'continue';
    if (this.checkedAtStart) {
      this.checkedAtStart = false;
      return 'continue';
    }
    const reading = await this.readWithRetries('mid-run');
    if (!reading) return 'continue';
    return this.enforce(reading, 'mid-run');
  }

  // At start the user is usually watching: one attempt, and a clear refusal.
  private async readAtStart(): Promise<UsageReading | null> {
    try {
      return await this.o.readUsage();
    } catch (err) {
      return this.unknown(err, 'start');
    }
  }

  // Overnight (mid-run, or during a --wait), one network blip must not end the loop: retry a minute apart first.
  private async readWithRetries(when: 'start' | 'mid-run'): Promise<UsageReading | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.o.readUsage();
      } catch (err) {
        // With --allow-unknown-usage nothing depends on the answer, so there is nothing to retry for.
        if (attempt >= MID_RUN_READ_ATTEMPTS || this.o.allowUnknownUsage) return this.unknown(err, when);
        this.o.log(
          'warn',
          `cannot read Claude usage (${(err as Error).message}); retrying in ${formatDuration(MID_RUN_RETRY_MS)}`,
        );
        await this.sleep(MID_RUN_RETRY_MS);
      }
    }
  }

  private unknown(err: unknown, when: 'start' | 'mid-run'): null {
    if (this.o.signal?.aborted) throw interrupted();
    const message = `cannot read Claude usage: ${(err as Error).message}`;
    if (this.o.allowUnknownUsage) {
      this.o.log('warn', `${message}; going on without the usage ceiling (--allow-unknown-usage)`);
      return null;
    }
    const code = when === 'start' ? LOOP_EXIT.refused : LOOP_EXIT.budget;
    throw new LoopExit(code, `${message} (failing closed)`, UNKNOWN_USAGE_HINT);
  }

  private async enforce(first: UsageReading, when: 'start' | 'mid-run'): Promise<'continue' | 'stop'> {
    const max = this.o.maxUsagePct!;
    for (let reading: UsageReading | null = first; reading; reading = await this.readWithRetries(when)) {
      const over = planOverCeiling(reading, max);
      if (over.length === 0) return 'continue';
      const what = `Claude usage at or over the ${max}% ceiling: ${renderUsage(reading, this.o.clock.now())}`;
      if (!this.o.wait) return this.refuse(what, when);
      await this.waitTick(what, planResetTime(over));
    }
    return 'continue';
  }

  private refuse(what: string, when: 'start' | 'mid-run'): 'stop' {
    if (when === 'start')
      throw new LoopExit(
        LOOP_EXIT.refused,
        what,
        'wait for the reset, raise --max-usage, or add --wait to wait for it',
      );
    this.o.log('warn', `${what}; stopping (add --wait to wait for the reset instead)`);
    return 'stop';
  }

  // One step of a --wait: sleep until the reset or the next re-check, whichever is first, saying how long is left.
  private async waitTick(what: string, resetAt: Date | null): Promise<void> {
    const recheck = this.o.recheckMs ?? USAGE_RECHECK_MS;
    const left = resetAt ? resetAt.getTime() + RESET_SLACK_MS - this.o.clock.now().getTime() : Infinity;
    const ms = Math.max(1000, Math.min(recheck, left));
    const until = resetAt
      ? `resets in ${formatDuration(Math.max(0, left))} (${resetAt.toISOString()})`
      : 'reset time unknown';
    this.o.log('info', `${what}; waiting (--wait): ${until}, next check in ${formatDuration(ms)}`);
    await this.sleep(ms);
  }

  private async waitForNextSession(reading: UsageReading): Promise<void> {
    const resetAt = reading.fiveHour.resetsAt;
    if (!resetAt || resetAt.getTime() <= this.o.clock.now().getTime()) {
      this.o.log('info', 'no 5-hour block in progress; starting now (--wait-next-session)');
      return;
    }
    const end = resetAt.getTime() + RESET_SLACK_MS;
    const recheck = this.o.recheckMs ?? USAGE_RECHECK_MS;
    for (let left = end - this.o.clock.now().getTime(); left > 0; left = end - this.o.clock.now().getTime()) {
      const ms = Math.max(1000, Math.min(recheck, left));
      this.o.log(
        'info',
        `waiting for the next 5-hour block (--wait-next-session): starts in ${formatDuration(left)} (${resetAt.toISOString()})`,
      );
      await this.sleep(ms);
    }
  }

  private async sleep(ms: number): Promise<void> {
    await this.o.clock.sleep(ms, this.o.signal);
    if (this.o.signal?.aborted) throw interrupted();
  }
}

function interrupted(): LoopExit {
  return new LoopExit(
    LOOP_EXIT.interrupted,
    'interrupted while checking or waiting for Claude usage',
    'continue with: ./ralph/ralph.sh --resume-last',
  );
}
