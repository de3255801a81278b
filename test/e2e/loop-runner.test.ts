// The installed ./ralph/ralph.sh driven end to end with fake agents (test/fixtures/agents/).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { git, run, testdir } from '../support/repo.js';
import { agent, jsonEvents, loopRepo, loopStates, onlyState, ralph, startRalph } from '../support/loop-repo.js';
import { isAlive, until } from '../support/process.js';

const FAST = ['--pause', '0'];

function featCommits(dir: string): string[] {
  return git(dir, 'log', '--format=%s')
    .split('\n')
    .filter((s) => s.startsWith('feat:'));
}

describe('ralph.sh loop', () => {
  it('completes a 3-story plan in 3 iterations and exits 0', async () => {
    const dir = loopRepo({ stories: 3 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), ...FAST, '--json', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(featCommits(dir)).toHaveLength(3);
    expect(git(dir, 'branch', '--show-current')).toBe('ralph/test');
    const state = onlyState(dir);
    expect(state).toMatchObject({ status: 'complete', iteration: 3, exitCode: 0, maxIterations: 5 });
    const events = jsonEvents(r.stdout);
    expect(events.filter((e) => e.type === 'iteration-start').map((e) => e.iteration)).toEqual([1, 2, 3]);
    expect(events.at(-1)).toMatchObject({ type: 'exit', code: 0, status: 'complete' });
    expect(existsSync(path.join(dir, 'ralph/.runs', state.id, 'iteration-3.log'))).toBe(true);
    // The stored options name the agent that ran: the command, not the default "claude" beside it.
    const { options } = JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', state.id, 'state.json'), 'utf8'));
    expect(options).toMatchObject({ agentCmd: agent('worker') });
    expect(options).not.toHaveProperty('agent');
  });

  it('does not complete on a tag echoed inside a sentence', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('echo-tag'), ...FAST, '2']);
    expect(r.code, r.stderr).toBe(1);
    expect(onlyState(dir)).toMatchObject({ status: 'max-iterations', iteration: 2 });
    expect(r.stderr).toMatch(/max iterations reached/);
  });

  it('exits 3 when the agent says STUCK', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('stuck'), ...FAST, '5']);
    expect(r.code, r.stderr).toBe(3);
    expect(onlyState(dir)).toMatchObject({ status: 'stuck', iteration: 1 });
  });

  it('kills an agent that outlives --iteration-timeout, with its children, and goes on', async () => {
    const dir = loopRepo({ stories: 2 });
    const pids = path.join(testdir(), 'pids');
    // 3s: long enough for an honest iteration on a busy CI machine, short enough to keep the test quick.
    const r = await ralph(dir, ['--agent-cmd', agent('sleeper'), ...FAST, '--iteration-timeout', '3s', '--json', '6'], {
      FAKE_SLEEP_ONLY_AT: '1',
      FAKE_PIDS_FILE: pids,
    });
    expect(r.code, r.stderr).toBe(0);
    const exits = jsonEvents(r.stdout).filter((e) => e.type === 'agent-exit');
    expect(exits[0]).toMatchObject({ iteration: 1, timedOut: true });
    expect(exits.length).toBeGreaterThanOrEqual(3);
    expect(onlyState(dir)).toMatchObject({ status: 'complete' });
    const [agentPid, childPid] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    await until('the killed agent group to be gone', () => !isAlive(agentPid) && !isAlive(childPid), 10_000);
  });

  it('exits 4 after three iterations in a row without a new commit', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('silent'), ...FAST, '10']);
    expect(r.code, r.stderr).toBe(4);
    expect(onlyState(dir)).toMatchObject({ status: 'no-progress', iteration: 3 });
  });

  it('continues at the interrupted iteration after kill -9 and --resume-last', async () => {
    const dir = loopRepo({ stories: 3 });
    const marker = path.join(testdir(), 'hold');
    const env = { FAKE_HOLD_AT: '2', FAKE_HOLD_MARKER: marker };
    const first = startRalph(dir, ['--agent-cmd', agent('worker'), ...FAST, '5'], env);
    await until('iteration 2 to start', () => existsSync(marker) && readFileSync(marker, 'utf8').trim() !== '', 20_000);
    const heldAgent = Number(readFileSync(marker, 'utf8').trim());
    first.child.kill('SIGKILL');
    await first.done;
    expect(onlyState(dir)).toMatchObject({ status: 'running', iteration: 2, iterationDone: false });

    const r = await ralph(dir, ['--resume-last', ...FAST, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const starts = jsonEvents(r.stdout)
      .filter((e) => e.type === 'iteration-start')
      .map((e) => e.iteration);
    expect(starts).toEqual([2, 3]);
    expect(featCommits(dir)).toHaveLength(3);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', iteration: 3 });
    await until('the orphaned agent to be killed', () => !isAlive(heldAgent), 10_000);
  });

  it('refuses a second loop on the same plan while the first lives (exit 2), and cancel stops the first', async () => {
    const dir = loopRepo();
    const first = startRalph(dir, [
      '--agent-cmd',
      agent('sleeper'),
      ...FAST,
      '--name',
      'first',
      '--iteration-timeout',
      '40s',
      '3',
    ]);
    await until('the first loop to start its agent', () => loopStates(dir).some((s) => s.agentPid), 20_000);
    const markerFile = path.join(testdir(), 'second-ran');
    const second = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '3'], { FAKE_MARKER: markerFile });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/another loop \(first, pid \d+\) is running/);
    expect(existsSync(markerFile)).toBe(false);

    const c = await run(process.execPath, [path.join(dir, 'ralph/ralph.mjs'), 'cancel', 'first'], { cwd: dir });
    expect(c.code, c.stderr).toBe(0);
    const end = await first.done;
    expect(end.code).toBe(130);
    expect(loopStates(dir).find((s) => s.id === 'first')).toMatchObject({ status: 'cancelled', exitCode: 130 });
  });

  it('stops the agent group on SIGINT, saves the state as interrupted and exits 130', async () => {
    const dir = loopRepo();
    const pids = path.join(testdir(), 'pids');
    const loop = startRalph(dir, ['--agent-cmd', agent('sleeper'), ...FAST, '3'], { FAKE_PIDS_FILE: pids });
    await until(
      'the agent to start',
      () => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 2,
      20_000,
    );
    loop.child.kill('SIGINT');
    const r = await loop.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/--resume-last/);
    expect(onlyState(dir)).toMatchObject({ status: 'interrupted', exitCode: 130, iteration: 1, iterationDone: false });
    for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) {
      await until(`agent process ${pid} to be gone`, () => !isAlive(pid), 10_000);
    }
  });

  it.each([
    ['a shell command', 'x; touch pwned'],
    ['a git option', '--upload-pack=touch pwned'],
    ['a command substitution', 'ralph/$(touch pwned)'],
  ])('refuses a branchName that is %s and runs nothing', async (_what, branchName) => {
    const dir = loopRepo({ branchName });
    const markerFile = path.join(testdir(), 'agent-ran');
    const before = git(dir, 'branch', '--list');
    const r = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '3'], { FAKE_MARKER: markerFile });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/branchName/);
    expect(existsSync(markerFile)).toBe(false);
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(existsSync(path.join(dir, 'ralph', 'pwned'))).toBe(false);
    expect(git(dir, 'branch', '--list')).toBe(before);
    expect(existsSync(path.join(dir, 'ralph/.runs')) ? readdirSync(path.join(dir, 'ralph/.runs')) : []).toEqual([]);
  });
});
