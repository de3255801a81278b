// What the budget reads: usage windows, rate-limit hits, and the gate that holds the next agent run (budget/).

/** src/engine/budget/usage.ts — SPEC §7. Utilisation is a percentage 0–100. */
export interface UsageWindow {
  utilization: number;
  resetsAt: Date | null;
}

export interface UsageReading {
  fiveHour: UsageWindow;
  sevenDay: UsageWindow;
}

/** src/engine/budget/ratelimit.ts — a rate/usage-limit message found in an agent's output. */
export interface RateLimitHit {
  /** When the agent says the limit resets; null when it names no time (use a bounded back-off). */
  resetAt: Date | null;
  /** The line that matched, for the log. */
  message: string;
}

/** src/engine/budget/gate.ts — the usage ceiling (SPEC §7), consulted by the loop. */
export interface BudgetGate {
  /**
   * Before the first iteration. Throws LoopExit(2) when usage cannot be read (unless allowed) or is over
   * the ceiling without --wait; with --wait / --wait-next-session it sleeps (through the injected clock) first.
   */
  beforeStart(): Promise<void>;
  /** Before each later iteration: 'continue', or 'stop' (the loop exits 5). With --wait it sleeps instead of stopping. */
  beforeIteration(): Promise<'continue' | 'stop'>;
}
