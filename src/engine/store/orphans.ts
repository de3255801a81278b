// The agents that loops with a dead runner left running (kill -9 of the runner): found from their state.json and
// stopped, by a start, a resume and `cleanup`.
import { groupHasLiveMember, isAlive, signalGroup } from '../processes.js';
import { listRecordedAgents, readAllStates, type RecordedAgent } from './state-file.js';

/** An agent still running for a loop whose runner was killed (kill -9): nobody verifies or records its work. */
export interface OrphanAgent {
  loopId: string;
  agentPid: number;
  /** The --parallel worker it ran for; absent for the loop's own agent. */
  worker?: number;
}

/**
 * Kills the agent groups that loops with a dead runner left behind, as `cancel` and `--resume` do. Called by a
 * start that holds the working-tree lock: one loop per tree, and such an agent would keep committing under the new
 * loop's agent. Waits (bounded) until they are gone, so the new loop's first iteration never meets them.
 */
export async function stopOrphanAgents(repoRoot: string, ownId: string): Promise<OrphanAgent[]> {
  const orphans: OrphanAgent[] = readAllStates(repoRoot)
    .filter((s) => s.id !== ownId && s.status === 'running' && !isAlive(s.pid, s.pidStart))
    .flatMap((s) =>
      listRecordedAgents(s)
        .filter(hasOrphanGroup)
        .map((a) => ({ loopId: s.id, agentPid: a.pid, ...(a.worker !== undefined ? { worker: a.worker } : {}) })),
    );
  for (const o of orphans) signalGroup(o.agentPid, 'SIGKILL');
  for (let waited = 0; waited < 2000 && orphans.some((o) => groupHasLiveMember(o.agentPid)); waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return orphans;
}

// The group outlives its leader when the agent's children are still at work, so the group is checked, not the pid;
// a pid now held by a process that started later is no sign of it (the kernel never reuses a live group id).
function hasOrphanGroup(agent: RecordedAgent): boolean {
  if (isAlive(agent.pid) && !isAlive(agent.pid, agent.start)) return false;
  return groupHasLiveMember(agent.pid);
}
