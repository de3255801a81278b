// A loop's options as the runner holds them (cli/args.ts parses them; run/options.ts holds the rules between them),
// and the names of the agents and delivery modes they choose from.

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
