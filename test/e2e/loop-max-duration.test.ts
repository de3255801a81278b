// --max-duration: the time limit of one invocation, as a CI job needs it under its own timeout. An agent still running
// when the time is up is stopped (not by --iteration-timeout: that is 10 minutes here), what it committed is verified,
// no new iteration starts, and the loop ends resumable with exit 1 (status max-duration).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { testdir } from '../support/repo.js';
import { agent, jsonEvents, loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { isAlive, until } from '../support/process.js';

const FAST = ['--pause', '0', '--iteration-timeout', '10m'];

function passes(dir: string): boolean[] {
  return (
    JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as { userStories: { passes: boolean }[] }
  ).userStories.map((s) => s.passes);
}

describe('--max-duration', () => {
  it('stops the agent in flight when the time is up, verifies what it committed, starts nothing more, and resumes', async () => {
    const dir = loopRepo({ stories: 2 });
    const pids = path.join(testdir(), 'pids');
    // The agent commits US-001, then waits forever for a file nobody writes: only the time limit can end it. 8s leaves
    // a loaded machine time to start the loop and the agent to commit before the limit.
    const env = { FAKE_HANG_AFTER_STORY: '1', FAKE_PIDS_FILE: pids, FAKE_RELEASE: path.join(testdir(), 'never') };
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), ...FAST, '--max-duration', '8s', '--json', '5'], env);
    expect(r.code, r.stderr).toBe(1);
    const events = jsonEvents(r.stdout);
    expect(events.filter((e) => e.type === 'iteration-start').map((e) => e.iteration)).toEqual([1]);
    expect(events.find((e) => e.type === 'agent-exit')).toMatchObject({ iteration: 1, timedOut: false });
    expect(events.find((e) => e.type === 'verify')).toMatchObject({ verdicts: [{ id: 'US-001', status: 'verified' }] });
    expect(events.at(-1)).toMatchObject({ type: 'exit', code: 1, status: 'max-duration' });
    expect(String(events.at(-1)?.message)).toMatch(/time limit reached \(--max-duration 8s\)/);
    expect(onlyState(dir)).toMatchObject({
      status: 'max-duration',
      exitCode: 1,
      iteration: 1,
      iterationDone: true,
      options: { maxDurationMs: 8000 },
    });
    expect(passes(dir)).toEqual([true, false]);
    const [agentPid] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    await until('the stopped agent to be gone', () => !isAlive(agentPid), 10_000);

    // Resumable: the same loop goes on at iteration 2; a new --max-duration replaces the stored one.
    const again = await ralph(dir, [
      '--agent-cmd',
      agent('worker'),
      ...FAST,
      '--resume-last',
      '--max-duration',
      '30m',
      '--json',
      '5',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(
      jsonEvents(again.stdout)
        .filter((e) => e.type === 'iteration-start')
        .map((e) => e.iteration),
    ).toEqual([2]);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', iteration: 2, options: { maxDurationMs: 30 * 60_000 } });
    expect(passes(dir)).toEqual([true, true]);
  });

  it('refuses a duration it cannot read, saying how to write one', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--max-duration', 'soon', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--max-duration: invalid duration "soon"/);
  });
});
