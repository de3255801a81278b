// Contracts between the loop (src/engine/core/loop.ts) and the modules it calls at its edges.
// Each is implemented in its own file; the loop receives them through LoopDeps so tests can fake them.
import type { Prd } from '../prd/types.js';
import type { Emit } from './events.js';
import type { Tag } from './core/tags.js';
import type { Fingerprint, GitDirs } from './git/fingerprint.js';

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
  /**
   * `prdBefore` parsed, when the runner holds it (the settled baseline, frozen): a plan the agent left byte for byte as
   * it was is then verified without parsing it again.
   */
  prdBeforeParsed?: Prd;
  /** `prdBefore` as bytes, with prdBeforeParsed: an untouched file is recognised without decoding it. */
  prdBeforeBytes?: Buffer;
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
  /** A worker of a --parallel run: the one story it may claim; claims of any other story are rejected. */
  story?: string;
  /** With --sandbox, checks run under bubblewrap too (they execute the agent's code): see verify/session.ts. */
  sandbox?: CheckSandbox;
  /** HOME seed, PATH listing and toolchain variables taken at loop start (verify/check-env.ts); taken now when absent. */
  checkBase?: CheckEnvBase;
  /** Runner-owned files in the working tree the runner restored this iteration: committed with its own edits. */
  extraOwnFiles?: string[];
  /** How the owner changes the plan of this kind of loop, for the warning when plan edits are undone (default: the runner's). */
  planEditHint?: string;
  log: (level: 'info' | 'warn', message: string) => void;
  now?: () => Date;
  /** The repository's top level, real path; the runner resolves it once per run (it cannot change). Read when absent. */
  topLevel?: string;
  /** HEAD as the loop read it right after the agent exited (null: no commit yet), so it is not read twice. Read when absent. */
  headAfterAgent?: string | null;
  /** Lets a pass with no claims skip `git status` when the runner's own files are as they were when it last listed none. */
  ownStatus?: OwnStatusMemo;
  /**
   * Called once the checks (or a reviewer) are over and what they left running is stopped: puts back the engine, git's
   * configuration and hooks they changed, as after an agent run. A reason when the change rejects the claims.
   */
  guardTrusted?: (who: 'the checks' | 'the reviewer') => string | undefined;
  /** Set when a reviewer is configured (--review-agent / --review-cmd): claims that pass their checks are reviewed. */
  review?: ReviewSetup;
}

/** What verification needs to run the reviewer (verify/review.ts, SPEC §11). */
/** Taken when the loop starts, before any agent runs: where the reviewer's login lives, and Codex's settings file (verify/review-home.ts). */
export type ReviewerLogin =
  | { agent: 'claude'; credentialsDir: string }
  | { agent: 'codex'; codexHome: string; config: Buffer | null };

export interface ReviewSetup {
  agent: AgentName;
  agentCmd?: string;
  /** The --review-agent's binary as found at start, absolute: not looked up on PATH again at each review. */
  bin?: string;
  /** Claude Code's or Codex's login and settings as they were at start (verify/review-home.ts): its own config folder. */
  login?: ReviewerLogin;
  model?: string;
  /** ralph/review.md relative to the top level: read at the plan commit, where the agent cannot rewrite it. */
  instructionsPath: string;
  /** The loop's runtime folder: the reviewer's logs (and Codex's last-message file) go under it. */
  runDir: string;
  /** The runner's environment; the reviewer gets the agent's (no runner secrets) plus RALPH_REVIEW=1. */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** First back-off after a transient failure of the reviewer (the loop's, doubling; RALPH_RETRY_MS in tests). */
  retryBaseMs: number;
  /** The loop's last verified commit (or its plan commit): the review's diff starts there. */
  base: string | null;
  /**
   * Counts one reviewer run's cost against the loop's budget as soon as it exits; undefined: the run whose answer is
   * used reported none (the unpriced rule; a transient failure retried is not that run).
   */
  spend: (costUsd: number | undefined) => void;
}

/** verify.ts: git's folders, and the fingerprint (git/fingerprint.ts) of the last status that listed none of the runner's files. */
export interface OwnStatusMemo {
  dirs: GitDirs;
  clean: Fingerprint | null;
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
  /** Paths the plan commit lacks whose absence is pinned besides the globs (a GNUmakefile beside a pinned Makefile). */
  absentPaths?: string[];
  /** The repository's object hash: what the pinned bytes are hashed with against their ids. */
  format: 'sha1' | 'sha256';
  /**
   * Every file committed at the plan commit (path → mode and blob id), read from the commit down with each object
   * hashed against its id (git/objects.ts): never what the object store says now, which the agent can rewrite.
   */
  tree: ReadonlyMap<string, { mode: string; oid: string }>;
  /** The bytes of each pinned path (submodules aside), hashed against its id when read: what every checkout gets. */
  held: ReadonlyMap<string, Buffer>;
}

export interface StoryVerdict {
  id: string;
  /** verified: checks ran and passed · unverified: no checks exist, accepted on the agent's word · rejected: claim undone */
  status: 'verified' | 'unverified' | 'rejected';
  reason?: string;
  /** The reviewer's SHIP that let the claim count (SPEC §11), for the sealed verdict record. */
  shipped?: ShippedReview;
}

/** Who shipped a story, with which model, at which commit (verify/review.ts). */
export interface ShippedReview {
  reviewer: string;
  model: string | null;
  commit: string;
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
  /** With allPass after the final gate: verified stories whose only proof is a weak check. */
  weak?: string[];
}

/** How checks are sandboxed: bubblewrap, the user's HOME (writable: caches), and what stays read-only or hidden. */
/** What the runner holds from loop start to build every check environment from. */
/** The checks' environment as the runner took it at loop start (verify/check-env.ts). */
export interface CheckEnvBase {
  /** The real HOME at loop start. */
  home: string | undefined;
  /** Files of the user's HOME tools need (relative path, bytes at loop start), copied into each check HOME. */
  seed: Array<{ file: string; bytes: Buffer }>;
  /** npm's global configuration file at loop start (it lives in the node install, often under HOME with nvm). */
  npmGlobal: Buffer | null;
  /** Each PATH folder in order; `listing` when the agent could write it (null: it did not exist). */
  path: Array<{ dir: string; listing?: Record<string, string> | null }>;
  /** Variables pointing at the user's toolchains and caches, so a tool still finds them with another HOME. */
  keep: Record<string, string>;
}

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
  /** Verified stories whose only proof is a weak check (verify/final-gate.ts). */
  weak?: string[];
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

export type LoopStatus =
  | 'running'
  | 'complete'
  | 'not-merged'
  | 'max-iterations'
  | 'max-duration'
  | 'stuck'
  | 'no-progress'
  | 'budget'
  | 'protected'
  | 'interrupted'
  | 'cancelled'
  | 'refused'
  | 'failed';

/** Options that belong to one invocation, not to the loop: never stored in state.json, not kept by --resume. */
export type PerInvocation =
  | 'resume'
  | 'resumeLast'
  | 'name'
  | 'dryRun'
  | 'help'
  | 'json'
  | 'notify'
  | 'onExit'
  | 'webhook'
  | 'acceptPinChanges'
  | 'repin'
  | 'acceptPlanEdits';

/** ralph/.runs/<id>/state.json (SPEC §4). */
export interface LoopState {
  id: string;
  agent: string;
  prd: string;
  /** The iteration in progress, or the last one started. */
  iteration: number;
  /** False while `iteration` is still running: a resumed loop repeats it. */
  iterationDone: boolean;
  maxIterations: number;
  status: LoopStatus;
  pid: number;
  /** When `pid` started (Linux: clock ticks since boot), so a pid the OS gave to another process is not taken for the runner. */
  pidStart?: number;
  /** The agent's process group while it runs, so a resumed loop can clean up after a killed runner. */
  agentPid?: number;
  /** When `agentPid` started; written by writeState, never set by hand. */
  agentPidStart?: number;
  startedAt: string;
  updatedAt: string;
  costUsd: number;
  /** The part of `costUsd` the reviewer's runs reported (--review-agent claude); absent until a reviewer reports one. */
  reviewCostUsd?: number;
  /**
   * Reviewer runs that reported no cost. Written by the review gate while an iteration's claims are verified, so the
   * loop can count an iteration whose reviewer reported no cost as unpriced, as one whose agent reported none.
   */
  reviewRunsUnpriced?: number;
  exitCode: number | null;
  message?: string;
  /** Iterations in a row that ended without progress (see docs/engine.md, "No progress"). */
  noProgressStreak: number;
  /**
   * Set when the agent of `iteration` has exited and its claims are being verified; removed when the iteration
   * is done. A resumed loop that finds it finishes the verification instead of running the agent again.
   */
  verifying?: AgentRunRecord;
  // Output format and one-shot flags belong to each invocation, not to the loop. `agent` is left out when
  // `agentCmd` is set, so the file never names an agent that is not the one running.
  options: Omit<RunOptions, PerInvocation | 'agent'> & { agent?: RunOptions['agent'] };
  /**
   * Set for a loop inside a Claude Code session (`/ralph-loop`, SPEC §12): its id is the session's, `pid` is Claude
   * Code's, and each stop of the session is one iteration, counted by the Stop hook (engine/hook/).
   */
  inSession?: true;
  /** Set when the loop was interrupted while --deliver pr-merge waited for CI: every story passed its final gate. */
  mergePending?: true;
  /** Set for a --worktree loop (git/worktree.ts): the tree it works in, beside the repository, and its branch. */
  worktree?: { path: string; branch: string };
  /** The plan's branch (`branchName`): where `status` and the dashboard read the loop's stories when the tree is elsewhere. */
  branch?: string;
  /** Set for a --parallel run: its workers, its merge queue and the stories merged so far (run/parallel/). */
  parallel?: ParallelState;
}

/** Where one worker of a --parallel run is. */
export type WorkerPhase = 'idle' | 'agent' | 'verifying' | 'queued' | 'merging';

/** One worker of a --parallel run: its worktree, and the story it works on (none while idle). */
export interface WorkerState {
  /** 1..n. */
  worker: number;
  /** Its worktree, beside the repository (`<repo>.ralph-worktrees/<loop id>--w<n>`). */
  path: string;
  phase: WorkerPhase;
  /** The story it works on; absent while idle. */
  story?: string;
  /** Its story branch, `<branchName>--<story id>`. */
  branch?: string;
  /** The run-wide number of its current (or last) agent run: iterations count agent runs over all workers. */
  iteration?: number;
  /** When its current story attempt started (ISO). */
  startedAt?: string;
  /** The agent's process group while it runs (as LoopState.agentPid), so a resume can stop it after a kill -9. */
  agentPid?: number;
  /** When `agentPid` started; written by writeState, never set by hand. */
  agentPidStart?: number;
}

/** A story verified on its branch, waiting for its turn in the merge queue (and verified again after the merge). */
export interface QueuedMerge {
  story: string;
  /** The story branch's verified head. */
  head: string;
  worker: number;
}

export interface ParallelState {
  /** How many workers (--parallel n). */
  workers: number;
  /** One entry per worker, in worker order. */
  states: WorkerState[];
  /** Stories waiting to be merged, first in line first. */
  queue: QueuedMerge[];
  /** Stories merged onto the plan's branch by this run, in merge order. */
  merged: string[];
  /** Failed attempts in a row per story; a story that reaches --no-progress-limit is given up. */
  attempts: Record<string, number>;
  /** Stories given up on (the agent said STUCK, or too many failed attempts) with the reason. */
  givenUp: Record<string, string>;
}

/** What the loop knows of an agent run once it has exited: all that is needed to finish its iteration without it. */
export interface AgentRunRecord {
  headBefore: string | null;
  headAfter: string | null;
  tag: Tag | null;
  /** Set when the agent committed on another branch: its claims, read before the runner switched back, are all rejected. */
  offBranch?: { prdAfter: string; reason: string };
  /** Set when the agent changed the runner's files or git's configuration: put back, and every claim rejected. */
  violation?: Violation;
}

/** What the runner found after an agent run (run/after-agent.ts `inspectAgentGit`). */
export interface AgentGitOutcome {
  /** HEAD on the loop's branch, after switching back if the agent had left it. */
  headAfter: string | null;
  offBranch?: { prdAfter: string; reason: string };
  violation?: Violation;
}

/** VerifyInput plus the loop's abort signal, so Ctrl-C stops a running check (it has its own process group). */
export type VerifyOptions = VerifyInput & { signal?: AbortSignal; offBranch?: OffBranchClaims };

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
  /** Set when the loop's end is recorded (run.ts finish), for what is announced after the locks are released. */
  ending?: LoopEnding;
  /**
   * Set once the runner's files are held (run.ts): puts back what changed since (the guard's restore) and returns the
   * changes that make git run code or change where it goes. Every push calls it first (deliver.ts).
   */
  restoreGuard?: () => string[];
  /** The run's pins, once taken (run.ts): --deliver pr-merge never merges a branch that changed them. */
  pins?: Pins | null;
  /** The commit the final gate passed on, and whether every story it judged was verified (not on the agent's word). */
  gatePassed?: { commit: string; allVerified: boolean };
  /** Set when Ctrl-C stopped pr-merge's wait for CI (deliver-merge.ts), for the state's mergePending. */
  mergeInterrupted?: boolean;
  /** Branch patterns of a --parallel run that other workers and the merge queue move (after-agent.ts warnings skip them). */
  siblingBranches?: string[];
  /** Set by the runner's SIGINT/SIGTERM/SIGHUP handler (run.ts): a failure from then on is read as the interrupt. */
  signalled?: NodeJS.Signals;
  /** Set when the end of the loop was already delivered (pr-merge pushes and merges before the loop's end is recorded). */
  deliveredAtEnd?: boolean;
}

export const AGENT_NAMES = ['claude', 'codex', 'amp', 'opencode', 'gemini'] as const;

export type AgentName = (typeof AGENT_NAMES)[number];

/** Everything `run` can be told; stored in state.json so `--resume` continues with the same settings. */
export interface RunOptions {
  agent: AgentName;
  agentCmd?: string;
  prd: string;
  prompt: string;
  name?: string;
  resume?: string;
  resumeLast: boolean;
  /** 0: no cap (then a budget must bound the run). */
  maxIterations: number;
  /** The word of the completion tag, `<promise>WORD</promise>` (--completion-promise, default COMPLETE). */
  completionPromise: string;
  iterationTimeoutMs: number;
  /** --max-duration: no iteration starts after this long from the start of each invocation, and an agent still running then is stopped. */
  maxDurationMs?: number;
  pauseMs: number;
  maxCost?: number;
  maxUsage?: number;
  wait: boolean;
  waitNextSession: boolean;
  allowUnknownUsage: boolean;
  noProgressLimit: number;
  json: boolean;
  dryRun: boolean;
  /** Checks in the working tree (--verify-in-place) instead of a fresh checkout of the claimed commit. */
  verifyInPlace: boolean;
  checkTimeoutMs: number;
  /** Take the pins again at HEAD when resuming (--repin). */
  repin: boolean;
  /** Accept the owner's edits to the plan found on resume (--accept-plan-edits). */
  acceptPlanEdits: boolean;
  /** Run even when ralph/ralph.mjs, ralph.sh or the manifest differ from what ralphkit installed. */
  allowModifiedEngine: boolean;
  /** Probe each story check on the plan commit at start and warn when it already passes. */
  weakCheck: boolean;
  /** Run the loop in its own git worktree on the plan's branch (--worktree), beside the repository. */
  worktree: boolean;
  /**
   * --parallel <n>: n workers on one plan, each an agent in its own worktree on its own story branch, with a merge
   * queue that verifies every story again after it is merged onto the plan's branch (run/parallel/). Absent: one loop.
   */
  parallel?: number;
  /** Run the agent under bubblewrap (--sandbox), with or without network. */
  sandbox: boolean;
  network: boolean;
  /**
   * What happens to the plan branch's commits (--deliver): kept local (commit), pushed too (push), and a pull request
   * (pr), merged once the repository's CI passed on the verified head (pr-merge).
   */
  deliver: DeliverMode;
  /** --deliver pr-merge: how long to wait for the repository's CI on the pull request's head (--merge-timeout). */
  mergeTimeoutMs: number;
  /** --deliver pr-merge: merge although the branch changed pinned tests (typed each time, never stored). */
  acceptPinChanges: boolean;
  /** The end-of-loop notifications; each invocation's own, never stored in state.json (the webhook is a secret). */
  notify: boolean;
  onExit?: string;
  webhook?: string;
  /** The reviewer (SPEC §11): one of the runner's agents (--review-agent) or a shell command (--review-cmd). */
  reviewAgent?: AgentName;
  reviewCmd?: string;
  /** --review-model: passed to a --review-agent with its own model flag; for --review-cmd only recorded. */
  reviewModel?: string;
  help: boolean;
}

export const DELIVER_MODES = ['commit', 'push', 'pr', 'pr-merge'] as const;

export type DeliverMode = (typeof DELIVER_MODES)[number];

/** How a loop ended, as its notifications report it (deliver/announce.ts). */
export interface LoopEnding {
  id: string;
  code: number;
  status: LoopStatus;
  /** The last iteration started. */
  iterations: number;
  /** Stories not set aside, and those of them that pass in the plan as the runner last settled it; null: unreadable. */
  storiesPassed: number | null;
  storiesTotal: number | null;
  /** null when the agent reports no cost (any agent but Claude Code, or --agent-cmd). Includes the reviewer's. */
  costUsd: number | null;
  /** The reviewer's part of `costUsd`, when a reviewer reported one. */
  reviewCostUsd?: number;
}

/**
 * The agent committed on another branch and the runner switched back: its claims are read from the plan as the
 * agent left it (`prdAfter`, no longer on disk) and every one is rejected for `reason`, without running a check.
 */
export interface OffBranchClaims {
  prdAfter: string;
  reason: string;
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
