// What verification is given and what it returns (verify/verify.ts, final-gate.ts, review.ts): the pins, the check
// environment and sandbox, the reviewer's setup, the verdicts.
import type { Fingerprint, GitDirs } from '../git/fingerprint.js';
import type { Prd } from '../../prd/types.js';
import type { AgentName } from '../loop-options.js';

/** src/engine/verify/verify.ts — SPEC §6. */
export interface VerifyInput {
  repoRoot: string;
  prdPath: string;
  progressPath: string;
  ledgerPath: string;
  loopId: string;
  iteration: number;
  /**
   * The claims are the owner's word, not the agent's: stories a new loop's plan commit already says pass (verified,
   * never reviewed). A resumed loop's flips are the agent's, `--repin` or not.
   */
  ownersWord?: boolean;
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

/**
 * Taken when the loop starts, before any agent runs: where the reviewer's login lives, and the settings it cannot log
 * in without, as they were then (verify/review-home.ts).
 */
export type ReviewerLogin =
  | { agent: 'claude'; credentialsDir: string }
  /** config: Codex's config.toml (the model provider). */
  | { agent: 'codex'; codexHome: string; config: Buffer | null }
  /** geminiDir: the user's ~/.gemini; auth: its `security.auth` setting (which login to use). */
  | { agent: 'gemini'; geminiDir: string; auth: Record<string, unknown> | null }
  /**
   * dataDir: the folder holding auth.json; config: the model-provider keys of the user's configuration; wellKnown: the
   * auth.json entries that load configuration from a server ("type": "wellknown"), as they were.
   */
  | { agent: 'opencode'; dataDir: string; config: Record<string, unknown> | null; wellKnown: string[] }
  /** dataDir: the folder holding secrets.json; url: the `amp.url` setting (the server the key is for). */
  | { agent: 'amp'; dataDir: string; url: string | null };

/** What verification needs to run the reviewer (verify/review.ts, SPEC §11). */
export interface ReviewSetup {
  agent: AgentName;
  agentCmd?: string;
  /** The --review-agent's binary as found at start, absolute: not looked up on PATH again at each review. */
  bin?: string;
  /** The --review-agent's login and settings as they were at start (verify/review-home.ts): its own config folder. */
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
  /** The last commit a reviewer shipped in this run (or the plan commit): the review's diff starts there. */
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
  /** Globs of paths whose absence is pinned in what a commit adds only, not after setup (planCommittedAbsentPaths). */
  committedAbsent?: string[];
  /**
   * The repository's folders on PATH at loop start, relative ('' for its top): a check runs a bare program name from
   * its checkout's copy of them, so the programs directly in them (executables and links) are pinned, and one a
   * commit adds or makes executable there is removed, whatever `absent` says.
   */
  pathFolders?: string[];
  /** The repository's object hash: what the pinned bytes are hashed with against their ids. */
  format: 'sha1' | 'sha256';
  /**
   * Every file committed at the plan commit (path → mode and blob id), read from the commit down with each object
   * hashed against its id (git/objects.ts): never what the object store says now, which the agent can rewrite.
   */
  tree: ReadonlyMap<string, { mode: string; oid: string }>;
  /** The bytes of each pinned path (submodules aside), hashed against its id when read: what every checkout gets. */
  held: ReadonlyMap<string, Buffer>;
  /**
   * The runner's own files (the engine, its launcher, the manifest) by blob id (null: not committed), as HEAD held
   * them when the loop started: a claimed commit that holds one otherwise is refused (refuseRunnerFileChange).
   */
  runnerFiles?: ReadonlyMap<string, string | null>;
}

export interface StoryVerdict {
  id: string;
  /** verified: checks ran and passed · unverified: no checks exist, accepted on the agent's word · rejected: claim undone */
  status: 'verified' | 'unverified' | 'rejected';
  reason?: string;
  /** The reviewer's SHIP that let the claim count (SPEC §11), for the sealed verdict record. */
  shipped?: ShippedReview;
  /**
   * Rejected because a check (or the setup) failed, and for nothing else: not the claim's form, nor a change the guard
   * found, nor the reviewer. Such work may pass on a newer base (run/parallel/stale-base.ts).
   */
  failedCheck?: true;
}

/** Who shipped a story, with which model, at which commit (verify/review.ts). */
export interface ShippedReview {
  reviewer: string;
  model: string | null;
  commit: string;
  /**
   * Where the reviewed diff started (this run's SHIPs only; not sealed): the files the reviewer read changes of, which
   * the final gate holds against later commits no reviewer read (verify/shipped.ts findStaleShips).
   */
  base?: string | null;
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

/**
 * What the runner holds from loop start to build every check environment from: the checks' environment as it took it
 * then (verify/check-env.ts).
 */
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
  /** The repository's top level at loop start, real path. */
  repo?: string;
  /**
   * PATH folders inside `repo`, left out of every PATH the runner gives (the agent can write what they load); a check
   * gets the checkout's own copies of them (withCheckoutPath).
   */
  leftOut?: string[];
  /** The same folders relative to `repo` as they were at loop start ('' for its top), in order. */
  leftOutRel?: string[];
  /**
   * The variables whose value named the repository at loop start, other than PATH (check-env.ts planRepoVars): each
   * check, setup and review gets them naming its checkout, or not at all.
   */
  repoVars?: Record<string, RepoVar>;
}

/**
 * What a variable naming the repository becomes for a check: `drop`, left out; `rewrite`, its value at loop start in
 * parts, each path into the repository (a folder) as where it is there, made again for each checkout.
 */
export type RepoVar =
  | { how: 'drop' }
  | { how: 'rewrite'; value: string; parts: Array<string | { rel: string; url: boolean }> };

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
  /** Verified stories whose only proof is a weak check (verify/final-gate.ts). */
  weak?: string[];
}

/** VerifyInput plus the loop's abort signal, so Ctrl-C stops a running check (it has its own process group). */
export type VerifyOptions = VerifyInput & { signal?: AbortSignal; offBranch?: OffBranchClaims };

/**
 * The agent committed on another branch and the runner switched back: its claims are read from the plan as the
 * agent left it (`prdAfter`, no longer on disk) and every one is rejected for `reason`, without running a check.
 */
export interface OffBranchClaims {
  prdAfter: string;
  reason: string;
}
