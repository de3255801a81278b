// The one "process group with a timeout" (src/engine/group-spawn.ts) that the agent, the checks, --on-exit and git run
// through: real processes; every wait is on a state, never a fixed delay.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnInGroup, type GroupRequest } from '../../../src/engine/group-spawn.js';
import { testdir } from '../../support/repo.js';
import { goneWithin, isAlive, killWhenDone, pidFrom } from '../../support/process.js';

function sh(script: string, extra: Partial<GroupRequest> = {}) {
  const out: Buffer[] = [];
  const run = spawnInGroup({
    file: 'sh',
    args: ['-c', script],
    cwd: testdir(),
    env: process.env,
    timeoutMs: 60_000,
    atEnd: 'kill',
    onStdout: (c) => out.push(c),
    ...extra,
  });
  return { run, output: () => Buffer.concat(out).toString() };
}

describe('spawnInGroup', () => {
  it('stdin reaches the program; its exit code and output come back', async () => {
    const { run, output } = sh('cat; exit 3', { input: 'hello\n' });
    const exit = await run.done;
    expect(exit).toMatchObject({ code: 3, stopped: null, spawnError: null });
    expect(output()).toBe('hello\n');
  });

  it('at the timeout stops the whole group, what the program started in the background too', async () => {
    const file = path.join(testdir(), 'pid');
    const { run } = sh(`sleep 60 & echo $! > '${file}'; wait`, { timeoutMs: 300, graceMs: 100, drainMs: 1000 });
    const exit = await run.done;
    const grandchild = await pidFrom(file);
    killWhenDone([grandchild]);
    expect(exit.stopped).toBe('timeout');
    expect(await goneWithin(grandchild)).toBe(true);
  });

  it('an abort stops it; stop(reason) names the first reason', async () => {
    const controller = new AbortController();
    const { run } = sh('sleep 60', { signal: controller.signal, graceMs: 0 });
    run.stop('too much output');
    controller.abort();
    expect((await run.done).stopped).toBe('too much output');
    const aborted = new AbortController();
    aborted.abort();
    expect((await sh('sleep 60', { signal: aborted.signal, graceMs: 0 }).run.done).stopped).toBe('abort');
  });

  it('a leftover holding the pipes is waited for only drainMs after the program exited; atEnd kill ends it, keep leaves it', async () => {
    for (const atEnd of ['kill', 'keep'] as const) {
      const file = path.join(testdir(), 'pid');
      const { run } = sh(`sleep 60 & echo $! > '${file}'; exit 0`, { drainMs: 200, atEnd });
      const exit = await run.done;
      const leftover = await pidFrom(file);
      killWhenDone([leftover]);
      expect(exit).toMatchObject({ code: 0, stopped: null });
      if (atEnd === 'kill') expect(await goneWithin(leftover)).toBe(true);
      else expect(isAlive(leftover)).toBe(true);
    }
  });

  it('a program that cannot be started reports the spawn error', async () => {
    const exit = await spawnInGroup({
      file: path.join(testdir(), 'missing'),
      args: [],
      cwd: testdir(),
      env: process.env,
      timeoutMs: 10_000,
      atEnd: 'kill',
    }).done;
    expect(exit.spawnError?.code).toBe('ENOENT');
  });
});
