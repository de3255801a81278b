// The loop's runtime files under ralph/.runs/ (gitignored): one folder per loop with state.json and the
// iteration logs, plus one lock per PRD file so two live loops never work the same plan.
import type { LoopState, RunOptions, AgentRunRecord } from '../types.js';
import { mkdirSync, readFileSync, readdirSync, openSync, writeSync, closeSync, unlinkSync, existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { isAlive, ownProcessStart, processStart } from './processes.js';
import { LoopExit, describeError, guardWrite } from '../errors.js';

// Re-exported: callers read liveness together with the states and locks it is about.
export { groupHasLiveMember, isAlive, ownProcessStart, processStart } from './processes.js';

export const RUNS_DIR = path.join('ralph', '.runs');

export function runsDir(repoRoot: string): string {
  return path.join(repoRoot, RUNS_DIR);
}

export function loopDir(repoRoot: string, id: string): string {
  return path.join(runsDir(repoRoot), id);
}

export function statePath(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'state.json');
}

export function newLoopId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
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
  // The agent's start is read here, right after it was spawned, so no caller has to remember it.
  const agentPidStart = state.agentPid ? processStart(state.agentPid) : undefined;
  mkdirSync(path.dirname(file), { recursive: true });
  atomicWriteFileSync(file, `${JSON.stringify({ ...state, agentPidStart }, null, 2)}\n`);
}

/** Runs a write made before the loop changed anything; a file-system error refuses the start (exit 2). */
function guardStart(repoRoot: string, file: string, write: () => void, what: string, verb = 'write', hint?: string): void {
  try {
    write();
  } catch (err) {
    if (err instanceof LoopExit || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw new LoopExit(2, `could not ${verb} ${showPath(repoRoot, file)} (${describeError(err as Error)}): ${what}, so it did not start; nothing was changed`, hint ?? `${RUNS_DIR.split(path.sep).join('/')}/ must be a folder this user can write: fix its permissions (chmod u+w), free disk space, or remove it if it is not a folder, then start again`);
  }
}

/** `file` relative to the repository, with forward slashes, for messages. */
export function showPath(repoRoot: string, file: string): string {
  return path.relative(repoRoot, file).split(path.sep).join('/') || file;
}

export function readState(repoRoot: string, id: string): LoopState | null {
  try {
    return JSON.parse(readFileSync(statePath(repoRoot, id), 'utf8')) as LoopState;
  } catch {
    return null;
  }
}

/** Every loop with a readable state.json, newest first; none when ralph/.runs/ is missing or cannot be listed. */
export function readAllStates(repoRoot: string): LoopState[] {
  try {
    return readLoopStates(repoRoot);
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    return [];
  }
}

/**
 * readAllStates for callers that must not mistake "cannot tell" for "no loops": a ralph/.runs/ that exists but
 * cannot be listed (not a folder, no read permission) throws its file-system error. Missing is no loops.
 */
export function readLoopStates(repoRoot: string): LoopState[] {
  return scanLoopStates(repoRoot).states;
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

/** A state that says running but whose runner is gone was killed (kill -9, power loss). */
export function isLive(state: LoopState): boolean {
  return state.status === 'running' && isAlive(state.pid, state.pidStart);
}

interface LockFile {
  pid: number;
  pidStart?: number;
  loopId: string;
  prd: string;
}

export function lockPath(repoRoot: string, prdAbs: string): string {
  const hash = createHash('sha256').update(prdAbs).digest('hex').slice(0, 16);
  return path.join(runsDir(repoRoot), 'locks', `${hash}.lock`);
}

/** Takes the PRD's lock for this process; a lock held by a live pid refuses the start (exit 2). */
export function acquireLock(repoRoot: string, prdAbs: string, loopId: string): () => void {
  return takeLock(repoRoot, lockPath(repoRoot, prdAbs), { pid: process.pid, pidStart: ownProcessStart(), loopId, prd: prdAbs }, (holder) => {
    throw new LoopExit(2, `another loop (${holder.loopId}, pid ${holder.pid}) is running on ${path.relative(repoRoot, prdAbs)}`, `wait for it, or stop it with: npx ralphkit cancel ${holder.loopId}`);
  });
}

/**
 * One live loop per working tree, whatever its plan: a second loop would check out its own branch under the
 * first one's agent. Loops started by an older runner hold no tree lock, so live states are checked as well.
 */
export function acquireTreeLock(repoRoot: string, prdAbs: string, loopId: string): () => void {
  const refuse = (holder: LockFile): never => {
    const where = path.relative(repoRoot, holder.prd) || holder.prd;
    throw new LoopExit(2, `another loop (${holder.loopId}, pid ${holder.pid}) is running in this working tree, on ${where}; one working tree runs one loop at a time`, `run it in a separate working tree: git worktree add ../${path.basename(repoRoot)}-2, then start ./ralph/ralph.sh there; or stop the running loop: npx ralphkit cancel ${holder.loopId}`);
  };
  const release = takeLock(repoRoot, path.join(runsDir(repoRoot), 'locks', 'worktree.lock'), { pid: process.pid, pidStart: ownProcessStart(), loopId, prd: prdAbs }, refuse);
  const other = readAllStates(repoRoot).find((s) => s.id !== loopId && isLive(s) && s.pid !== process.pid);
  if (other) {
    release();
    refuse({ pid: other.pid, loopId: other.id, prd: path.resolve(repoRoot, other.prd) });
  }
  return release;
}

function takeLock(repoRoot: string, file: string, body: LockFile, refuse: (holder: LockFile) => never): () => void {
  guardStart(repoRoot, file, () => mkdirSync(path.dirname(file), { recursive: true }), 'the loop cannot take its lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createLock(repoRoot, file, body)) return () => releaseLock(file);
    const holder = readLock(file);
    if (holder && holder.pid !== process.pid && holdsLock(repoRoot, holder)) refuse(holder);
    // The holder is dead (or the file is unreadable): take the lock over.
    try {
      unlinkSync(file);
    } catch {
      /* another runner took it over first; the next attempt finds out */
    }
  }
  throw new LoopExit(2, `could not take the lock ${path.relative(repoRoot, file)}`, 'try again in a moment');
}

// A live pid alone is not proof: after a crash the pid may belong to an unrelated process by now. Its start time
// must match where one was recorded, and the holder's own state must still say running (or be unreadable, when
// it crashed before writing one).
function holdsLock(repoRoot: string, holder: LockFile): boolean {
  if (!isAlive(holder.pid, holder.pidStart)) return false;
  const state = readState(repoRoot, holder.loopId);
  return state === null || (state.status === 'running' && state.pid === holder.pid && isAlive(state.pid, state.pidStart));
}

/** False when another runner holds the file already. */
function createLock(repoRoot: string, file: string, body: LockFile): boolean {
  let created = false;
  guardStart(repoRoot, file, () => {
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
      throw err;
    }
    try {
      writeSync(fd, JSON.stringify(body));
    } catch (err) {
      closeSync(fd);
      rmSync(file, { force: true }); // a half-written lock would only be taken over later; leave none
      throw err;
    }
    closeSync(fd);
    created = true;
  }, 'the loop cannot take its lock');
  return created;
}

function readLock(file: string): LockFile | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockFile;
  } catch {
    return null;
  }
}

function releaseLock(file: string): void {
  const holder = readLock(file);
  if (holder && holder.pid !== process.pid) return;
  try {
    unlinkSync(file);
  } catch {
    /* already gone */
  }
}

/** `ralphkit cancel` leaves this marker before signalling, so the runner records cancelled, not interrupted. */
export function cancelMarker(repoRoot: string, id: string): string {
  return path.join(loopDir(repoRoot, id), 'cancel');
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
  guardStart(repoRoot, marker, () => removeMarker(marker), 'the loop cannot clear an old cancel request', 'remove',
    `${folder}/ must be a folder this user can write: fix its permissions (chmod u+w ${folder}), or remove ${folder} if it is not a folder, then start again`);
}
