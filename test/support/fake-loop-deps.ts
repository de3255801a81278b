// One fake of every edge the loop sees (LoopDeps), for unit tests of core/loop.ts: an agent that does nothing, a
// HEAD that never moves, verification that accepts nothing, a final gate that passes. Tests override what they test.
import type { LoopDeps } from '../../src/engine/types.js';

export function fakeLoopDeps(over: Partial<LoopDeps> = {}): LoopDeps {
  const prd = { branchName: 'b', userStories: [] };
  const deps: LoopDeps = {
    clock: { now: () => new Date(0), sleep: async () => {} },
    emit: () => {},
    signal: new AbortController().signal,
    runAgent: async () => ({
      exitCode: 0,
      signal: null,
      timedOut: false,
      stdout: '',
      stderr: '',
      finalMessage: '',
      durationMs: 1,
    }),
    prdBefore: () => '{}',
    headSha: async () => 'sha-0',
    committedWork: async () => false,
    verify: async () => ({ verdicts: [], restored: [], allPass: false, prd }),
    finalGate: async () => ({ passed: true, interrupted: false, prd, verdicts: [] }),
    readBranchTips: async () => [],
    // HEAD after the agent, as the test's own headSha says (the real one also puts back what the agent changed).
    inspectAgentGit: async () => ({ headAfter: await deps.headSha() }),
    recordTimeout: () => {},
    detectRateLimit: () => null,
    transientReason: () => null,
    budget: { beforeIteration: async () => 'continue' },
    saveState: () => {},
    beforeAgent: async () => {},
    ...over,
  };
  return deps;
}
