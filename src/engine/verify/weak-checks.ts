// Weak checks (SPEC §6): a story check that already passes on the plan commit, before any work, proves nothing
// about that story. At the start of a loop each distinct story check runs once in a fresh checkout of the plan
// commit; one that passes is named, once per story, and recorded as `weak` in the ledger. Nothing is refused.
import type { Prd } from '../../prd/types.js';
import type { Pins, VerifyInput } from '../types.js';
import { runCheck } from './checks.js';
import { appendLedger, readLedger, summariseLedger, type ProbeLine } from '../store/ledger.js';
import { createCheckout, removeCheckout } from './checkout.js';
import { planCheckWrap } from './session.js';
import { planAgentEnv } from '../agents/env.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { guardWrite } from '../errors.js';
import { activeStories } from '../../prd/skip.js';

export interface WeakProbeInput extends Pick<VerifyInput, 'repoRoot' | 'ledgerPath' | 'loopId' | 'checkTimeoutMs' | 'log' | 'inPlace' | 'sandbox' | 'guardTrusted'> {
  topLevel: string;
  pins: Pins;
  prd: Prd;
  signal?: AbortSignal;
}

/** Runs the probe; returns the ids of the stories whose check passed before any work. */
export async function probeWeakChecks(input: WeakProbeInput): Promise<string[]> {
  const byCommand = new Map<string, string[]>();
  // A story set aside is never checked, so its checks prove nothing either way and are not probed.
  for (const s of activeStories(input.prd.userStories)) for (const c of s.checks ?? []) byCommand.set(c, [...(byCommand.get(c) ?? []), s.id]);
  if (!byCommand.size) return [];
  const checkout = input.inPlace ? null : await createCheckout(input.topLevel, input.pins.commit, null);
  const cwd = checkout?.dir ?? input.topLevel;
  const { env, token } = planAgentEnv(process.env, {});
  // The plan commit's code may be an agent's (a --repin, a branch with earlier work): sandboxed like any check.
  const wrap = planCheckWrap(input.sandbox, cwd, input.topLevel);
  const run = (command: string) => runCheck({ command, cwd, env, timeoutMs: input.checkTimeoutMs, signal: input.signal, wrap });
  const weak = new Set<string>();
  try {
    // A setup that fails on the plan commit says nothing about the checks; the claims will meet it again.
    if (input.prd.setup && !(await run(input.prd.setup)).ok) return [];
    for (const [command, stories] of byCommand) {
      const r = await run(command);
      if (r.aborted) return [...weak];
      const time = new Date().toISOString();
      const lines: ProbeLine[] = stories.map((story) => ({ time, loop: input.loopId, iteration: 0, story, commit: input.pins.commit, kind: 'probe', command, exitCode: r.exitCode, weak: r.ok, durationMs: r.durationMs, outputSha256: r.outputSha256 }));
      guardWrite(input.ledgerPath, input.repoRoot, () => appendLedger(input.ledgerPath, lines));
      if (r.ok) for (const id of stories) weak.add(id);
    }
  } finally {
    await stopMarkedProcesses(token);
    if (checkout) removeCheckout(checkout.dir);
    // Before the runner's next git command: what the probe's checks planted in git's configuration goes back.
    input.guardTrusted?.('the checks');
  }
  const ids = [...weak];
  for (const id of ids) {
    const checks = input.prd.userStories.find((s) => s.id === id)?.checks ?? [];
    input.log('warn', `${id}: its check${checks.length === 1 ? '' : 's'} already pass${checks.length === 1 ? 'es' : ''} on the plan commit ${input.pins.commit.slice(0, 7)}, before any work, so passing ${checks.length === 1 ? 'it' : 'them'} proves nothing about this story (marked weak); write a check that fails until the story is done (the ralph skill can write a failing test first)`);
  }
  return ids;
}

/**
 * The stories a resumed loop's probe named weak, from its ledger lines. The ledger is output (under --sandbox the agent
 * cannot write it; without, it could take a story off this list): only the words of the exit line and the record.
 */
export function readWeakStories(ledgerFile: string): string[] {
  try {
    return summariseLedger(readLedger(ledgerFile)).weak;
  } catch {
    return [];
  }
}
