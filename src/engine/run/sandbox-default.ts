// Whether the agent runs sandboxed (SPEC §6): on by default where bubblewrap works, and the loop says in one line
// when it is not. An explicit --sandbox, or a resumed loop that ran sandboxed, is strict: where the sandbox cannot
// run, the start is refused (run.ts refuseSandbox) rather than quietly run without it.
import type { LoopState } from '../store/state-types.js';
import type { RunOptions } from '../loop-options.js';
import type { SandboxProbe } from '../agents/sandbox.js';

export interface SandboxChoice {
  sandbox: boolean;
  /** The sandbox was asked for (--sandbox, or the resumed loop ran under it): where it cannot run, refuse. */
  strict: boolean;
  /** The probe already run for the default (so the start does not run a second one). */
  probe?: SandboxProbe;
  /** The one line that says the loop runs without the sandbox, which guarantee applies, and what to type. */
  note?: string;
}

// What holds without the sandbox (docs/verification.md), said once at start.
const UNSANDBOXED =
  "the agent runs with your rights (it can write your HOME, .git and any file you can; the runner undoes changes to its own files and git's hooks and config after each iteration and rejects that iteration's claims)";
const SILENCE = 'to run without it and drop this line: --no-sandbox';

/**
 * The sandbox for this start. `given`: the options typed now; `resumed`: the loop being continued, whose stored
 * choice (its state.json's `sandbox`) is kept unless --sandbox or --no-sandbox is typed. `probe` is called only when
 * the default has to find out whether bubblewrap works here.
 */
export function decideSandbox(
  options: RunOptions,
  given: Set<keyof RunOptions>,
  resumed: LoopState | null,
  probe: () => SandboxProbe,
): SandboxChoice {
  if (!options.sandbox) return { sandbox: false, strict: false };
  // A state.json from before the default (no `sandbox` key) is decided like a new loop.
  const asked = given.has('sandbox') || (resumed !== null && resumed.options.sandbox === true);
  if (asked) return { sandbox: true, strict: true };
  const found = probe();
  if (found.ok) return { sandbox: true, strict: false, probe: found };
  const fix = found.fix ? `to sandbox it, ${found.fix}; ` : '';
  return {
    sandbox: false,
    strict: false,
    probe: found,
    note: `not sandboxed: ${found.reason}; ${UNSANDBOXED}; ${fix}${SILENCE}`,
  };
}
