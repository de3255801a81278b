// The sandbox's default (run/sandbox-default.ts): on where bubblewrap works, one line where it does not, strict when
// asked for, and a resumed loop keeps its choice.
import { describe, expect, it } from 'vitest';
import { decideSandbox } from '../../../../src/engine/run/sandbox-default.js';
import { DEFAULT_OPTIONS } from '../../../../src/engine/cli/args.js';
import type { SandboxProbe } from '../../../../src/engine/agents/sandbox.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import type { RunOptions } from '../../../../src/engine/loop-options.js';

const works: SandboxProbe = { ok: true, bwrap: '/usr/bin/bwrap' };
const noBwrap: SandboxProbe = {
  ok: false,
  message: '--sandbox: bubblewrap (bwrap) is not on PATH',
  hint: 'x',
  reason: 'bubblewrap (bwrap) is not on PATH',
  fix: 'install bubblewrap: sudo apt-get install bubblewrap',
};
const macOS: SandboxProbe = {
  ok: false,
  message: '--sandbox: the sandbox needs Linux (bubblewrap); this is macOS',
  hint: 'run with --no-sandbox',
  reason: 'the sandbox needs Linux (bubblewrap); this is macOS',
};

function decide(
  options: Partial<RunOptions>,
  given: (keyof RunOptions)[],
  probe: SandboxProbe,
  stored?: Partial<RunOptions>,
) {
  let probed = 0;
  const resumed = stored ? ({ options: { ...DEFAULT_OPTIONS, ...stored } } as unknown as LoopState) : null;
  const choice = decideSandbox({ ...DEFAULT_OPTIONS, ...options }, new Set(given), resumed, () => (probed++, probe));
  return { ...choice, probed };
}

describe('decideSandbox', () => {
  it('sandboxes a new loop by default where bubblewrap works, and says nothing', () => {
    expect(decide({}, [], works)).toEqual({ sandbox: true, strict: false, probed: 1, probe: works });
  });

  it.each([
    [
      'no bwrap',
      noBwrap,
      /^not sandboxed: bubblewrap \(bwrap\) is not on PATH; the agent runs with your rights .*; to sandbox it, install bubblewrap: sudo apt-get install bubblewrap; to run without it and drop this line: --no-sandbox$/,
    ],
    [
      'macOS',
      macOS,
      /^not sandboxed: the sandbox needs Linux \(bubblewrap\); this is macOS; the agent runs with your rights .*\); to run without it and drop this line: --no-sandbox$/,
    ],
  ])('runs unsandboxed where it cannot (%s), in one line saying why, what holds and what to type', (_, probe, note) => {
    const choice = decide({}, [], probe);
    expect(choice).toMatchObject({ sandbox: false, strict: false });
    expect(choice.note).toMatch(note);
    expect(choice.note).not.toContain('\n');
  });

  it('--no-sandbox: off, silent, no probe', () => {
    expect(decide({ sandbox: false }, ['sandbox'], noBwrap)).toEqual({ sandbox: false, strict: false, probed: 0 });
  });

  it('a typed --sandbox is strict: the start refuses where it cannot run (no quiet fallback)', () => {
    expect(decide({ sandbox: true }, ['sandbox'], noBwrap)).toMatchObject({ sandbox: true, strict: true, probed: 0 });
  });

  it.each([
    ['--worktree', { worktree: true }],
    ['--parallel', { worktree: true, parallel: 2 }],
  ])('%s loops are sandboxed by default where it works, like a loop in the working tree', (_mode, options) => {
    expect(decide(options, [], works)).toMatchObject({ sandbox: true, strict: false, probed: 1 });
    expect(decide(options, [], works).note).toBeUndefined();
  });

  it('a resumed loop keeps its choice: sandboxed stays sandboxed (strict), unsandboxed stays so unless --sandbox is typed', () => {
    // mergeResumedOptions has put the stored value into the options.
    expect(decide({ sandbox: true }, [], noBwrap, { sandbox: true })).toMatchObject({
      sandbox: true,
      strict: true,
      probed: 0,
    });
    expect(decide({ sandbox: false }, [], works, { sandbox: false })).toEqual({
      sandbox: false,
      strict: false,
      probed: 0,
    });
    expect(decide({ sandbox: true }, ['sandbox'], works, { sandbox: false })).toMatchObject({
      sandbox: true,
      strict: true,
    });
    expect(decide({ sandbox: false }, ['sandbox'], works, { sandbox: true })).toMatchObject({ sandbox: false });
  });
});
