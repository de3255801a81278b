// Weak checks (SPEC §6): a story check that already passes on the plan commit, before any work, proves nothing
// about that story. At the start of a loop each distinct story check runs once in a fresh checkout of the plan
// commit; one that passes is named, once per story, and recorded as `weak` in the ledger. Nothing is refused.
import type { Prd } from '../../prd/types.js';
import type { Pins, VerifyInput } from '../contracts.js';
import { CheckSession } from '../verify-session.js';

export interface WeakProbeInput extends Pick<VerifyInput, 'repoRoot' | 'ledgerPath' | 'loopId' | 'checkTimeoutMs' | 'log' | 'inPlace'> {
  topLevel: string;
  pins: Pins;
  prd: Prd;
  signal?: AbortSignal;
}

/** Runs the probe; returns the ids of the stories whose check passed before any work. */
export async function probeWeakChecks(input: WeakProbeInput): Promise<string[]> {
  const byCommand = new Map<string, string[]>();
  for (const s of input.prd.userStories) for (const c of s.checks ?? []) byCommand.set(c, [...(byCommand.get(c) ?? []), s.id]);
  if (!byCommand.size) return [];
  const session = new CheckSession({ ...input, prdPath: '', progressPath: '', prdBefore: '', iteration: 0, pins: null }, input.topLevel, input.pins.commit, () => new Date());
  const weak = new Set<string>();
  try {
    const where = await session.prepare('(probe)', input.prd.setup);
    // A setup that fails on the plan commit says nothing about the checks; the claims will meet it again.
    if ('failed' in where) return [];
    for (const [command, stories] of byCommand) {
      const r = await session.probe(command, where.cwd);
      if (r.aborted) return [...weak];
      for (const id of stories) {
        session.record({ ...session.base(id), kind: 'probe', command, exitCode: r.exitCode, weak: r.ok, durationMs: r.durationMs, outputSha256: r.outputSha256 });
        if (r.ok) weak.add(id);
      }
    }
  } finally {
    await session.close();
  }
  const ids = [...weak];
  for (const id of ids) {
    const checks = input.prd.userStories.find((s) => s.id === id)?.checks ?? [];
    input.log('warn', `${id}: its check${checks.length === 1 ? '' : 's'} already pass${checks.length === 1 ? 'es' : ''} on the plan commit ${input.pins.commit.slice(0, 7)}, before any work, so passing ${checks.length === 1 ? 'it' : 'them'} proves nothing about this story (marked weak); write a check that fails until the story is done (the ralph skill can write a failing test first)`);
  }
  return ids;
}
