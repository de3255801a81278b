// The loop's lifecycle around its runtime files, through runEngine in temp git repositories: a stale cancel
// marker that cannot be removed, `cancel` refusals, and pids reused after a runner was killed with -9.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../../support/repo.js';
import { jsonEvents, renderPlan } from '../../../support/loop-repo.js';
import { isAlive as stillRuns, procStart } from '../../../support/process.js';
import { HAS_PROC, WORKER, engine, planRepo, spawnStranger, writeRunningLoop } from '../../../support/lifecycle.js';
import { isAlive, processStart } from '../../../../src/engine/processes.js';
import { lockPath } from '../../../../src/engine/store/layout.js';
import { moveAnchoredRefs } from '../../../../src/engine/verify/anchors.js';
import { readKey } from '../../../../src/engine/store/verdict-record.js';

const NO_STACK = /unexpected error|\n\s+at /;

function state(dir: string, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', id, 'state.json'), 'utf8')) as Record<string, unknown>;
}

describe('the start when an old cancel marker cannot be removed', () => {
  it('ralph/.runs/<id> is a file: refused with exit 2 naming the marker and the folder, nothing changed', async () => {
    const dir = planRepo();
    mkdirSync(path.join(dir, 'ralph/.runs'));
    writeFileSync(path.join(dir, 'ralph/.runs/f'), 'not a folder');
    const r = await engine(dir, ['run', ...WORKER, '--name', 'f', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /^ralph: could not remove ralph\/\.runs\/f\/cancel \(ENOTDIR: not a directory\): the loop cannot clear an old cancel request, so it did not start; nothing was changed \(exit 2\)$/m,
    );
    expect(r.stderr).toContain('ralph: hint: ralph/.runs/f/ must be a folder this user can write');
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(jsonEvents(r.stdout).at(-1)).toMatchObject({ type: 'exit', code: 2, status: 'refused' });
    expect(git(dir, 'branch', '--show-current')).toBe('main');
    expect(readFileSync(path.join(dir, 'ralph/.runs/f'), 'utf8')).toBe('not a folder');
  });

  it('a marker that is a folder is cleared like a file, so it cannot turn the next stop into "cancelled"', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    mkdirSync(path.join(dir, 'ralph/.runs/m/cancel/inside'), { recursive: true });
    const r = await engine(dir, ['run', ...WORKER, '--name', 'm']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'ralph/.runs/m/cancel'))).toBe(false);
    expect(state(dir, 'm')).toMatchObject({ status: 'complete' });
  });
});

describe('status reads any state.json it finds', () => {
  it('one with only id and status (hand-written, or from another tool) is listed, not a crash', async () => {
    const dir = planRepo();
    mkdirSync(path.join(dir, 'ralph/.runs/bare'), { recursive: true });
    writeFileSync(path.join(dir, 'ralph/.runs/bare/state.json'), '{"id":"bare","status":"running"}');
    const json = await engine(dir, ['status', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).loops).toEqual([
      expect.objectContaining({
        id: 'bare',
        status: 'dead',
        alive: false,
        pid: null,
        iteration: null,
        agent: '',
        prd: '',
        storiesTotal: null,
      }),
    ]);
    const table = await engine(dir, ['status']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^bare\s+dead\s+\?\/\?\s+no\s+\$0\.00\s+\?\s+0\s+0\s+0\s+0$/m);
  });
});

describe('cancel refusals: a clear message, a hint, exit 2, nothing changed', () => {
  it.each([
    [
      'an unknown id',
      'nope',
      /^ralph: no loop named "nope" in ralph\/\.runs\/$/m,
      /hint: list the loops and their status with: npx ralphkit status/,
    ],
    ['an id that would leave ralph/.runs', '../x', /^ralph: "\.\.\/x" is not a loop id/m, /hint: list the loops/],
  ])('%s', async (_what, id, message, hint) => {
    const dir = planRepo();
    await engine(dir, ['run', ...WORKER, '--name', 'done']);
    const r = await engine(dir, ['cancel', id]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(hint);
  });

  it('no loop has run yet (no ralph/.runs): says so and how to start one', async () => {
    const r = await engine(planRepo(), ['cancel', 'first']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'ralph: no loop named "first" in ralph/.runs/\nralph: hint: no loop has run in this repository yet; start one with: ./ralph/ralph.sh\n',
    );
  });

  it('a loop that has ended is refused, naming its status', async () => {
    const dir = planRepo();
    expect((await engine(dir, ['run', ...WORKER, '--name', 'done'])).code).toBe(0);
    const r = await engine(dir, ['cancel', 'done']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'ralph: loop done is not running (complete); nothing to cancel\nralph: hint: list the loops and their status with: npx ralphkit status\n',
    );
    expect(existsSync(path.join(dir, 'ralph/.runs/done/cancel'))).toBe(false);
    expect(state(dir, 'done')).toMatchObject({ status: 'complete' });
  });

  it('a state.json that cannot be read is named, not reported as an unknown loop', async () => {
    const dir = planRepo();
    mkdirSync(path.join(dir, 'ralph/.runs/bad'), { recursive: true });
    writeFileSync(path.join(dir, 'ralph/.runs/bad/state.json'), '{"status": "runn');
    const r = await engine(dir, ['cancel', 'bad']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^ralph: could not read ralph\/\.runs\/bad\/state\.json \(.*JSON.*\), so loop bad cannot be cancelled; nothing was changed$/m,
    );
    expect(r.stderr).not.toMatch(NO_STACK);
  });

  it.runIf(HAS_PROC)(
    'the cancel marker cannot be written: refused before the runner is signalled (it keeps running)',
    async () => {
      const dir = planRepo();
      const runner = spawnStranger();
      writeRunningLoop(dir, { id: 'live', pid: runner.pid, pidStart: procStart(runner.pid) });
      mkdirSync(path.join(dir, 'ralph/.runs/live/cancel')); // writing a file where a folder is fails on every OS, even as root
      const r = await engine(dir, ['cancel', 'live']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^ralph: could not write ralph\/\.runs\/live\/cancel \(EISDIR: illegal operation on a directory\): loop live was not cancelled; nothing was changed$/m,
      );
      expect(r.stderr).toContain(
        `ralph: hint: make ralph/.runs/live/ a folder this user can write (chmod u+w ralph/.runs/live), then run again: npx ralphkit cancel live; or stop its runner directly: kill ${runner.pid}`,
      );
      expect(stillRuns(runner.pid)).toBe(true);
      expect(state(dir, 'live')).toMatchObject({ status: 'running' });
    },
  );
});

describe.runIf(HAS_PROC)('a pid reused after the runner was killed with -9', () => {
  it('reads the start time of a process, and a different recorded start makes a live pid count as gone', () => {
    const other = spawnStranger();
    const start = procStart(other.pid);
    expect(processStart(other.pid)).toBe(start);
    expect(isAlive(other.pid, start)).toBe(true);
    expect(isAlive(other.pid, start - 1)).toBe(false);
    expect(isAlive(other.pid)).toBe(true); // no recorded start (an older state file): the pid alone decides, as before
  });

  it('status says dead, a new loop takes the lock over, and cancel never signals the stranger', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const stranger = spawnStranger();
    const wrong = procStart(stranger.pid) + 1;
    const lock = lockPath(dir, path.join(dir, 'ralph/prd.json'));
    writeRunningLoop(
      dir,
      { id: 'killed', pid: stranger.pid, pidStart: wrong, agentPid: stranger.pid, agentPidStart: wrong },
      lock,
    );

    const status = await engine(dir, ['status', '--json']);
    expect(JSON.parse(status.stdout).loops).toEqual([
      expect.objectContaining({ id: 'killed', status: 'dead', alive: false }),
    ]);

    const next = await engine(dir, ['run', ...WORKER, '--name', 'next']);
    expect(next.code, next.stderr).toBe(0);
    expect(state(dir, 'next')).toMatchObject({
      status: 'complete',
      pid: process.pid,
      pidStart: procStart(process.pid),
    });

    const cancel = await engine(dir, ['cancel', 'killed']);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stderr).toBe('ralph: loop killed was not running any more (its runner is gone); marked cancelled\n');
    expect(state(dir, 'killed')).toMatchObject({ status: 'cancelled' });
    expect(stillRuns(stranger.pid)).toBe(true);
  });

  it('the same pid with its true start time still holds the plan: the new loop is refused and status says alive', async () => {
    const dir = planRepo();
    const runner = spawnStranger();
    const lock = lockPath(dir, path.join(dir, 'ralph/prd.json'));
    writeRunningLoop(dir, { id: 'holder', pid: runner.pid, pidStart: procStart(runner.pid) }, lock);
    expect(JSON.parse((await engine(dir, ['status', '--json'])).stdout).loops).toEqual([
      expect.objectContaining({ id: 'holder', status: 'running', alive: true }),
    ]);
    const r = await engine(dir, ['run', ...WORKER, '--name', 'second']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`another loop (holder, pid ${runner.pid}) is running on ralph/prd.json`);
    expect(existsSync(path.join(dir, 'ralph/.runs/second'))).toBe(false);
  });

  it('a state without a recorded start (an older runner) keeps the pid-only check', async () => {
    const dir = planRepo();
    const runner = spawnStranger();
    writeRunningLoop(dir, { id: 'old', pid: runner.pid }, lockPath(dir, path.join(dir, 'ralph/prd.json')));
    expect(JSON.parse((await engine(dir, ['status', '--json'])).stdout).loops).toEqual([
      expect.objectContaining({ id: 'old', alive: true }),
    ]);
    expect((await engine(dir, ['run', ...WORKER, '--name', 'second'])).code).toBe(2);
  });

  it('--resume kills the agent a killed runner left behind, but never a stranger that reused its pid', async () => {
    for (const reused of [true, false]) {
      const dir = planRepo(renderPlan({ stories: 1 }));
      const agent = spawnStranger();
      const exited = new Promise((resolve) => agent.on('exit', (_code, signal) => resolve(signal)));
      const start = procStart(agent.pid) + (reused ? 1 : 0);
      writeRunningLoop(dir, {
        id: 'killed',
        pid: agent.pid,
        pidStart: procStart(agent.pid) + 1,
        agentPid: agent.pid,
        agentPidStart: start,
      });
      // The runner records its pinned tests in git when a loop starts, sealed; a resume without that record is refused.
      await moveAnchoredRefs(
        dir,
        'killed',
        { pins: git(dir, 'rev-parse', 'HEAD'), plan: null },
        { pins: null, plan: null },
        readKey(true),
      );
      const r = await engine(dir, ['run', ...WORKER, '--resume', 'killed']);
      expect(r.code, r.stderr).toBe(0);
      if (reused) expect(stillRuns(agent.pid)).toBe(true);
      else expect(await exited).toBe('SIGKILL');
    }
  });

  it('a live runner with a matching start is signalled by cancel', async () => {
    const dir = planRepo();
    const runner = spawnStranger();
    writeRunningLoop(dir, { id: 'live', pid: runner.pid, pidStart: procStart(runner.pid) });
    const exited = new Promise((resolve) => runner.on('exit', (_code, signal) => resolve(signal)));
    const r = await engine(dir, ['cancel', 'live']);
    expect(r.code, r.stderr).toBe(0);
    expect(await exited).toBe('SIGTERM');
    expect(existsSync(path.join(dir, 'ralph/.runs/live/cancel'))).toBe(true);
  });
});
