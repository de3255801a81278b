// Cancelling a loop: `ralphkit cancel` (and ralph.mjs cancel) marks the loop's folder and signals its runner, or
// marks a loop whose runner is gone cancelled; a starting runner clears a marker that came too late.
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoopState } from './state-types.js';
import { showPath } from '../../util/repo-path.js';
import { isAlive, signalGroup } from '../processes.js';
import { LoopExit, describeError, LOOP_EXIT, EXIT_FAILURE } from '../errors.js';
import { LOOP_ID, cancelMarker, loopDir, runsDir, statePath } from './layout.js';
import { guardStart, listRecordedAgents, readState, withoutAgents, writeStateFile } from './state-file.js';
import { loopCommand } from '../../util/invocation.js';
import { shellQuote } from '../../util/shell-quote.js';
import { pollUntil } from '../../util/poll.js';

export interface CancelResult {
  id: string;
  /**
   * signalled: a live runner was told to stop · marked: its runner was gone, the state now says cancelled ·
   * session: a loop inside a Claude Code session, now cancelled; its next stop is let through (nothing signalled).
   */
  action: 'signalled' | 'marked' | 'session';
  status: string;
}

/** What an in-session loop's state says between `cancel` and the session's next stop, which tells the user. */
export const SESSION_CANCEL_PENDING = "cancelled by ralphkit cancel; the session's next stop is let through";

const listHint = (): string => `list the loops and their status with: ${loopCommand('status')}`;

/**
 * Stops a live loop (the runner records `cancelled`), or marks one whose runner is gone cancelled. Anything
 * that cannot be cancelled is refused (exit 2) before a file is written or a process signalled.
 */
export function cancelLoop(repoRoot: string, id: string): CancelResult {
  const state = readCancelTarget(repoRoot, id);
  if (state.status !== 'running')
    throw new LoopExit(LOOP_EXIT.refused, `loop ${id} is not running (${state.status}); nothing to cancel`, listHint());
  // An in-session loop's pid is Claude Code itself: never signalled; its Stop hook reads the marker and the state.
  if (state.inSession) return markCancelled(repoRoot, state, 'session', SESSION_CANCEL_PENDING);
  // A pid that now belongs to another process (reused after kill -9) must never be signalled.
  const alive = isAlive(state.pid, state.pidStart);
  writeCancelMarker(repoRoot, state, alive);
  if (alive && signalRunner(repoRoot, state)) return { id, action: 'signalled', status: 'cancelled' };
  // The runner died without cleaning up (kill -9): its agents (one per --parallel worker) may still be running in
  // their own groups.
  for (const agent of listRecordedAgents(state)) if (isAlive(agent.pid, agent.start)) signalGroup(agent.pid, 'SIGKILL');
  return markCancelled(repoRoot, state, 'marked');
}

function markCancelled(
  repoRoot: string,
  state: LoopState,
  action: 'marked' | 'session',
  message?: string,
): CancelResult {
  const file = statePath(repoRoot, state.id);
  try {
    writeStateFile(repoRoot, {
      ...withoutAgents(state),
      status: 'cancelled',
      updatedAt: new Date().toISOString(),
      ...(message ? { message, exitCode: 130 } : {}),
    });
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    const what =
      action === 'session'
        ? `loop ${state.id} (inside a Claude Code session) was not cancelled`
        : `the runner of loop ${state.id} is gone and its agent was stopped, but its state still says running`;
    throw new LoopExit(
      EXIT_FAILURE,
      `could not write ${showPath(repoRoot, file)} (${describeError(err as Error)}): ${what}`,
      `${renderFixFolder(repoRoot, file)}, then run again: ${loopCommand(`cancel ${state.id}`)}`,
    );
  }
  return { id: state.id, action, status: 'cancelled' };
}

function readCancelTarget(repoRoot: string, id: string): LoopState {
  if (!LOOP_ID.test(id))
    throw new LoopExit(
      LOOP_EXIT.refused,
      `"${id}" is not a loop id (letters, digits, ".", "_" and "-", at most 64)`,
      listHint(),
    );
  const file = statePath(repoRoot, id);
  let state: Partial<LoopState> | null;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as Partial<LoopState> | null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !existsSync(loopDir(repoRoot, id))) {
      throw new LoopExit(
        LOOP_EXIT.refused,
        `no loop named "${id}" in ralph/.runs/`,
        existsSync(runsDir(repoRoot))
          ? listHint()
          : 'no loop has run in this repository yet; start one with: ./ralph/ralph.sh',
      );
    }
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not read ${showPath(repoRoot, file)} (${describeError(err as Error)}), so loop ${id} cannot be cancelled; nothing was changed`,
      `${listHint()}; a runner that is still going stops with Ctrl-C in its terminal`,
    );
  }
  if (!state || typeof state !== 'object' || typeof state.status !== 'string') {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${showPath(repoRoot, file)} is not a loop state (no status), so loop ${id} cannot be cancelled; nothing was changed`,
      listHint(),
    );
  }
  return state as LoopState;
}

function writeCancelMarker(repoRoot: string, state: LoopState, alive: boolean): void {
  const marker = cancelMarker(repoRoot, state.id);
  try {
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not write ${showPath(repoRoot, marker)} (${describeError(err as Error)}): loop ${state.id} was not cancelled; nothing was changed`,
      `${renderFixFolder(repoRoot, marker)}, then run again: ${loopCommand(`cancel ${state.id}`)}${alive ? `; or stop its runner directly: kill ${state.pid}` : ''}`,
    );
  }
}

/** SIGTERM to a live runner; false when it exited meanwhile. Another user's runner is refused, the marker taken back. */
function signalRunner(repoRoot: string, state: LoopState): boolean {
  try {
    process.kill(state.pid, 'SIGTERM');
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    rmSync(cancelMarker(repoRoot, state.id), { force: true });
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not signal the runner of loop ${state.id} (pid ${state.pid}: ${describeError(err as Error)}); nothing was changed`,
      `run the cancel as the user who started that loop: ${loopCommand(`cancel ${state.id}`)}`,
    );
  }
}

function renderFixFolder(repoRoot: string, file: string): string {
  const folder = showPath(repoRoot, path.dirname(file));
  return `make ${folder}/ a folder this user can write (chmod u+w ${shellQuote(folder)})`;
}

export function renderCancelResult(r: CancelResult): string {
  if (r.action === 'session')
    return `loop ${r.id} runs inside a Claude Code session: cancelled; its next stop is let through`;
  return r.action === 'marked'
    ? `loop ${r.id} was not running any more (its runner is gone); marked cancelled`
    : `loop ${r.id} was signalled`;
}

/** After signalling: wait (bounded) until the runner has recorded its end, and return the final status. */
export async function waitForLoopEnd(repoRoot: string, id: string, timeoutMs: number): Promise<string> {
  let state = readState(repoRoot, id);
  await pollUntil(
    () => {
      state = readState(repoRoot, id);
      return !state || state.status !== 'running' || !isAlive(state.pid, state.pidStart);
    },
    { timeoutMs, intervalMs: 100 },
  );
  return state?.status ?? 'unknown';
}

export function isCancelRequested(repoRoot: string, id: string): boolean {
  return existsSync(cancelMarker(repoRoot, id));
}

/** Removes a marker left by a cancel that came too late for its loop; a file-system error refuses the start (exit 2). */
// Node 24's rmSync with force and recursive ignores a loop folder that is a file (ENOTDIR), which Node 20 and 22
// report; checked here so every version refuses the same way, before state.json meets the same file.
function removeMarker(marker: string): void {
  const folder = path.dirname(marker);
  if (existsSync(folder) && !statSync(folder).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, rm '${marker}'`), { code: 'ENOTDIR' });
  }
  rmSync(marker, { force: true, recursive: true });
}

export function clearCancelMarker(repoRoot: string, id: string): void {
  const marker = cancelMarker(repoRoot, id);
  const folder = showPath(repoRoot, path.dirname(marker));
  guardStart(
    repoRoot,
    marker,
    () => removeMarker(marker),
    'the loop cannot clear an old cancel request',
    'remove',
    `${folder}/ must be a folder this user can write: fix its permissions (chmod u+w ${shellQuote(folder)}), or remove ${folder} if it is not a folder, then start again`,
  );
}
