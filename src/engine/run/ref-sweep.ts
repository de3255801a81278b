// What the runner owes the agent runs at the loop's end and at a resume: the replace refs and tags they added or moved,
// and (from the last run's record, verify/agent-run-record.ts) the branches and index flags of a run whose put-back
// never happened: a runner killed with -9 while the agent ran, or a loop stopped on another branch (exit 6).
import { existsSync } from 'node:fs';
import type { RunContext } from '../types.js';
import type { Emit } from '../events.js';
import type { RunTrust } from '../verify/trust.js';
import { WorkProtected } from '../errors.js';
import { loopDir } from '../store/layout.js';
import { isEndRef, restoreEndRefs } from '../verify/replace-refs.js';
import {
  agentRunPath,
  clearAgentRun,
  finishAgentRun,
  readAgentRun,
  renderEndRefs,
} from '../verify/agent-run-record.js';
import { restoreMovedBranches, setAsideCreatedBranches, skips } from '../verify/branch-moves.js';
import { gitOk } from '../git/git.js';
import { isAlive } from '../processes.js';
import { readAllStates } from '../store/state-file.js';
import { readRefs } from '../git/head.js';
import { otherLoopBranches } from './after-agent.js';

/**
 * At the loop's end, before anyone's git reads them. Never throws: what could not be done is said, and false returned
 * (the loop then does not end with 0: your refs may hold what the agent put there).
 */
export async function settleRefsAtEnd(run: RunContext, trust: RunTrust): Promise<boolean> {
  try {
    const record = readAgentRun(run.paths.repoRoot, run.id);
    if (record) {
      const { said, done, failed } = await finishAgentRun(
        trust.topLevel,
        run.id,
        record,
        loopDir(run.paths.repoRoot, run.id),
      );
      for (const message of said) run.emit({ type: 'warn', message });
      if (done) clearAgentRun(run.paths.repoRoot, run.id);
      return !failed;
    }
    if (!trust.heldRefs) return true;
    const put = await restoreEndRefs(trust.topLevel, run.id, trust.heldRefs, loopDir(run.paths.repoRoot, run.id));
    if (put.length) run.emit({ type: 'warn', message: renderEndRefs(put, run.id) });
    // A --parallel run (no record: its workers' siblings move while each runs): your branches, put back now.
    const held = trust.heldBranches;
    if (!held) return true;
    const now = await readRefs(trust.topLevel);
    const skip = [run.branch, `${run.branch}--*`, ...otherLoopBranches(run)];
    const { violation, left, failed } = await restoreMovedBranches({
      top: trust.topLevel,
      loopId: run.id,
      before: held,
      now,
      skip,
      here: now.branch,
      commonDir: trust.gitDir,
    });
    const created = await setAsideCreatedBranches({
      top: trust.topLevel,
      loopId: run.id,
      held,
      now: now.branches,
      skip,
      here: now.branch,
      commonDir: trust.gitDir,
    });
    for (const message of [violation?.reason, left, created.said]) if (message) run.emit({ type: 'warn', message });
    return !failed && !created.failed;
  } catch (err) {
    run.emit({
      type: 'warn',
      message: `could not put back the branches, tags and other refs as the loop found them (${(err as Error).message}): look at git for-each-ref before you check out or merge anything`,
    });
    return false;
  }
}

/** A resume, before it reads its refs and index: the last agent run's put-back, when it never happened. */
export async function settleRefsAtResume(run: RunContext): Promise<void> {
  let record: ReturnType<typeof readAgentRun>;
  try {
    record = readAgentRun(run.paths.repoRoot, run.id);
  } catch (err) {
    throw new WorkProtected((err as Error).message, `then continue: ./ralph/ralph.sh --resume ${run.id}`);
  }
  if (!record) return;
  const { said, done } = await finishAgentRun(run.paths.repoRoot, run.id, record, loopDir(run.paths.repoRoot, run.id));
  for (const message of said)
    run.emit({
      type: 'warn',
      message: `the last agent run was never checked for what it changed outside the loop's branch (its runner was killed, or the loop stopped): ${message}`,
    });
  if (done) clearAgentRun(run.paths.repoRoot, run.id);
}

/**
 * A loop's start: another loop whose runner stopped while its agent ran (killed with -9, or exit 6 on a moved branch)
 * left the record of what that agent found, and nobody did the put-back it owed. What differs from that record now is
 * named, not put back: the record may be days old, and a move since may be yours; that loop's resume puts them back.
 * No git process unless such a record is there.
 */
export async function nameOwedPutBacks(root: string, ownId: string, top: string, emit: Emit): Promise<void> {
  const owed = readAllStates(root).filter(
    (s) =>
      s.id !== ownId && existsSync(agentRunPath(root, s.id)) && !(s.status === 'running' && isAlive(s.pid, s.pidStart)),
  );
  if (!owed.length) return;
  let listed: string;
  try {
    listed = await gitOk(top, ['for-each-ref', '--format=%(refname) %(objectname)']);
  } catch (err) {
    emit({
      type: 'warn',
      message: `loops ${owed.map((s) => s.id).join(', ')} stopped while an agent ran, and the refs could not be read to see what it changed (${(err as Error).message}): look at git for-each-ref before you check out or merge anything`,
    });
    return;
  }
  const now = new Map(
    listed.split('\n').flatMap((l) => {
      const [ref, sha] = l.split(' ');
      return ref && sha ? [[ref, sha] as const] : [];
    }),
  );
  for (const { id } of owed) {
    let record: ReturnType<typeof readAgentRun>;
    try {
      record = readAgentRun(root, id);
    } catch (err) {
      emit({ type: 'warn', message: (err as Error).message });
      continue;
    }
    if (!record) continue;
    const held = [
      ...Object.entries(record.branches)
        .filter(([b]) => !skips(record.skip, b))
        .map(([b, sha]) => [`refs/heads/${b}`, sha] as const),
      ...Object.entries(record.endRefs),
    ];
    const changed = [
      ...held
        .filter(([ref, sha]) => now.get(ref) !== sha)
        .map(([ref]) => `${ref} ${now.has(ref) ? 'moved' : 'deleted'}`),
      ...[...now.keys()].filter((ref) => isEndRef(ref) && !(ref in record.endRefs)).map((ref) => `${ref} added`),
    ];
    if (changed.length)
      emit({
        type: 'warn',
        message: `loop ${id} stopped while its agent ran (its runner was killed, or it stopped on another branch), and what that agent changed outside its branch was never checked: since it started, ${changed.join(', ')}. If that was not you, ./ralph/ralph.sh --resume ${id} puts them back before it goes on (what it finds is kept under refs/ralphkit/loops/${id}/moved/)`,
      });
  }
}
