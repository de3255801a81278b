// Weak checks (SPEC §6): a story check that already passes on the plan commit, before any work, proves nothing
// about that story. At the start of a loop each distinct story check runs once in a fresh checkout of the plan
// commit (one setup, through the loop's setup cache; two checks at a time); one that passes is named, once per
// story, and recorded as `weak` in the ledger. The plan-level checks run there too: every claim must pass them, so
// one that already fails (the project's whole test suite, with tests written first for stories not done yet) may
// block every story until the last; it is named with what to do.
// Nothing is refused.
import type { Prd } from '../../prd/types.js';
import type { Pins, VerifyInput } from './types.js';
import { runCheck, type CheckResult } from './checks.js';
import { appendLedger, readLedger, summariseLedger, type ProbeLine } from '../store/ledger.js';
import { createCheckout, removeCheckout, resetCheckoutGit, type Checkout } from './checkout.js';
import { loopSetupCache, renderTamperedCache, setUpThroughCache } from './setup-cache.js';
import { apartSandbox, planCheckWrap, sandboxedEnv } from './check-sandbox.js';
import { ChecksEnv } from './check-env.js';
import { withCheckoutPath, withRepoVars } from './repo-env.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { guardWrite, SealBroken } from '../errors.js';
import { activeStories } from '../../prd/skip.js';
import { CHECKS_AT_ONCE, mapAtMost } from '../../util/at-most.js';

export interface WeakProbeInput
  extends Pick<
    VerifyInput,
    | 'repoRoot'
    | 'ledgerPath'
    | 'loopId'
    | 'checkTimeoutMs'
    | 'log'
    | 'inPlace'
    | 'sandbox'
    | 'guardTrusted'
    | 'checkBase'
  > {
  topLevel: string;
  pins: Pins;
  prd: Prd;
  signal?: AbortSignal;
}

/** Runs the probe; returns the ids of the stories whose check passed before any work. */
export async function probeWeakChecks(input: WeakProbeInput): Promise<string[]> {
  const byCommand = new Map<string, string[]>();
  // A story set aside is never checked, so its checks prove nothing either way and are not probed.
  for (const s of activeStories(input.prd.userStories))
    for (const c of s.checks ?? []) byCommand.set(c, [...(byCommand.get(c) ?? []), s.id]);
  // In place, a plan-level check would run in your working tree before any work, and what it writes there would be
  // taken for the agent's: only a fresh checkout probes them.
  const planChecks = input.inPlace ? [] : [...new Set(input.prd.checks ?? [])].filter((c) => !byCommand.has(c));
  if (!byCommand.size && !planChecks.length) return [];
  const n = byCommand.size + planChecks.length;
  // Said before it starts: with a setup this is the longest silence of a loop's start.
  input.log(
    'info',
    `probing ${n} check${n === 1 ? '' : 's'} on the plan commit ${input.pins.commit.slice(0, 7)} before any work${input.prd.setup ? ` (after setup \`${input.prd.setup}\`)` : ''}: a check that passes already proves nothing`,
  );
  const checkout = input.inPlace ? null : await createCheckout(input.topLevel, input.pins.commit, null);
  const cwd = checkout?.dir ?? input.topLevel;
  const checkEnv = new ChecksEnv(input.checkBase, input.log);
  const { token } = checkEnv.plan;
  // The plan commit's code may be an agent's (a --repin, a branch with earlier work): sandboxed like any check.
  // `apart`: setup where the loop's setup cache is built, with the repository hidden under --sandbox (apartSandbox).
  const run = (command: string, apart?: string) => {
    const dir = apart ?? cwd;
    const wrap = planCheckWrap(
      apart ? apartSandbox(input.sandbox, input.topLevel) : input.sandbox,
      dir,
      input.topLevel,
      checkEnv.env,
    );
    // As a check's and the setup cache's (verify/session.ts): the repository's PATH folders and variables naming it,
    // the checkout's; TMPDIR the sandbox's own.
    const env = apart
      ? withRepoVars(checkEnv.env, input.checkBase, apart)
      : withCheckoutPath(checkEnv.env, input.checkBase, cwd);
    return runCheck({
      command,
      cwd: dir,
      env: sandboxedEnv(env, wrap),
      timeoutMs: input.checkTimeoutMs,
      signal: input.signal,
      wrap,
    });
  };
  const weak = new Set<string>();
  try {
    // A setup that fails on the plan commit says nothing about the checks; the claims will meet it again. Said, so
    // that a weak check nobody probed is not taken for a strong one (and a resumed loop probes again: no lines).
    if (input.prd.setup && !(await probeSetup(input, input.prd.setup, checkout, run, checkEnv))) {
      if (!input.signal?.aborted)
        input.log(
          'warn',
          `the plan's setup \`${input.prd.setup}\` failed on the plan commit ${input.pins.commit.slice(0, 7)}, so no check was probed for passing before any work: stories whose checks prove nothing are not named this time`,
        );
      return [];
    }
    // Up to CHECKS_AT_ONCE at a time; their lines and warnings in the plan's order.
    const commands = [...byCommand.keys(), ...planChecks];
    const results = await mapAtMost(commands, CHECKS_AT_ONCE, (c) => run(c));
    for (const [i, command] of commands.entries()) {
      const r = results[i];
      if (r.aborted) return [...weak];
      const stories = byCommand.get(command);
      if (!stories) {
        if (!r.ok) input.log('warn', renderFailingPlanCheck(command, input.pins.commit, r.exitCode));
        continue;
      }
      const time = new Date().toISOString();
      const lines: ProbeLine[] = stories.map((story) => ({
        time,
        loop: input.loopId,
        iteration: 0,
        story,
        commit: input.pins.commit,
        kind: 'probe',
        command,
        exitCode: r.exitCode,
        weak: r.ok,
        durationMs: r.durationMs,
        outputSha256: r.outputSha256,
      }));
      guardWrite(input.ledgerPath, input.repoRoot, () => appendLedger(input.ledgerPath, lines));
      if (r.ok) for (const id of stories) weak.add(id);
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
    input.log(
      'warn',
      `${id}: its check${checks.length === 1 ? '' : 's'} already pass${checks.length === 1 ? 'es' : ''} on the plan commit ${input.pins.commit.slice(0, 7)}, before any work, so passing ${checks.length === 1 ? 'it' : 'them'} proves nothing about this story (marked weak); write a check that fails until the story is done (the ralph skill can write a failing test first)`,
    );
  }
  return ids;
}

/**
 * The plan's setup in the probe's checkout, through the loop's setup cache (verify/setup-cache.ts): the probe's run
 * is usually the one the claims' checkouts copy from. True when it passed.
 */
async function probeSetup(
  input: WeakProbeInput,
  setup: string,
  checkout: Checkout | null,
  run: (command: string, apart?: string) => Promise<CheckResult>,
  checkEnv: ChecksEnv,
): Promise<boolean> {
  let ok = true;
  const settle = async (r: CheckResult): Promise<void> => {
    ok = r.ok;
    if (!r.ok) return;
    checkEnv.renew();
    if (!checkout) return;
    // Setup ran the plan commit's code: git's configuration is put back before the runner's git reads the checkout.
    resetCheckoutGit(checkout);
    input.guardTrusted?.('the checks');
  };
  if (!checkout) {
    await settle(await run(setup));
    return ok;
  }
  try {
    await setUpThroughCache(loopSetupCache(input.topLevel, input.loopId), setup, checkout, {
      run: () => run(setup),
      settle,
      // Setup ran the plan commit's code where the cache is built: the checks get a new HOME, and what the runner
      // trusts is checked, as after a setup in the checkout.
      runApart: async (dir) => {
        const r = await run(setup, dir);
        checkEnv.renew();
        input.guardTrusted?.('the checks');
        return r;
      },
      copied: async () => {},
      tampered: (made) => input.log('warn', renderTamperedCache(made)),
    });
  } catch (err) {
    // A dependency out of the checkout refuses every claim there (setup-cache.ts); here it means nothing is probed.
    if (!(err instanceof SealBroken)) throw err;
    input.log('warn', err.message);
    return false;
  }
  return ok;
}

/** A plan-level check that fails before any work: why it may block every story, and what to do. */
export function renderFailingPlanCheck(command: string, commit: string, exitCode: number | null): string {
  return `the plan-level check \`${command}\` already fails on the plan commit ${commit.slice(0, 7)}, before any work (exit ${exitCode ?? 'by a signal'}); every claim must pass it, so if it fails for the stories not done yet (their tests written first), no story can be accepted before the last one. Move it to the last story's checks, and give each story a check that runs only its own test (ralph/prd.json "checks" of each story); or, if the project fails it already, fix that first`;
}

/**
 * The active stories with a check the loop's probe wrote no line for at plan commit `commit`: a probe stopped by
 * Ctrl-C (or a kill) before it got to them, or a setup that failed there (a --repin's probe has a commit of its own).
 * A resumed loop probes them, at that commit.
 */
export function unprobedStories(prd: Prd, ledgerFile: string, commit: string): Prd['userStories'] {
  const probed = new Set(
    readLedger(ledgerFile).flatMap((l) =>
      l.kind === 'probe' && l.commit === commit ? [`${l.story}\u0000${l.command}`] : [],
    ),
  );
  return activeStories(prd.userStories).filter((s) => (s.checks ?? []).some((c) => !probed.has(`${s.id}\u0000${c}`)));
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
