// Weak checks (SPEC §6): a story check that already passes on the plan commit, before any work, proves nothing
// about that story. At the start of a loop each distinct story check runs once in a fresh checkout of the plan
// commit; one that passes is named, once per story, and recorded as `weak` in the ledger. The plan-level checks run
// there too: every claim must pass them, so one that already fails (the project's whole test suite, with tests
// written first for stories not done yet) may block every story until the last; it is named with what to do.
// Nothing is refused.
import type { Prd } from '../../prd/types.js';
import type { Pins, VerifyInput } from '../types.js';
import { runCheck } from './checks.js';
import { appendLedger, readLedger, summariseLedger, type ProbeLine } from '../store/ledger.js';
import { createCheckout, removeCheckout } from './checkout.js';
import { planCheckWrap } from './session.js';
import { ChecksEnv } from './check-env.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { guardWrite } from '../errors.js';
import { activeStories } from '../../prd/skip.js';

export interface WeakProbeInput extends Pick<VerifyInput, 'repoRoot' | 'ledgerPath' | 'loopId' | 'checkTimeoutMs' | 'log' | 'inPlace' | 'sandbox' | 'guardTrusted' | 'checkBase'> {
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
  const planChecks = [...new Set(input.prd.checks ?? [])].filter((c) => !byCommand.has(c));
  if (!byCommand.size && !planChecks.length) return [];
  const checkout = input.inPlace ? null : await createCheckout(input.topLevel, input.pins.commit, null);
  const cwd = checkout?.dir ?? input.topLevel;
  const checkEnv = new ChecksEnv(input.checkBase, input.log);
  const { token } = checkEnv.plan;
  // The plan commit's code may be an agent's (a --repin, a branch with earlier work): sandboxed like any check.
  const run = (command: string) => runCheck({ command, cwd, env: checkEnv.env, timeoutMs: input.checkTimeoutMs, signal: input.signal, wrap: planCheckWrap(input.sandbox, cwd, input.topLevel, checkEnv.env) });
  const weak = new Set<string>();
  try {
    // A setup that fails on the plan commit says nothing about the checks; the claims will meet it again.
    if (input.prd.setup && !(await run(input.prd.setup)).ok) return [];
    if (input.prd.setup) checkEnv.renew();
    for (const [command, stories] of byCommand) {
      const r = await run(command);
      if (r.aborted) return [...weak];
      const time = new Date().toISOString();
      const lines: ProbeLine[] = stories.map((story) => ({ time, loop: input.loopId, iteration: 0, story, commit: input.pins.commit, kind: 'probe', command, exitCode: r.exitCode, weak: r.ok, durationMs: r.durationMs, outputSha256: r.outputSha256 }));
      guardWrite(input.ledgerPath, input.repoRoot, () => appendLedger(input.ledgerPath, lines));
      if (r.ok) for (const id of stories) weak.add(id);
    }
    for (const command of planChecks) {
      const r = await run(command);
      if (r.aborted) return [...weak];
      if (!r.ok) input.log('warn', renderFailingPlanCheck(command, input.pins.commit, r.exitCode));
    }
  } finally {
    await stopMarkedProcesses(token);
    if (checkout) removeCheckout(checkout.dir);
    checkEnv.remove();
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

/** A plan-level check that fails before any work: why it may block every story, and what to do. */
export function renderFailingPlanCheck(command: string, commit: string, exitCode: number | null): string {
  return `the plan-level check \`${command}\` already fails on the plan commit ${commit.slice(0, 7)}, before any work (exit ${exitCode ?? 'by a signal'}); every claim must pass it, so if it fails for the stories not done yet (their tests written first), no story can be accepted before the last one. Move it to the last story's checks, and give each story a check that runs only its own test (ralph/prd.json "checks" of each story); or, if the project fails it already, fix that first`;
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
