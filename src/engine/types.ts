// Contracts between the loop (src/engine/core/loop.ts) and the modules it calls at its edges.
// Each is implemented in its own file; the loop receives them through LoopDeps so tests can fake them.
import type { Prd } from '../prd/types.js';

/** What one run of an agent produced. */
export interface AgentResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Everything the agent printed on stdout (raw, e.g. stream-json lines for Claude Code). */
  stdout: string;
  stderr: string;
  /** The agent's final message (SPEC §4): structured output where the agent has one, else all stdout. */
  finalMessage: string;
  /** Cost in USD for this run, when the agent reports one (Claude Code's total_cost_usd). */
  costUsd?: number;
  durationMs: number;
  /** Set when the agent's structured output itself says a rate/usage limit was hit (Claude Code's rate_limit_event). */
  rateLimit?: RateLimitHit;
}

/** src/engine/verify/verify.ts — SPEC §6. */
export interface VerifyInput {
  repoRoot: string;
  prdPath: string;
  progressPath: string;
  ledgerPath: string;
  loopId: string;
  iteration: number;
  /** prd.json text as it was before the agent ran this iteration. */
  prdBefore: string;
  checkTimeoutMs: number;
  /** Run checks in the working tree itself (--verify-in-place) instead of a fresh checkout of the claimed commit. */
  inPlace?: boolean;
  /** The files checks run with as they were at the plan commit (verify/checkout.ts); null or absent: none pinned. */
  pins?: Pins | null;
  /**
   * Set when the agent changed what the runner trusts (its engine, git's hooks or configuration) during the
   * iteration: the runner undid it, and every claim of the iteration is rejected for this reason.
   */
  violation?: string;
  /** With --sandbox, checks run under bubblewrap too (they execute the agent's code): see verify-session.ts. */
  sandbox?: CheckSandbox;
  /** Runner-owned files in the working tree the runner restored this iteration: committed with its own edits. */
  extraOwnFiles?: string[];
  log: (level: 'info' | 'warn', message: string) => void;
  now?: () => Date;
  /** The repository's top level, real path; the runner resolves it once per run (it cannot change). Read when absent. */
  topLevel?: string;
  /** HEAD as the loop read it right after the agent exited (null: no commit yet), so it is not read twice. Read when absent. */
  headAfterAgent?: string | null;
}

/** What the plan commit fixes for a whole loop (SPEC §6 pinned tests): taken when a loop starts, kept by --resume. */
export interface Pins {
  /** The plan commit: HEAD when the loop started (or at --repin). */
  commit: string;
  /** Files committed there that checks run with as they were. */
  paths: string[];
  /**
   * Per package.json a check runs scripts from (the root one, or `npm --prefix app`, `npm -w app`, `cd app && ...`):
   * the definitions of those scripts, and the test-runner keys (`jest`, `mocha`, `ava`, ...). null: must not exist.
   */
  manifests: Array<{ file: string; scripts: Record<string, string | null>; keys: Record<string, unknown> }>;
  /** Test-runner sections of shared config files (pyproject.toml's [tool.pytest.ini_options]); text null: absent. */
  sections: Array<{ file: string; header: string; text: string | null }>;
  /** False when the plan says `"protectDefaults": false`: files the plan commit lacked are then never removed. */
  absent: boolean;
}

export interface StoryVerdict {
  id: string;
  /** verified: checks ran and passed · unverified: no checks exist, accepted on the agent's word · rejected: claim undone */
  status: 'verified' | 'unverified' | 'rejected';
  reason?: string;
}

export interface VerifyResult {
  /** One verdict per story the agent newly claimed this iteration. */
  verdicts: StoryVerdict[];
  /** Descriptions of agent edits to prd.json outside passes/notes that were undone. */
  restored: string[];
  /** The plan on disk after verification (claims undone, fields restored). */
  prd: Prd;
  /** True when every story in the plan now has passes: true. */
  allPass: boolean;
}

/** How checks are sandboxed: bubblewrap, the user's HOME (writable: caches), and what stays read-only or hidden. */
export interface CheckSandbox {
  bwrap: string;
  home?: string;
  readOnly: string[];
  hidden: string[];
  network: boolean;
}

/** The agent changed files the runner trusts (verify/runner-guard.ts); they were put back. */
export interface Violation {
  reason: string;
  /** Working-tree paths among them (ralph/ralph.mjs, ...), which the runner commits back. */
  files: string[];
}

/** What the final gate decided (verify/final-gate.ts). */
export interface GateOutcome {
  passed: boolean;
  /** Interrupted (Ctrl-C, cancel): nothing was decided. */
  interrupted: boolean;
  /** The plan after the gate (rejected stories back to passes: false). */
  prd: Prd;
  verdicts: StoryVerdict[];
}

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

/** Exit codes of the loop (SPEC §4). */
export const LOOP_EXIT = {
  complete: 0,
  maxIterations: 1,
  refused: 2,
  stuck: 3,
  noProgress: 4,
  budget: 5,
  interrupted: 130,
} as const;

/** Thrown anywhere in the engine to end the loop with a given code; main.ts turns it into process.exitCode. */
export class LoopExit extends Error {
  readonly code: number;
  readonly hint?: string;
  constructor(code: number, message: string, hint?: string) {
    super(message);
    this.name = 'LoopExit';
    this.code = code;
    this.hint = hint;
  }
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

/** The clock at the engine's edge, so tests can run hours of waiting in milliseconds. */
export interface Clock {
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
