// `ralph.mjs hook stop`: Claude Code's Stop hook (SPEC §12, docs/agents.md "Claude Code Stop hooks"). A session that
// started no in-session loop (and the runner's own agent runs, RALPH_RUNNER=1) stops at once: exit 0, nothing
// printed. A session with a running loop counts one iteration on disk, has its claims verified as the runner does
// (verify-stop.ts), and either stops (every story verified, STUCK, the limit, cancelled, the verification deadline)
// or is sent back with `{"decision":"block","reason":…}` on stdout; a stop that ends the loop prints
// `{"systemMessage":…}`, which tells the user how it ended. The hook never wedges a session: an error of a running loop
// ends it (the reason in that message, on stderr and in its state); unusable input exits 1; either way the session stops.
import { readPromptBytes } from '../plan-file.js';
import type { LoopState } from '../store/state-types.js';
import type { RunIo, RunPaths } from '../types.js';
import type { Prd } from '../../prd/types.js';
import { detectTag } from '../core/tags.js';
import { resolveRepoRoot } from '../git/git.js';
import { renderPreamble } from '../core/preamble.js';
import { SESSION_CANCEL_PENDING, isCancelRequested } from '../store/cancel.js';
import { LoopExit, describeError } from '../errors.js';
import {
  createHookEmit,
  planStopLimit,
  readBlockCap,
  readSessionState,
  readVerifyDeadline,
  saveSessionState,
  holdSessionRepo,
  readOptionsSeal,
  sessionRun,
  sessionStateProblem,
} from './session.js';
import { VerificationTimedOut, verifySessionStop } from './verify-stop.js';
import { decideStop, renderEndNotice } from './decide.js';

/** What the Stop hook input carries that the hook reads (the full sample is in docs/agents.md). */
export interface StopHookInput {
  sessionId: string;
  stopHookActive: boolean;
  cwd?: string;
  transcriptPath?: string;
  lastMessage: string;
}

/** A session id names a folder under ralph/.runs/: letters, digits, `.`, `_`, `-`, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const CANCELLED = 'cancelled by ralphkit cancel; the session was let stop';
/** More than any hook input Claude Code sends (its last assistant message included), less than a runaway pipe. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export async function runHookStop(
  argv: readonly string[],
  io: RunIo,
  readInput: () => Promise<string>,
): Promise<number> {
  if (argv.length !== 0) {
    io.stderr(`ralph: hook stop: takes no arguments (got ${argv.join(' ')}); the session may stop\n`);
    return 1;
  }
  // The runner's own agent runs (and its reviewers) never loop inside the session: the runner already restarts them.
  if (io.env.RALPH_RUNNER === '1' || io.env.RALPH_REVIEW === '1') return 0;
  let input: StopHookInput;
  try {
    input = parseStopHookInput(await readInput());
  } catch (err) {
    io.stderr(`ralph: hook stop: ${(err as Error).message}; letting the session stop\n`);
    return 1;
  }
  const repoRoot = await resolveRepoRoot(io.cwd).catch(() => null);
  const state = repoRoot ? readSessionState(repoRoot, input.sessionId) : null;
  if (!repoRoot || !state) return 0;
  if (state.status === 'cancelled' && state.message === SESSION_CANCEL_PENDING)
    return endLoop(repoRoot, state, 'cancelled', 130, CANCELLED, io);
  if (state.status !== 'running') return 0;
  try {
    return await stopIteration(repoRoot, state, input, io);
  } catch (err) {
    // A stop refused on purpose (the loop's refs moved: exit 6) ends the loop with its own code, reason and hint.
    if (err instanceof LoopExit && err.status !== 'usage') {
      io.stderr(`ralph: hook stop: ${err.message}${err.hint ? `\nralph: hint: ${err.hint}` : ''}\n`);
      return endLoop(repoRoot, state, err.status, err.code, err.hint ? `${err.message}; ${err.hint}` : err.message, io);
    }
    const why = `the stop hook failed at iteration ${state.iteration}: ${describeError(err as Error)}`;
    io.stderr(
      `ralph: hook stop: ${why}; letting the session stop (the loop is over; start it again with /ralph-loop)\n`,
    );
    return endLoop(repoRoot, state, 'failed', 1, why, io);
  }
}

/** One stop of a running loop: counted first (so nothing can stretch the limit), then verified and decided. */
async function stopIteration(repoRoot: string, state: LoopState, input: StopHookInput, io: RunIo): Promise<number> {
  const problem = sessionStateProblem(state);
  if (problem) throw new Error(`ralph/.runs/${state.id}/state.json is damaged (${problem})`);
  if (isCancelRequested(repoRoot, state.id)) return endLoop(repoRoot, state, 'cancelled', 130, CANCELLED, io);
  const iteration = state.iteration + 1;
  const limit = planStopLimit(state.options.maxIterations, readBlockCap(io.env));
  saveSessionState(repoRoot, state, { iteration, iterationDone: false, maxIterations: limit });
  const emit = createHookEmit(repoRoot, state.id, []);
  const seal = readOptionsSeal(repoRoot, state, emit);
  await holdSessionRepo(repoRoot, seal);
  const run = sessionRun(repoRoot, state, io, emit, seal.inPlace);
  // Logged, never decided on: a turn's stops after a block all say true, and the count above is what limits the loop.
  run.emit({
    type: 'info',
    message: `stop ${iteration} of at most ${limit} (stop_hook_active: ${input.stopHookActive}): verifying the claims`,
  });
  const deadline = readVerifyDeadline(io.env);
  let outcome;
  try {
    outcome = await verifySessionStop(run, state, iteration, AbortSignal.timeout(deadline));
  } catch (err) {
    if (!(err instanceof VerificationTimedOut)) throw err;
    return endLoop(
      repoRoot,
      state,
      'interrupted',
      130,
      `verification timed out after ${Math.round(deadline / 1000)} s at iteration ${iteration} (the hook has ${Math.round(deadline / 1000)} s of Claude Code's 600); nothing was decided about the claims; the session was let stop`,
      io,
    );
  }
  // `ralphkit cancel` while the checks ran rewrote state.json; blocking now would write `running` over it.
  if (cancelledMeanwhile(repoRoot, state.id)) return endLoop(repoRoot, state, 'cancelled', 130, CANCELLED, io);
  const tag = detectTag(input.lastMessage, state.options.completionPromise);
  const decision = decideStop({
    id: state.id,
    iteration,
    limit,
    outcome,
    tag,
    completionPromise: state.options.completionPromise,
  });
  if (decision.allow) return endLoop(repoRoot, state, decision.status, decision.exitCode, decision.message, io);
  saveSessionState(repoRoot, state, { iterationDone: true });
  io.stdout(
    `${JSON.stringify({ decision: 'block', reason: `${decision.reason}\n\n${renderLoopPrompt(run.paths, state, outcome.prd)}` })}\n`,
  );
  return 0;
}

function cancelledMeanwhile(repoRoot: string, id: string): boolean {
  const now = readSessionState(repoRoot, id);
  return isCancelRequested(repoRoot, id) || (now?.status === 'cancelled' && now.message === SESSION_CANCEL_PENDING);
}

/**
 * The loop has ended: its state says how, and the session stops (exit 0, nothing blocked). The `systemMessage` is
 * how the user hears of it: Claude Code 2.1.332 shows it as "Stop says: …" and never hands it to the model
 * (docs/agents.md "Claude Code Stop hooks").
 */
function endLoop(
  repoRoot: string,
  state: LoopState,
  status: LoopState['status'],
  exitCode: number,
  message: string,
  io: RunIo,
): number {
  try {
    saveSessionState(repoRoot, state, { status, exitCode, message, iterationDone: true });
  } catch {
    /* the session must stop whatever the disk says */
  }
  io.stdout(`${JSON.stringify({ systemMessage: renderEndNotice(state.id, state.iteration, status, message) })}\n`);
  return 0;
}

/** The loop's prompt as `hook start` printed it: the runner's notes, then the prompt file (skipped when unreadable). */
function renderLoopPrompt(paths: RunPaths, state: LoopState, prd: Prd): string {
  let prompt = '';
  try {
    prompt = readPromptBytes(paths).toString('utf8');
  } catch {
    prompt = `(${paths.prompt} could not be read: work on the next open story of the plan, commit it, set its passes to true)\n`;
  }
  return renderPreamble(paths, state.options, prd) + prompt;
}

/** Pure: the fields the hook needs, or an error saying what is wrong with the input. */
export function parseStopHookInput(text: string): StopHookInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(
      `the hook input on stdin is not JSON (${text.trim() ? `${text.length} characters` : 'it is empty'}); Claude Code sends a JSON object`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error('the hook input on stdin is not a JSON object');
  const input = data as Record<string, unknown>;
  if (input.hook_event_name !== undefined && input.hook_event_name !== 'Stop') {
    throw new Error(
      `the hook input is for ${JSON.stringify(input.hook_event_name)}, not Stop: configure \`ralph.mjs hook stop\` under "Stop" only`,
    );
  }
  if (typeof input.session_id !== 'string' || !SESSION_ID.test(input.session_id))
    throw new Error('the hook input has no usable session_id');
  return {
    sessionId: input.session_id,
    stopHookActive: input.stop_hook_active === true,
    cwd: typeof input.cwd === 'string' ? input.cwd : undefined,
    transcriptPath: typeof input.transcript_path === 'string' ? input.transcript_path : undefined,
    lastMessage: typeof input.last_assistant_message === 'string' ? input.last_assistant_message : '',
  };
}

/** The process's stdin, whole; refused when it is a terminal (a person typed the command) or too large. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new Error(
      "no hook input: stdin is a terminal; Claude Code runs this command with the Stop hook's JSON on stdin",
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_INPUT_BYTES) throw new Error(`the hook input on stdin is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
