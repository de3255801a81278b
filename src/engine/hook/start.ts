// `ralph.mjs hook start`: starts a loop inside the current Claude Code session (what `/ralph-loop` runs). It records
// the plan commit (the pins) and the plan as the baseline under refs/ralphkit/, sealed as the runner does at its start, and
// writes ralph/.runs/<session id>/state.json; from then on each stop of the session is an iteration that the Stop
// hook (stop.ts) verifies. What it prints is the loop's prompt: Claude Code hands it to the model.
import { probeSandbox } from '../agents/sandbox.js';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { readTextOrNull } from '../../util/read.js';
import { parseArgs } from 'node:util';
import type { LoopState } from '../store/state-types.js';
import type { RunIo } from '../types.js';
import type { Prd } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { DEFAULT_OPTIONS, completionWord, duration, integer, renderParseError } from '../cli/args.js';
import { readGitDirs, resolveRepoRoot } from '../git/git.js';
import { currentBranch, headSha } from '../git/head.js';
import { checkPromptFile, readPlan, refuseExamplePlan } from '../plan-file.js';
import { renderPreamble } from '../core/preamble.js';
import { anchorNewLoop } from '../verify/anchors.js';
import { holdVerdictKey } from '../verify/trust.js';
import { LOOP_ID, statePath } from '../store/layout.js';
import { clearCancelMarker } from '../store/cancel.js';
import { guardStart, storedOptions } from '../store/state-file.js';
import { refuseBusyTree } from '../store/locks.js';
import { processStart } from '../processes.js';
import { LoopExit, usageExit, LOOP_EXIT } from '../errors.js';
import {
  IN_SESSION_AGENT,
  createHookEmit,
  planStopLimit,
  readBlockCap,
  readSessionState,
  saveSessionState,
  sessionRun,
  writeOptionsSeal,
  type SessionOptions,
} from './session.js';

const START_HINT =
  'in Claude Code, type: /ralph-loop --max-iterations 5 (ralphkit install --claude-hook adds that command)';

const SPEC = {
  'max-iterations': { type: 'string' },
  'completion-promise': { type: 'string' },
  'check-timeout': { type: 'string' },
  'verify-in-place': { type: 'boolean' },
  'session-id': { type: 'string' },
} as const;

export async function runHookStart(argv: string[], io: RunIo): Promise<number> {
  // The runner's own agent runs are already looped by the runner: a loop inside one would fight it.
  if (io.env.RALPH_RUNNER === '1' || io.env.RALPH_REVIEW === '1')
    throw new LoopExit(
      LOOP_EXIT.refused,
      "hook start: this session is run by ralphkit's runner (RALPH_RUNNER=1), which already loops and verifies it",
      'start in-session loops only in your own Claude Code session',
    );
  const { options, sessionId } = parseStartArgs(argv, io.env);
  const repoRoot = await resolveRepoRoot(io.cwd);
  const top = realpathSync(repoRoot);
  const warnings: string[] = [];
  const state = newSessionState(sessionId, options, io.env);
  const run = sessionRun(repoRoot, state, io, createHookEmit(repoRoot, sessionId, warnings), options.verifyInPlace);
  if (!run.options.sandbox)
    warnings.push(
      `the checks of each stop run without the sandbox (${describeNoSandbox(io.env)}): the code they run has your rights`,
    );
  if (!hasStopHook(repoRoot))
    warnings.push(
      "ralphkit's Stop hook is not in .claude/settings.json or .claude/settings.local.json, so no stop will be verified and the loop will not go round; add it with: ralphkit install --claude-hook",
    );
  const prd = await readPlan(run.paths, run.emit);
  refuseExamplePlan(prd, run.paths);
  checkPromptFile(run.paths);
  const head = await headSha(repoRoot);
  if (!head)
    throw new LoopExit(
      LOOP_EXIT.refused,
      'hook start: this repository has no commit yet, so there is no plan commit to pin the tests at',
      'commit the plan and the code (git add -A && git commit -m "plan"), then start the loop again',
    );
  refuseBusyTree(repoRoot, sessionId);
  // The session works on the branch it is on, not the plan's branchName: status and the dashboard hold its sealed
  // verdicts against that branch's tip (store/loop-plan.ts).
  const branch = await currentBranch(repoRoot);
  if (branch) state.branch = branch;
  const baseline = renderStartBaseline(prd);
  // Sealed as the runner seals its refs (verify/anchors.ts): each stop holds them against the seal before using them.
  const key = holdVerdictKey(run.emit);
  await anchorNewLoop(top, sessionId, head, baseline, key);
  writeOptionsSeal(repoRoot, sessionId, options.verifyInPlace, await readGitDirs(repoRoot), key);
  const replaced = readSessionState(repoRoot, sessionId)?.status === 'running';
  clearCancelMarker(repoRoot, sessionId);
  guardStart(
    repoRoot,
    statePath(repoRoot, sessionId),
    () => saveSessionState(repoRoot, state, {}),
    'the in-session loop cannot record its state',
  );
  recheckBusyTree(repoRoot, state);
  io.stdout(
    renderStartMessage(state, replaced, warnings) +
      renderPreamble(run.paths, options, prd) +
      readFileSync(run.paths.prompt, 'utf8'),
  );
  return 0;
}

function parseStartArgs(argv: string[], env: NodeJS.ProcessEnv): { options: SessionOptions; sessionId: string } {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: SPEC, allowPositionals: false, strict: true }));
  } catch (err) {
    throw usageExit(`hook start: ${renderParseError((err as Error).message, argv)}`, START_HINT);
  }
  const sessionId = values['session-id'] ?? env.CLAUDE_CODE_SESSION_ID;
  if (!sessionId)
    throw usageExit(
      'hook start: no Claude Code session to loop in (no --session-id, and CLAUDE_CODE_SESSION_ID is not set)',
      START_HINT,
    );
  if (!LOOP_ID.test(sessionId))
    throw usageExit(`hook start: "${sessionId}" is not a session id ralphkit can name a folder after`, START_HINT);
  return {
    sessionId,
    options: {
      maxIterations:
        values['max-iterations'] === undefined
          ? DEFAULT_OPTIONS.maxIterations
          : integer(values['max-iterations'], '--max-iterations', 1),
      completionPromise:
        values['completion-promise'] === undefined
          ? DEFAULT_OPTIONS.completionPromise
          : completionWord(values['completion-promise']),
      checkTimeoutMs:
        values['check-timeout'] === undefined
          ? DEFAULT_OPTIONS.checkTimeoutMs
          : duration(values['check-timeout'], '--check-timeout', 1),
      verifyInPlace: values['verify-in-place'] === true,
    },
  };
}

/**
 * A runner that took the tree between the check above and the state's write did not see this loop; this check sees
 * it (the runner holds its lock before it reads the states). Two starts at once may both refuse, never both run.
 */
function recheckBusyTree(repoRoot: string, state: LoopState): void {
  try {
    refuseBusyTree(repoRoot, state.id);
  } catch (err) {
    if (err instanceof LoopExit)
      saveSessionState(repoRoot, state, { status: 'failed', exitCode: err.code, message: err.message });
    throw err;
  }
}

/** The hook `install --claude-hook` adds, in the project's settings (it may also live in the user's own, unseen here). */
function hasStopHook(repoRoot: string): boolean {
  return ['settings.json', 'settings.local.json'].some((name) => {
    const text = readTextOrNull(path.join(repoRoot, '.claude', name));
    return text !== null && /ralph\.mjs\\?"?\s+hook\s+stop/.test(text);
  });
}

/** Claude Code runs the command (and the hook) as a child of itself: its pid tells status whether the session is alive. */
function newSessionState(id: string, options: SessionOptions, env: NodeJS.ProcessEnv): LoopState {
  const pid =
    Number(env.CLAUDE_PID) > 0 && Number.isInteger(Number(env.CLAUDE_PID)) ? Number(env.CLAUDE_PID) : process.ppid;
  const now = new Date().toISOString();
  const stored = { ...DEFAULT_OPTIONS, ...options, agent: 'claude' as const };
  const { agent: _a, ...kept } = storedOptions(stored);
  return {
    id,
    agent: IN_SESSION_AGENT,
    prd: DEFAULT_OPTIONS.prd,
    iteration: 0,
    iterationDone: true,
    maxIterations: planStopLimit(options.maxIterations, readBlockCap(env)),
    status: 'running',
    pid,
    pidStart: processStart(pid),
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: kept,
    inSession: true,
  };
}

/**
 * The baseline the first stop judges claims against: the plan as it is, with every story that already says
 * `passes: true` (and is not set aside) set back to false, so the first stop verifies them as claims (SPEC §4: a
 * plan never ends a loop on its own word), as the runner does before its first iteration.
 */
export function renderStartBaseline(prd: Prd): string {
  const stories = prd.userStories.map((s) => (s.passes === true && !isSkipped(s) ? { ...s, passes: false } : s));
  return `${JSON.stringify({ ...prd, userStories: stories }, null, 2)}\n`;
}

function renderStartMessage(state: LoopState, replaced: boolean, warnings: string[]): string {
  const limit = state.maxIterations;
  const lines = [
    `ralph: ${replaced ? 'restarted the' : 'started an'} in-session loop for this session (${state.id}): at most ${limit} stop${limit === 1 ? '' : 's'}.`,
    'Each time you stop, ralphkit verifies every story you marked `passes: true` since the last stop, as its runner does (a fresh checkout of your commit, the tests as pinned at the plan commit). If a claim fails or stories are left, the stop is refused and you are sent back with the reasons; the loop ends when every story is verified, when you say <promise>STUCK</promise>, or at the limit.',
    ...warnings.map((w) => `ralph: warning: ${w}`),
    '',
    '',
  ];
  return lines.join('\n');
}

/** Why the sandbox cannot run here, for the start message of an in-session loop. */
function describeNoSandbox(env: NodeJS.ProcessEnv): string {
  const probe = probeSandbox(env);
  return probe.ok ? 'it was not available' : probe.fix ? `${probe.reason}; to have it, ${probe.fix}` : probe.reason;
}
