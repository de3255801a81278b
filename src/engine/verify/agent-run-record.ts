// What the runner puts back after an agent run (other branches it moved, tags and replace refs it made, index flags
// it set) is put back by the runner that ran it. A runner killed with -9 while the agent ran (by you, the OOM killer, a
// closed laptop) put back nothing, and its resume read the refs and the index as it found them: as yours. And a run
// that stopped the loop (exit 6: the agent left HEAD on another branch with changes) stopped before its put-back.
// So before each agent run the runner writes what the agent found into ralph/.runs/<id>/agent-run.json (read-only to a
// sandboxed agent), and removes it once the run's put-back is done; a resume that finds it does that put-back first.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull } from '../../util/read.js';
import { readRefs } from '../git/head.js';
import { isObjectId } from '../git/parse.js';
import { loopDir } from '../store/layout.js';
import { restoreMovedBranches, setAsideCreatedBranches, skips } from './branch-moves.js';
import { clearNewFlags, readIndexView, type IndexView } from './index-flags.js';
import { restoreEndRefs, type HeldRefs } from './replace-refs.js';

type Flags = IndexView['flagged'] extends ReadonlyMap<string, infer F> ? F : never;

/** What an agent run found: written before it runs, gone once the runner put back what it changed. */
export interface AgentRunRecord {
  ralphkit: 1;
  /** Each local branch and its commit, but those in `skip`. */
  branches: Record<string, string>;
  /** Branches the run may move (the loop's, other loops'); a name ending in `*` is a prefix. */
  skip: string[];
  /** The refs held for the loop's end as it started (replace-refs.ts isEndRef: tags, replace refs, your stash...). */
  endRefs: Record<string, string>;
  /** The index's skip-worktree and assume-unchanged flags as the loop started with them (paths as latin1). */
  flags: [string, Flags][];
  /** The git dir holding the loop's index. */
  ownGitDir: string;
  /** git's common dir (refs, their locks, the stash list). */
  commonDir: string;
  /** Your stash list as the loop found it: the reflog's bytes, base64 (null: none). */
  stashLog: string | null;
  /** The HEAD reflog of the loop's tree as the loop found it (its file; bytes base64, null: none). */
  headLog?: { file: string; bytes: string | null };
}

export function agentRunPath(repoRoot: string, loopId: string): string {
  return path.join(loopDir(repoRoot, loopId), 'agent-run.json');
}

// What was written last, per file: most runs find what the last one found (the loop's own branch is not in it), and a
// record the same as the file's costs no write (each is fsynced, for a power loss while the agent runs).
const written = new Map<string, string>();

export function writeAgentRun(repoRoot: string, loopId: string, record: Omit<AgentRunRecord, 'ralphkit'>): void {
  const file = agentRunPath(repoRoot, loopId);
  const text = `${JSON.stringify({ ralphkit: 1, ...record })}\n`;
  if (written.get(file) === text && existsSync(file)) return;
  atomicWriteFileSync(file, text);
  written.set(file, text);
}

/** Removed once its put-back is done; one that cannot be (a read-only folder) only has the next resume do it again. */
export function clearAgentRun(repoRoot: string, loopId: string): void {
  const file = agentRunPath(repoRoot, loopId);
  written.delete(file);
  try {
    rmSync(file, { force: true });
  } catch {
    /* each step of the put-back done again is a no-op */
  }
}

/** The record a dead runner left; null: none. Throws when it is there but not one (said with what to do). */
export function readAgentRun(repoRoot: string, loopId: string): AgentRunRecord | null {
  const file = agentRunPath(repoRoot, loopId);
  const text = readTextOrNull(file);
  if (text === null) return existsSync(file) ? fail(file, 'it cannot be read') : null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail(file, 'it is not JSON');
  }
  const problem = recordProblem(value);
  return problem ? fail(file, problem) : (value as AgentRunRecord);
}

function fail(file: string, why: string): never {
  throw new Error(
    `${file} (what the last agent run found, kept to put back what it changed) is not the runner's record: ${why}; look at git for-each-ref refs/heads refs/tags refs/replace, then remove the file`,
  );
}

function recordProblem(v: unknown): string | null {
  if (typeof v !== 'object' || v === null) return 'not an object';
  const r = v as Partial<AgentRunRecord>;
  if (r.ralphkit !== 1) return 'no version';
  if (!isShaMap(r.branches) || !isShaMap(r.endRefs)) return 'a ref does not name an object id';
  if (!Array.isArray(r.skip) || !r.skip.every((s) => typeof s === 'string')) return 'skip is not a list of names';
  if (!Array.isArray(r.flags) || !r.flags.every((f) => Array.isArray(f) && typeof f[0] === 'string'))
    return 'flags is not a list';
  if (typeof r.ownGitDir !== 'string' || !path.isAbsolute(r.ownGitDir)) return 'ownGitDir is not an absolute path';
  if (typeof r.commonDir !== 'string' || !path.isAbsolute(r.commonDir)) return 'commonDir is not an absolute path';
  if (r.stashLog !== null && typeof r.stashLog !== 'string') return 'stashLog is not base64 or null';
  const head = r.headLog;
  if (
    head !== undefined &&
    (typeof head?.file !== 'string' ||
      path.basename(head.file) !== 'HEAD' ||
      !path.isAbsolute(head.file) ||
      (head.bytes !== null && typeof head.bytes !== 'string'))
  )
    return 'headLog is not a HEAD reflog';
  return null;
}

function isShaMap(v: unknown): v is Record<string, string> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((s) => typeof s === 'string' && isObjectId(s))
  );
}

type HeldFields = Pick<AgentRunRecord, 'endRefs' | 'commonDir' | 'stashLog' | 'headLog'>;

/** The record's fields for what the loop's end puts back (bytes as base64). */
export function heldRefsRecord(held: HeldRefs): HeldFields {
  return {
    endRefs: Object.fromEntries(held.refs),
    commonDir: held.commonDir,
    stashLog: base64(held.stashLog),
    ...(held.headLog ? { headLog: { file: held.headLog.file, bytes: base64(held.headLog.bytes) } } : {}),
  };
}

function heldRefsOf(record: HeldFields): HeldRefs {
  return {
    refs: new Map(Object.entries(record.endRefs)),
    commonDir: record.commonDir,
    stashLog: bytes(record.stashLog),
    ...(record.headLog ? { headLog: { file: record.headLog.file, bytes: bytes(record.headLog.bytes) } } : {}),
  };
}

const base64 = (b: Buffer | null): string | null => b?.toString('base64') ?? null;
const bytes = (text: string | null): Buffer | null => (text === null ? null : Buffer.from(text, 'base64'));

/** What the put-back of replace refs and tags says. */
export function renderEndRefs(put: string[], loopId: string): string {
  return `put back ${put.join(', ')} as the loop found them: the agent made git show another commit in place of one the loop verified, a tag your merge of a branch would take instead, or a stash your git stash pop would apply (what it made is kept under refs/ralphkit/loops/${loopId}/moved/)`;
}

/**
 * What the runner owes the last agent run, done in `top` (the loop's tree) at the loop's end and by a resume (a runner
 * killed while the agent ran owes all of it): branches, then the tags and replace refs, then the index flags. Done
 * again after the runner's own put-back, each is a no-op. `done` is false when the branch checked out here moved and
 * was left: the record stays, so the resume after you switch off it puts it back.
 */
export async function finishAgentRun(
  top: string,
  loopId: string,
  record: AgentRunRecord,
  keepDir?: string,
): Promise<{ said: string[]; done: boolean; failed?: boolean }> {
  const said: string[] = [];
  const now = await readRefs(top);
  const branches = now.branches ?? new Map<string, string>();
  const here = now.branch;
  const { violation, left, failed } = await restoreMovedBranches({
    top,
    loopId,
    before: new Map(Object.entries(record.branches)),
    now,
    skip: record.skip,
    here,
    commonDir: record.commonDir,
  });
  for (const m of [violation?.reason, left]) if (m) said.push(m);
  const created = await setAsideCreatedBranches({
    top,
    loopId,
    held: new Map(Object.entries(record.branches)),
    now: now.branches,
    skip: record.skip,
    here,
    commonDir: record.commonDir,
  });
  if (created.said) said.push(created.said);
  const put = await restoreEndRefs(top, loopId, heldRefsOf(record), keepDir);
  if (put.length) said.push(renderEndRefs(put, loopId));
  const view = await readIndexView(top, record.ownGitDir, null);
  const flags = await clearNewFlags(top, new Map(record.flags), view);
  if (flags) said.push(flags.reason);
  const stays = here !== null && !skips(record.skip, here) && record.branches[here] !== branches.get(here);
  const notDone = failed || created.failed;
  return { said, done: !stays && !notDone, ...(notDone ? { failed: true } : {}) };
}
