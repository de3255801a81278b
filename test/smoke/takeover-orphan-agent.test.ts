// A runner killed with -9 leaves its agent group running in the working tree. A NEW loop (not --resume) that takes
// the tree over stops that agent before its own first iteration, as `cancel` and `--resume` do, and says so.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FIXTURES, testdir } from '../support/repo.js';
import { agent, loopRepo, loopStates, ralph, startRalph } from '../support/loop-repo.js';
import { isAlive as stillRuns, until } from '../support/process.js';
import { HAS_PROC } from '../support/lifecycle.js';

const PROBE = path.join(FIXTURES, 'takeover', 'probe.mjs');

describe.runIf(HAS_PROC)('a new loop after kill -9 of the runner', () => {
  it("kills the dead loop's agent group before its first iteration and says so; a later start has nothing to say", async () => {
    const dir = loopRepo();
    const pidsFile = path.join(testdir(), 'pids');
    const old = startRalph(
      dir,
      ['--agent-cmd', agent('sleeper'), '--pause', '0', '--name', 'old', '--iteration-timeout', '60s'],
      { FAKE_PIDS_FILE: pidsFile },
    );
    onTestFinished(() => void old.child.kill('SIGKILL'));
    await until(
      'the slow agent and its child to start',
      () => existsSync(pidsFile) && readFileSync(pidsFile, 'utf8').trim().split('\n').length === 2,
      20_000,
    );
    const pids = readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number);
    old.child.kill('SIGKILL');
    await old.done;
    expect(pids.every(stillRuns)).toBe(true);
    // Make sure no test leaves them behind, whatever happens below.
    onTestFinished(() =>
      pids.forEach((p) => {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }),
    );

    const probeOut = path.join(testdir(), 'probe.jsonl');
    const env = { PROBE_PIDS_FILE: pidsFile, PROBE_OUT: probeOut };
    const r = await ralph(dir, ['--agent-cmd', PROBE, '--pause', '0', '--name', 'new', '1'], env);
    expect(r.code, r.stderr).toBe(1);
    const agentPid = loopStates(dir).find((s) => s.id === 'old')!.agentPid;
    expect(r.stderr).toContain(
      `loop old's runner is gone (killed) but its agent was still running in this working tree (process group ${agentPid}); stopped it`,
    );
    // What the new loop's first agent saw: none of the old agent's processes.
    expect(
      readFileSync(probeOut, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([{ iteration: 1, running: [] }]);
    expect(pids.some(stillRuns)).toBe(false);

    const again = await ralph(dir, ['--agent-cmd', PROBE, '--pause', '0', '--name', 'again', '1'], env);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).not.toContain('runner is gone (killed)');
  });
});
