// The locks under ralph/.runs/locks/: one per plan file, so two live loops never work the same plan, and one per
// working tree (the user's, and each --worktree loop's), so a second loop never checks out its branch under the
// first one's agent. Two loops on one branch cannot both be: git keeps a branch in one worktree. A lock whose
// holder is dead is taken over.
import { mkdirSync, readFileSync, openSync, writeSync, closeSync, unlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isAlive, ownProcessStart } from '../processes.js';
import type { LoopState } from './state-types.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { lockPath, recordsRoot, treeLockPath } from './layout.js';
import { guardStart, isRunning, readAllStates, readState } from './state-file.js';
import { loopCommand } from '../../util/invocation.js';
import { shellQuote } from '../../util/shell-quote.js';

interface LockFile {
  pid: number;
  pidStart?: number;
  loopId: string;
  prd: string;
}

/** Takes the PRD's lock for this process; a lock held by a live pid refuses the start (exit 2). */
export function acquireLock(repoRoot: string, prdAbs: string, loopId: string): () => void {
  return takeLock(
    repoRoot,
    lockPath(repoRoot, prdAbs),
    { pid: process.pid, pidStart: ownProcessStart(), loopId, prd: prdAbs },
    (holder) => {
      throw new LoopExit(
        LOOP_EXIT.refused,
        `another loop (${holder.loopId}, pid ${holder.pid}) is running on ${path.relative(repoRoot, prdAbs)}`,
        `wait for it, or stop it with: ${loopCommand(`cancel ${holder.loopId}`)}`,
      );
    },
  );
}

/**
 * One live loop per working tree, whatever its plan: a second loop would check out its own branch under the
 * first one's agent. Loops started by an older runner hold no tree lock, so live states are checked as well.
 */
export function acquireTreeLock(repoRoot: string, prdAbs: string, loopId: string): () => void {
  const refuse = (holder: LockFile): never => {
    const where = path.relative(repoRoot, holder.prd) || holder.prd;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `another loop (${holder.loopId}, pid ${holder.pid}) is running in this working tree, on ${where}; one working tree runs one loop at a time`,
      `run this plan in a worktree of its own, beside the running loop: ./ralph/ralph.sh --worktree --prd ${shellQuote(path.relative(repoRoot, prdAbs) || prdAbs)}; or stop the running loop: ${loopCommand(`cancel ${shellQuote(holder.loopId)}`)}`,
    );
  };
  const release = takeLock(
    repoRoot,
    treeLockPath(repoRoot),
    { pid: process.pid, pidStart: ownProcessStart(), loopId, prd: prdAbs },
    refuse,
  );
  // A --worktree loop's tree is its own (store/layout.ts maps its root to the user's tree for the records).
  const tree = recordsRoot(repoRoot) === repoRoot ? undefined : path.resolve(repoRoot);
  const sameTree = (s: { worktree?: { path: string } }) =>
    (s.worktree ? path.resolve(s.worktree.path) : undefined) === tree;
  const other = readAllStates(repoRoot).find(
    (s) => s.id !== loopId && isRunning(s) && s.pid !== process.pid && sameTree(s),
  );
  if (other) {
    release();
    if (other.inSession)
      refuseSessionLoop(repoRoot, other, 'one working tree runs one loop at a time, so the runner did not start');
    refuse({ pid: other.pid, loopId: other.id, prd: path.resolve(repoRoot, other.prd) });
  }
  return release;
}

/**
 * What `hook start` checks before a Claude Code session loops in this working tree: no runner loop holds the tree,
 * and no other session's in-session loop is running (an in-session loop always works ralph/prd.json, so two would
 * verify and rewrite the same plan). A loop whose runner or Claude Code is gone, or that was cancelled, is no bar.
 */
export function refuseBusyTree(repoRoot: string, sessionId: string): void {
  const holder = readLock(treeLockPath(repoRoot));
  const runner =
    holder && holder.loopId !== sessionId && holdsLock(repoRoot, holder)
      ? { id: holder.loopId, pid: holder.pid, prd: holder.prd }
      : // A --worktree loop works in its own tree beside the repository (its records live here): no bar to this one.
        readAllStates(repoRoot).find((s) => !s.inSession && !s.worktree && isRunning(s));
  if (runner) {
    const where = path.relative(repoRoot, path.resolve(repoRoot, runner.prd)) || runner.prd;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `hook start: a runner loop (${runner.id}, pid ${runner.pid}) is running in this working tree, on ${where}; an in-session loop here would verify and write the same plan, so none was started`,
      `wait for it to end (${loopCommand('status')}), or stop it with: ${loopCommand(`cancel ${shellQuote(runner.id)}`)}, then type /ralph-loop again; or start Claude Code in a separate working tree: git worktree add ${shellQuote(`../${path.basename(repoRoot)}-2`)}`,
    );
  }
  const session = readAllStates(repoRoot).find((s) => s.inSession && s.id !== sessionId && isRunning(s));
  if (session)
    refuseSessionLoop(
      repoRoot,
      session,
      'a second in-session loop here would verify and write the same plan (ralph/prd.json), so none was started for this session',
      'hook start: ',
    );
}

/**
 * A loop of this repository that is running now: the holder of this working tree's lock, else any live loop in the
 * records (a --worktree loop's guard holds the user's engine too, an in-session loop works this tree); or null.
 */
export function findRunningLoop(repoRoot: string): { id: string; pid: number; inSession: boolean } | null {
  const holder = readLock(treeLockPath(repoRoot));
  if (holder && holdsLock(repoRoot, holder)) return { id: holder.loopId, pid: holder.pid, inSession: false };
  const live = readAllStates(repoRoot).find(isRunning);
  return live ? { id: live.id, pid: live.pid, inSession: live.inSession === true } : null;
}

function refuseSessionLoop(repoRoot: string, other: LoopState, why: string, prefix = ''): never {
  throw new LoopExit(
    LOOP_EXIT.refused,
    `${prefix}an in-session loop (Claude Code session ${other.id}, Claude Code pid ${other.pid}) is running in this working tree; ${why}`,
    `let that loop end, or stop it with: ${loopCommand(`cancel ${shellQuote(other.id)}`)}; or work in a separate working tree (git worktree add ${shellQuote(`../${path.basename(repoRoot)}-2`)}), where each loop runs on its own`,
  );
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
  throw new LoopExit(
    LOOP_EXIT.refused,
    `could not take the lock ${path.relative(repoRoot, file)}`,
    'try again in a moment',
  );
}

// A live pid alone is not proof: after a crash the pid may belong to an unrelated process by now. Its start time
// must match where one was recorded, and the holder's own state must still say running (or be unreadable, when
// it crashed before writing one).
function holdsLock(repoRoot: string, holder: LockFile): boolean {
  if (!isAlive(holder.pid, holder.pidStart)) return false;
  const state = readState(repoRoot, holder.loopId);
  return (
    state === null || (state.status === 'running' && state.pid === holder.pid && isAlive(state.pid, state.pidStart))
  );
}

/** False when another runner holds the file already. */
function createLock(repoRoot: string, file: string, body: LockFile): boolean {
  let created = false;
  guardStart(
    repoRoot,
    file,
    () => {
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
    },
    'the loop cannot take its lock',
  );
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
