// ralph/.runs/<id>/state.json: writing a loop's state (durably, and refusing the start when the first write
// fails), reading one, and scanning every loop folder for `status`, resume and the locks.
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { LoopState, WorkerState } from './state-types.js';
import type { PerInvocation, RunOptions } from '../loop-options.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { showPath } from '../../util/repo-path.js';
import { isAlive, processStart } from '../processes.js';
import { LoopExit, describeError, guardWrite, LOOP_EXIT } from '../errors.js';
import { RUNS_DIR, runsDir, statePath } from './layout.js';

// The options of one invocation, never stored in state.json nor kept by --resume. A Record, so that a new
// per-invocation option cannot be left out of it.
const PER_INVOCATION: Record<PerInvocation, true> = {
  resume: true,
  resumeLast: true,
  name: true,
  dryRun: true,
  help: true,
  json: true,
  notify: true,
  onExit: true,
  webhook: true,
  acceptPinChanges: true,
  repin: true,
  acceptPlanEdits: true,
};

/**
 * The settings a loop stores (and a resume keeps): every option but the per-invocation ones. Also applied to what a
 * state.json holds, since the agent can write it: a stored hook command or webhook URL is never taken from there.
 */
export function storedOptions<T extends Partial<RunOptions>>(options: T): Omit<T, PerInvocation> {
  return Object.fromEntries(Object.entries(options).filter(([key]) => !Object.hasOwn(PER_INVOCATION, key))) as Omit<
    T,
    PerInvocation
  >;
}

// The state objects this process has saved at least once. run.ts keeps one object per loop and mutates it,
// so a failed first write means nothing was recorded yet: the start is refused, not a run that failed.
const recorded = new WeakSet<LoopState>();

/**
 * Saves state.json. A file-system error on the first save refuses the start (exit 2); later it ends the loop
 * as a RunnerFileError (exit 1). Other errors keep their stack.
 */
export function writeState(repoRoot: string, state: LoopState): void {
  const file = statePath(repoRoot, state.id);
  const write = () => writeStateFile(repoRoot, state);
  if (recorded.has(state)) {
    guardWrite(file, repoRoot, write, 'the loop state could not be saved');
    return;
  }
  guardStart(repoRoot, file, write, 'the loop cannot record its state');
  recorded.add(state);
}

/** Saves state.json as it is; file-system errors are thrown as they come (the caller says what they mean). */
export function writeStateFile(repoRoot: string, state: LoopState): void {
  const file = statePath(repoRoot, state.id);
  // The agents' starts are read here, right after they were spawned, so no caller has to remember them.
  const agentPidStart = state.agentPid ? processStart(state.agentPid) : undefined;
  const parallel = mapWorkers(state, (w) => ({
    ...w,
    agentPidStart: w.agentPid ? processStart(w.agentPid) : undefined,
  }));
  mkdirSync(path.dirname(file), { recursive: true });
  atomicWriteFileSync(file, `${JSON.stringify({ ...state, agentPidStart, ...parallel }, null, 2)}\n`);
}

/** An agent's process group as a state records it: the loop's own, or a --parallel worker's. */
export interface RecordedAgent {
  pid: number;
  /** When it started (processStart), to tell it from a later process that reuses the pid. */
  start?: number;
  worker?: number;
}

/**
 * Every agent group a state records: the loop's agentPid and each --parallel worker's. state.json is the agent's to
 * write too, so anything that is not a pid above 1 is left out (signalling group 0 or 1 would hit the wrong processes).
 */
export function listRecordedAgents(state: Partial<LoopState>): RecordedAgent[] {
  const agents: RecordedAgent[] = [];
  const add = (pid: unknown, start: unknown, worker?: number) => {
    if (typeof pid === 'number' && Number.isInteger(pid) && pid > 1)
      agents.push({
        pid,
        ...(typeof start === 'number' ? { start } : {}),
        ...(worker !== undefined ? { worker } : {}),
      });
  };
  add(state.agentPid, state.agentPidStart);
  const workers: unknown = state.parallel?.states;
  if (Array.isArray(workers)) {
    for (const w of workers)
      if (w && typeof w === 'object')
        add(w.agentPid, w.agentPidStart, typeof w.worker === 'number' ? w.worker : undefined);
  }
  return agents;
}

/** The state with no agent recorded (the loop's nor its workers'), for a loop whose agents were stopped. */
export function withoutAgents(state: LoopState): LoopState {
  return { ...state, agentPid: undefined, ...mapWorkers(state, (w) => ({ ...w, agentPid: undefined })) };
}

// A state read from disk may carry any `parallel`: only a list of workers is mapped, anything else is kept as it is.
function mapWorkers(state: LoopState, f: (w: WorkerState) => WorkerState): Pick<LoopState, 'parallel'> {
  return state.parallel && Array.isArray(state.parallel.states)
    ? {
        parallel: {
          ...state.parallel,
          states: state.parallel.states.map((w) => (w && typeof w === 'object' ? f(w) : w)),
        },
      }
    : {};
}

/** Runs a write made before the loop changed anything; a file-system error refuses the start (exit 2). */
export function guardStart(
  repoRoot: string,
  file: string,
  write: () => void,
  what: string,
  verb = 'write',
  hint?: string,
): void {
  try {
    write();
  } catch (err) {
    if (err instanceof LoopExit || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not ${verb} ${showPath(repoRoot, file)} (${describeError(err as Error)}): ${what}, so it did not start; nothing was changed`,
      hint ??
        `${RUNS_DIR.split(path.sep).join('/')}/ must be a folder this user can write: fix its permissions (chmod u+w), free disk space, or remove it if it is not a folder, then start again`,
    );
  }
}

export function readState(repoRoot: string, id: string): LoopState | null {
  try {
    return JSON.parse(readFileSync(statePath(repoRoot, id), 'utf8')) as LoopState;
  } catch {
    return null;
  }
}

/**
 * Every loop with a readable state.json, newest first; none when ralph/.runs/ is missing or cannot be listed.
 * Callers that must not mistake "cannot tell" for "no loops" use scanLoopStates, which throws listing errors.
 */
export function readAllStates(repoRoot: string): LoopState[] {
  try {
    return scanLoopStates(repoRoot).states;
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    return [];
  }
}

/** A loop folder whose state.json exists but is no loop state (corrupt JSON, no id, unreadable file). */
export interface UnreadableState {
  id: string;
  file: string;
  error: string;
}

/**
 * Every loop folder under ralph/.runs/: the readable states newest first, and the folders whose state.json is there
 * but cannot be read as a state, so `status` can list them instead of hiding them. Listing errors are thrown.
 */
export function scanLoopStates(repoRoot: string): { states: LoopState[]; unreadable: UnreadableState[] } {
  let names: string[];
  try {
    names = readdirSync(runsDir(repoRoot));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { states: [], unreadable: [] };
    throw err;
  }
  const states: LoopState[] = [];
  const unreadable: UnreadableState[] = [];
  for (const name of names.filter((n) => n !== 'locks').sort()) {
    const file = statePath(repoRoot, name);
    const read = readStateVerbose(file);
    if ('state' in read) states.push(read.state);
    else if (read.error) unreadable.push({ id: name, file, error: read.error });
  }
  states.sort((a, b) => String(b.startedAt).localeCompare(String(a.startedAt)));
  return { states, unreadable };
}

// No error for a folder without state.json (a loop refused before it wrote one, or a file such as last-branch).
function readStateVerbose(file: string): { state: LoopState } | { error: string | null } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { error: code === 'ENOENT' || code === 'ENOTDIR' ? null : describeError(err as Error) };
  }
  try {
    const state = JSON.parse(text) as LoopState | null;
    if (state && typeof state === 'object' && typeof state.id === 'string') return { state };
    return { error: 'not a loop state (no "id")' };
  } catch (err) {
    return { error: `not valid JSON: ${(err as Error).message}` };
  }
}

/** A state that says running and whose runner lives; one whose runner is gone was killed (kill -9, power loss). */
export function isRunning(state: LoopState): boolean {
  return state.status === 'running' && isAlive(state.pid, state.pidStart);
}
