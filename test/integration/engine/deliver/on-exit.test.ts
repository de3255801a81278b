// runOnExit in-process with a short bound: the whole process group is stopped at the timeout or on an interrupt,
// and only the end of a flood of output is shown.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runOnExit, ON_EXIT_OUTPUT_BYTES } from '../../../../src/engine/deliver/on-exit.js';
import { testdir } from '../../../support/repo.js';
import { goneWithin, pidFrom } from '../../../support/process.js';

function collect(command: string, signal = new AbortController().signal, timeoutMs = 30_000) {
  const shown: string[] = [];
  const warned: string[] = [];
  const done = runOnExit({
    command,
    cwd: testdir(),
    env: process.env,
    signal,
    timeoutMs,
    show: (l) => shown.push(l),
    warn: (m) => warned.push(m),
  });
  return { shown, warned, done };
}

describe('runOnExit', () => {
  it('stops the whole process group at its timeout, with one warning', async () => {
    const pidFile = path.join(testdir(), 'pid');
    const run = collect(`sleep 300 & echo $! > ${pidFile}; echo started; wait`, undefined, 500);
    await run.done;
    expect(run.warned).toEqual([
      "--on-exit command ran longer than 0.5s and was stopped; the loop's exit code is unchanged",
    ]);
    expect(run.shown).toEqual(['started']);
    // The background child of the command went with it.
    expect(await goneWithin(await pidFrom(pidFile), 5000)).toBe(true);
  });

  it('an interrupt stops it at once', async () => {
    const pidFile = path.join(testdir(), 'pid');
    const controller = new AbortController();
    const run = collect(`echo $$ > ${pidFile}; exec sleep 300`, controller.signal);
    const pid = await pidFrom(pidFile);
    controller.abort();
    await run.done;
    expect(run.warned).toEqual(["--on-exit command was stopped by an interrupt; the loop's exit code is unchanged"]);
    expect(await goneWithin(pid, 5000)).toBe(true);
  });

  it('shows only the end of a flood of output, and says so', async () => {
    const run = collect(`i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done`);
    await run.done;
    expect(run.warned).toEqual([]);
    expect(run.shown[0]).toBe(`(the last ${ON_EXIT_OUTPUT_BYTES / 1024} KiB of its output)`);
    expect(run.shown.at(-1)).toBe('line 19999');
    expect(run.shown.join('\n').length).toBeLessThanOrEqual(ON_EXIT_OUTPUT_BYTES + 100);
  });

  it("a command sh cannot run is a warning with the shell's exit status", async () => {
    const run = collect('no-such-command-ralphkit-test');
    await run.done;
    expect(run.warned).toEqual(["--on-exit command exited 127; the loop's exit code is unchanged"]);
    expect(run.shown.join('\n')).toContain('not found');
  });
});
