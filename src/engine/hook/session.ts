// What `hook start` and `hook stop` share (SPEC §12, docs/agents.md "Claude Code Stop hooks"): the loop's limits
// against Claude Code's own cap on blocked stops, its state.json under ralph/.runs/<session id>/, and the run
// context the runner's verification is handed, so a stop verifies exactly as an iteration of the runner does.
import { appendFileSync, mkdirSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import type { LoopState } from '../store/state-types.js';
import type { RepoLocation, RunContext, RunIo } from '../types.js';
import type { RunOptions } from '../loop-options.js';
import type { Emit } from '../events.js';
import { DEFAULT_OPTIONS } from '../cli/args.js';
import { probeSandbox } from '../agents/sandbox.js';
import { resolvePaths } from '../plan-file.js';
import { loopDir } from '../store/layout.js';
import { readState, writeStateFile } from '../store/state-file.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull, realpathOrUndefined } from '../../util/read.js';
import { sameMac } from '../verify/anchors.js';
import { holdVerdictKey } from '../verify/trust.js';
import { readGitDirs, unpinGitDirs } from '../git/git.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';

/** How status names the agent of a loop inside a Claude Code session. */
export const IN_SESSION_AGENT = 'claude (in-session)';

/** Claude Code 2.1.332 ends a turn itself after this many consecutive blocked stops (measured, docs/agents.md). */
export const DEFAULT_BLOCK_CAP = 8;

/**
 * How long a stop may spend verifying. Claude Code lets the session stop when the hook outlives its timeout (600 s
 * as installed) and ignores what it prints later, so the checks get their own deadline well inside it.
 */
export const VERIFY_DEADLINE_MS = 540_000;

/** The options an in-session loop keeps (the rest are the runner's defaults: no agent runs here). */
export type SessionOptions = Pick<
  RunOptions,
  'maxIterations' | 'completionPromise' | 'checkTimeoutMs' | 'verifyInPlace'
>;

/** Claude Code's cap from the hook's environment: 0 is no cap; anything unreadable counts as the default (stops sooner). */
export function readBlockCap(env: NodeJS.ProcessEnv): number {
  const raw = env.CLAUDE_CODE_STOP_HOOK_BLOCK_CAP;
  if (raw === undefined || !/^\s*-?\d+\s*$/.test(raw)) return DEFAULT_BLOCK_CAP;
  return Math.max(0, Number(raw));
}

/**
 * The stops an in-session loop may count: its --max-iterations, and never more than Claude Code's cap, because a
 * turn the cap ends loses its final message (and the hook's say in it).
 */
export function planStopLimit(maxIterations: number, cap: number): number {
  // state.json is the agent's to write too: a limit that is not a whole number ≥ 1 is the default, never "none".
  const max = Number.isInteger(maxIterations) && maxIterations >= 1 ? maxIterations : DEFAULT_OPTIONS.maxIterations;
  return cap === 0 ? max : Math.min(max, cap);
}

/** The verification deadline: RALPH_HOOK_DEADLINE_MS (tests) or the default, never past the hook's own timeout. */
export function readVerifyDeadline(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.RALPH_HOOK_DEADLINE_MS);
  return Number.isInteger(ms) && ms > 0 ? Math.min(ms, VERIFY_DEADLINE_MS) : VERIFY_DEADLINE_MS;
}

/** The session's loop, or null when this session started none (or its state.json is not an in-session loop's). */
export function readSessionState(repoRoot: string, sessionId: string): LoopState | null {
  const state = readState(repoRoot, sessionId);
  return state && typeof state === 'object' && state.inSession === true && state.id === sessionId ? state : null;
}

/** Why a running loop's state.json cannot be counted on (a hand or an agent edited it), or null. */
export function sessionStateProblem(state: LoopState): string | null {
  if (!Number.isInteger(state.iteration) || state.iteration < 0)
    return `its iteration count is ${JSON.stringify(state.iteration)}, not a whole number`;
  if (!state.options || typeof state.options !== 'object') return 'it has no options';
  return null;
}

export function saveSessionState(repoRoot: string, state: LoopState, changes: Partial<LoopState>): void {
  Object.assign(state, changes, { updatedAt: new Date().toISOString() });
  writeStateFile(repoRoot, state);
}

/**
 * Only what `hook start` takes, each of its own type: state.json is a file the session can write, and one
 * `"repin": true` or `"reviewCmd"` slipped into it must not change how every later stop verifies. Nor does its
 * `verifyInPlace`: checks in the working tree with no pins is what an agent would choose, so that one comes from the
 * seal `hook start` wrote (readOptionsSeal).
 */
export function sessionOptionsOf(stored: Partial<RunOptions>): Partial<Omit<SessionOptions, 'verifyInPlace'>> {
  const picked: Partial<SessionOptions> = {};
  if (Number.isInteger(stored.maxIterations)) picked.maxIterations = stored.maxIterations;
  if (typeof stored.completionPromise === 'string') picked.completionPromise = stored.completionPromise;
  if (Number.isInteger(stored.checkTimeoutMs) && stored.checkTimeoutMs! > 0)
    picked.checkTimeoutMs = stored.checkTimeoutMs;
  return picked;
}

/** ralph/.runs/<id>/options-seal.json: what `hook start` was told and found, sealed with the verdict key. */
function optionsSealPath(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'options-seal.json');
}

type RepoDirs = Pick<RepoLocation, 'gitDir' | 'commonDir'>;

/** What a stop takes from the seal: --verify-in-place, and the git folders of the tree at `hook start`. */
export interface OptionsSeal {
  inPlace: boolean;
  /** null: no seal that checks out (no key, an older loop's, a file someone else wrote). */
  dirs: RepoDirs | null;
}

function sealOf(id: string, inPlace: boolean, dirs: RepoDirs, key: Buffer): string {
  return createHmac('sha256', key)
    .update(JSON.stringify(['ralphkit-session-options', 2, id, inPlace, dirs.gitDir, dirs.commonDir]))
    .digest('hex');
}

/**
 * At `hook start`: whether every stop verifies in the working tree, and the tree's git folders, sealed (a loop
 * started again in the session writes its own). No key: no seal; the stops then verify in a fresh checkout, the
 * runner's default, and cannot tell whether the tree's .git was pointed elsewhere.
 */
export function writeOptionsSeal(
  repoRoot: string,
  id: string,
  inPlace: boolean,
  dirs: RepoDirs,
  key: Buffer | null,
): void {
  const file = optionsSealPath(repoRoot, id);
  mkdirSync(path.dirname(file), { recursive: true });
  const mac = key ? sealOf(id, inPlace, dirs, key) : null;
  const body = { ralphkit: 2, loop: id, verifyInPlace: inPlace, gitDir: dirs.gitDir, commonDir: dirs.commonDir, mac };
  atomicWriteFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
}

/**
 * At a stop: the seal `hook start` wrote, when it checks out with the key; else { inPlace: false, dirs: null }. The
 * state asking for checks in the working tree without a seal that says so is said in the hook's log.
 */
export function readOptionsSeal(repoRoot: string, state: LoopState, emit: Emit): OptionsSeal {
  let doc: Record<string, unknown> | null = null;
  try {
    doc = JSON.parse(readTextOrNull(optionsSealPath(repoRoot, state.id)) ?? 'null');
  } catch {
    doc = null;
  }
  const key = holdVerdictKey(emit);
  const dirs =
    typeof doc?.gitDir === 'string' && typeof doc.commonDir === 'string'
      ? { gitDir: doc.gitDir, commonDir: doc.commonDir }
      : null;
  const sealed =
    key !== null &&
    dirs !== null &&
    doc?.loop === state.id &&
    typeof doc.verifyInPlace === 'boolean' &&
    sameMac(doc.mac, sealOf(state.id, doc.verifyInPlace, dirs, key));
  const inPlace = sealed && doc?.verifyInPlace === true;
  if (!inPlace && (doc?.verifyInPlace === true || state.options?.verifyInPlace === true))
    emit({
      type: 'warn',
      message: `verifying in a fresh checkout: the loop's state asks for checks in the working tree (--verify-in-place), which ${key ? 'hook start did not seal' : 'no key can check'} (${path.relative(repoRoot, optionsSealPath(repoRoot, state.id))})`,
    });
  return { inPlace, dirs: sealed ? dirs : null };
}

/**
 * Before a stop's git reads anything: the tree's git folders are the ones `hook start` sealed. A linked worktree's
 * .git is a file the session can point at a repository of its own, where the stop would verify, and record, work its
 * branch never got. Held for this process's later git calls (git.ts pinGitDirs).
 */
export async function holdSessionRepo(repoRoot: string, seal: OptionsSeal): Promise<void> {
  const now = await readGitDirs(repoRoot);
  if (!seal.dirs) return;
  const real = (p: string) => realpathOrUndefined(p) ?? path.resolve(p);
  if (real(now.gitDir) === real(seal.dirs.gitDir) && real(now.commonDir) === real(seal.dirs.commonDir)) return;
  unpinGitDirs(repoRoot);
  throw new LoopExit(
    LOOP_EXIT.protected,
    `the tree's .git names another git folder (${now.gitDir}) than when the loop started (${seal.dirs.gitDir}): the stop would verify and record in a repository of someone else's making`,
    `look at ${path.join(repoRoot, '.git')}; put it back to name ${seal.dirs.gitDir}, then start the loop again: /ralph-loop`,
  );
}

/** ralph/.runs/<id>/hook.log: what each stop's verification said, since Claude Code shows the hook's stderr to nobody. */
export function hookLogPath(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'hook.log');
}

/** An emitter that writes the verification's info and warning lines to hook.log, and keeps the warnings. */
export function createHookEmit(repoRoot: string, id: string, warnings: string[]): Emit {
  const file = hookLogPath(repoRoot, id);
  return (event) => {
    if (event.type !== 'info' && event.type !== 'warn') return;
    if (event.type === 'warn') warnings.push(event.message);
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      appendFileSync(file, `${new Date().toISOString()} ${event.type} ${event.message}\n`);
    } catch {
      /* the log is for people; a stop must not fail on it */
    }
  };
}

/**
 * The run context the runner's verification path (run/deps.ts verifyInput) takes, for this session's loop.
 * `inPlace`: what `hook start` was told; a stop's comes from the seal (readOptionsSeal).
 */
export function sessionRun(repoRoot: string, state: LoopState, io: RunIo, emit: Emit, inPlace = false): RunContext {
  // The runner's default: the checks run under the sandbox wherever bubblewrap works (the session's own agent is
  // Claude Code's, not the runner's). Never from state.json, which the session can write.
  const options: RunOptions = {
    ...DEFAULT_OPTIONS,
    ...sessionOptionsOf(state.options),
    verifyInPlace: inPlace,
    agent: 'claude',
    sandbox: probeSandbox(io.env).ok,
  };
  const paths = resolvePaths(repoRoot, repoRoot, options, new Set());
  return {
    id: state.id,
    options,
    paths,
    resumed: state,
    baseline: null,
    io,
    emit,
    command: IN_SESSION_AGENT,
    branch: '',
  };
}
