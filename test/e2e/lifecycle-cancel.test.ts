// `ralphkit cancel <id>` (the built CLI) when it cannot or must not cancel: a clear error with a hint, exit 2,
// nothing written and nothing signalled. The read-only case runs the CLI as `nobody` when the tests run as root.
import { chmodSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { handOver, nobodyRoot, runCliAsNobody } from '../support/nobody.js';
import { cliAsTyped, runCli, testdir } from '../support/repo.js';
import { agent, loopRepo, loopStates, ralph, startRalph } from '../support/loop-repo.js';
import { isAlive as stillRuns, procStart, until } from '../support/process.js';
import { HAS_PROC, spawnStranger, writeRunningLoop } from '../support/lifecycle.js';

const NO_STACK = /unexpected error|\n\s+at /;

describe('ralphkit cancel refuses what it cannot cancel', () => {
  it('a loop that has ended: exit 2, its status named, and what to type next', async () => {
    const dir = loopRepo();
    expect((await ralph(dir, ['--agent-cmd', agent('worker'), '--pause', '0', '--name', 'done'])).code).toBe(0);
    const r = await runCli(['cancel', 'done'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /loop done is not running \(complete\); nothing to cancel\n.*hint: list the loops and their status with: node \S+\/bin\/ralphkit\.js status/,
    );
    expect(r.stderr).not.toMatch(NO_STACK);
  });

  it.runIf(HAS_PROC)(
    'a read-only loop folder: exit 2 naming the cancel marker and the fix; the runner is not signalled',
    async () => {
      const dir = loopRepo();
      const home = testdir();
      const runner = spawnStranger();
      writeRunningLoop(dir, { id: 'ro', pid: runner.pid, pidStart: procStart(runner.pid) });
      handOver(dir, home);
      const loopFolder = path.join(dir, 'ralph/.runs/ro');
      chmodSync(loopFolder, 0o555);
      onTestFinished(() => chmodSync(loopFolder, 0o755));
      const r = await runCliAsNobody(['cancel', 'ro'], { cwd: dir, env: { HOME: home } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        'could not write ralph/.runs/ro/cancel (EACCES: permission denied): loop ro was not cancelled; nothing was changed',
      );
      expect(r.stderr).toContain(
        `hint: make ralph/.runs/ro/ a folder this user can write (chmod u+w ralph/.runs/ro), then run again: ${cliAsTyped(path.join(nobodyRoot(), 'bin/ralphkit.js'))} cancel ro; or stop its runner directly: kill ${runner.pid}`,
      );
      expect(r.stderr).not.toMatch(NO_STACK);
      expect(existsSync(path.join(loopFolder, 'cancel'))).toBe(false);
      expect(stillRuns(runner.pid)).toBe(true);
      expect(JSON.parse(readFileSync(path.join(loopFolder, 'state.json'), 'utf8'))).toMatchObject({
        status: 'running',
      });
    },
  );

  it('ralph/.runs missing: no loop has run yet, and how to start one', async () => {
    const r = await runCli(['cancel', 'first'], { cwd: loopRepo() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /no loop named "first" in ralph\/\.runs\/\n.*hint: no loop has run in this repository yet; start one with: \.\/ralph\/ralph\.sh/,
    );
  });
});

describe.runIf(HAS_PROC)('the runner records when its pids started', () => {
  it('state.json and the locks carry the start times; after kill -9, cancel stops the agent group it recorded', async () => {
    const dir = loopRepo();
    const loop = startRalph(dir, [
      '--agent-cmd',
      agent('sleeper'),
      '--pause',
      '0',
      '--name',
      'k9',
      '--iteration-timeout',
      '40s',
    ]);
    onTestFinished(() => void loop.child.kill('SIGKILL'));
    await until('the agent to start', () => loopStates(dir).some((s) => s.agentPid), 20_000);
    const runner = loop.child.pid!;
    const state = JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/k9/state.json'), 'utf8'));
    expect(state).toMatchObject({ pid: runner, pidStart: procStart(runner), agentPidStart: procStart(state.agentPid) });
    const locks = path.join(dir, 'ralph/.runs/locks');
    for (const name of readdirSync(locks)) {
      expect(JSON.parse(readFileSync(path.join(locks, name), 'utf8'))).toMatchObject({
        pid: runner,
        pidStart: procStart(runner),
        loopId: 'k9',
      });
    }
    loop.child.kill('SIGKILL');
    await loop.done;
    expect(stillRuns(state.agentPid)).toBe(true);
    const r = await runCli(['cancel', 'k9'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('loop k9 was not running any more (its runner is gone); marked cancelled');
    await until('the orphaned agent group to be killed', () => !stillRuns(state.agentPid), 10_000);
    expect(loopStates(dir)[0]).toMatchObject({ status: 'cancelled' });
  });
});
