// Contracts between the loop (src/engine/core/loop.ts) and the modules it calls at its edges.
// Each is implemented in its own file; the loop receives them through LoopDeps so tests can fake them.
import type { Emit } from './events.js';
import type { BudgetGate, RateLimitHit } from './budget/types.js';
import type { RunOptions } from './loop-options.js';
import type { AgentRunRecord, LoopState } from './store/state-types.js';
import type { GateOutcome, ReviewerLogin, VerifyResult, Violation } from './verify/types.js';

/** What one run of an agent produced. */
export interface AgentResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The tail of what the agent printed on stdout (raw, e.g. stream-json lines; its last 1 MiB, agents/tail.ts). */
  stdout: string;
  stderr: string;
  /** The agent's final message (SPEC §4): structured output where the agent has one, else the tail of stdout. */
  finalMessage: string;
  /** Cost in USD for this run, when the agent reports one (Claude Code's total_cost_usd). */
  costUsd?: number;
  /** Claude: how many result events its stream held (one run prints one; more means something else wrote into it). */
  resultEvents?: number;
  durationMs: number;
  /** Set when the agent's structured output itself says a rate/usage limit was hit (Claude Code's rate_limit_event). */
  rateLimit?: RateLimitHit;
}

/** The clock at the engine's edge, so tests can run hours of waiting in milliseconds. */
export interface Clock {
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** What the runner found after an agent run (run/after-agent.ts `inspectAgentGit`). */
export interface AgentGitOutcome {
  /** HEAD on the loop's branch, after switching back if the agent had left it. */
  headAfter: string | null;
  offBranch?: { prdAfter: string; reason: string };
  violation?: Violation;
}

export interface RunIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `ralphkit run`: the engine this package ships, which the repository's ralph/ralph.mjs must equal. */
  packagedEngine?: string;
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface RunPaths {
  repoRoot: string;
  prd: string;
  prompt: string;
  progress: string;
}

export interface RunContext {
  id: string;
  options: RunOptions;
  paths: RunPaths;
  resumed: LoopState | null;
  /** A resumed loop's baseline plan, from the runner's record in git (verify/trust.ts); null for a new loop. */
  baseline: string | null;
  io: RunIo;
  emit: Emit;
  command: string;
  branch: string;
  base?: string;
  /** The --review-agent's binary, an absolute path found at start (run/review-setup.ts). */
  reviewerBin?: string;
  /** The reviewer's login, taken at start before any agent ran (verify/review-home.ts). */
  reviewerLogin?: ReviewerLogin;
  /** --max-duration: when this invocation's time is up (epoch ms), counted from its start. */
  deadline?: number;
  /** A --worktree loop's tree and branch (git/worktree.ts); paths.repoRoot is that tree. */
  worktree?: { path: string; branch: string };
  /** git's folders for the tree the run was started in, as read at start (git/git.ts resolveRepo). */
  repo?: RepoLocation;
  /** Branch patterns of a --parallel run that other workers and the merge queue move (after-agent.ts warnings skip them). */
  siblingBranches?: string[];
  /**
   * Set by the runner's SIGINT/SIGTERM/SIGHUP handler (run/interrupt.ts), whenever the signal comes: a failure from
   * then on is read as the interrupt. The one field set after the run starts: a signal is not a value any call returns.
   */
  signalled?: NodeJS.Signals;
}

export interface LoopDeps {
  clock: Clock;
  emit: Emit;
  /** Aborted on SIGINT/SIGTERM/cancel; the agent is killed and the loop ends with 130. */
  signal: AbortSignal;
  runAgent(iteration: number, signal: AbortSignal): Promise<AgentResult>;
  /**
   * prd.json as it was when `iteration` started. The first call of an iteration takes the snapshot; a resumed
   * iteration gets the one saved before the interruption, so claims made before a kill -9 are still verified.
   */
  prdBefore(iteration: number): string;
  headSha(): Promise<string | null>;
  /**
   * Whether the commits from `headBefore` to `headAfter` change anything besides the plan and progress.txt: real
   * work, as opposed to a commit whose only effect is flipping `passes` or adding a note.
   */
  committedWork(headBefore: string | null, headAfter: string | null): Promise<boolean>;
  /**
   * `headAfterAgent`: HEAD read right after the agent exited, handed on so verification need not read it again.
   * `offBranch`: the agent worked on another branch; every claim is rejected (verify.ts).
   */
  verify(
    iteration: number,
    prdBefore: string,
    headAfterAgent: string | null,
    offBranch?: AgentRunRecord['offBranch'],
    violation?: Violation,
  ): Promise<VerifyResult>;
  /**
   * Before the loop may exit 0 (SPEC §6 final gate): every check of every story once more on a fresh checkout of the
   * final commit. A story that fails there is set back to passes: false and the loop goes on.
   */
  finalGate(iteration: number): Promise<GateOutcome>;
  /** The local branch tips before the agent runs, so commits it makes anywhere can be named afterwards. */
  readBranchTips(): Promise<string[]>;
  /**
   * After each agent run, before verification: brings the work tree back to the loop's branch if the agent left it,
   * and ends the loop (WorkProtected, exit 6) when the agent rewrote the history the loop had verified.
   */
  inspectAgentGit(iteration: number, headBefore: string | null, tipsBefore: string[]): Promise<AgentGitOutcome>;
  /** A run killed at --iteration-timeout leaves a note in progress.txt and a trailer in its log for the next agent. */
  recordTimeout(iteration: number, result: AgentResult): void;

  detectRateLimit(text: string, now: Date): RateLimitHit | null;
  /** Why a run failed in a way worth repeating (at most 3 times), or null: ratelimit.ts `transientReason`. */
  transientReason(result: AgentResult): string | null;
  budget: Pick<BudgetGate, 'beforeIteration'>;
  /**
   * `at` says which save this is, so the real edge can fold them (run/deps.ts): only the end of an iteration must
   * reach the disk before the loop goes on; the others only need to be whole when read.
   */
  saveState(state: LoopState, at: SaveReason): void;
  /** Upkeep before each agent run (progress.txt compaction, committing an edited prompt). */
  beforeAgent(iteration: number): Promise<void>;
}

/** Which of the loop's saves a saveState call is (see LoopDeps.saveState). */
export type SaveReason = 'iteration-start' | 'cost' | 'verifying' | 'iteration-end';

export interface LoopConfig {
  /** 0: no cap. */
  maxIterations: number;
  /** The completion tag's word (--completion-promise). */
  completionPromise: string;
  pauseMs: number;
  noProgressLimit: number;
  maxCost?: number;
  /** First back-off after a transient failure (doubles each retry). */
  retryBaseMs: number;
  /** Back-off after a rate-limit message that names no reset time (doubles, capped). */
  rateLimitBackoffMs: number;
  /** --max-duration: when this invocation's time is up (epoch ms, the clock's); absent: no time limit. */
  deadline?: number;
  /** --max-duration as typed, for the exit message. */
  maxDurationMs?: number;
}

/** Where a repository is: its top level and git's folders, read in one git process (git/git.ts resolveRepo). */
export interface RepoLocation {
  top: string;
  /** This work tree's own git dir (HEAD, index). */
  gitDir: string;
  /** The common dir (config, hooks, refs, objects). */
  commonDir: string;
}
