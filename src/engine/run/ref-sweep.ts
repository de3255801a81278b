// What the runner owes the agent runs at the loop's end and at a resume: the replace refs and tags they added or moved,
// and (from the last run's record, verify/agent-run-record.ts) the branches and index flags of a run whose put-back
// never happened: a runner killed with -9 while the agent ran, or a loop stopped on another branch (exit 6).
import type { RunContext } from '../types.js';
import type { RunTrust } from '../verify/trust.js';
import { WorkProtected } from '../errors.js';
import { loopDir } from '../store/layout.js';
import { restoreEndRefs } from '../verify/replace-refs.js';
import { clearAgentRun, finishAgentRun, readAgentRun, renderEndRefs } from '../verify/agent-run-record.js';
import { restoreMovedBranches } from '../verify/branch-moves.js';
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
    const { violation, left, failed } = await restoreMovedBranches({
      top: trust.topLevel,
      loopId: run.id,
      before: held,
      now,
      skip: [run.branch, `${run.branch}--*`, ...otherLoopBranches(run)],
      here: now.branch,
      commonDir: trust.gitDir,
    });
    for (const message of [violation?.reason, left]) if (message) run.emit({ type: 'warn', message });
    return !failed;
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
