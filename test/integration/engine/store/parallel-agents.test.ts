// A --parallel run records one agent per worker (state.parallel.states[].agentPid). After a kill -9 of its runner,
// a resume, `cancel` and `cleanup` (stopOrphanAgents) stop every one of them, with the same check as the loop's
// own agent: a pid now held by a process that started later is never signalled.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { goneWithin, procStart } from '../../../support/process.js';
import { HAS_PROC, engine, planRepo, spawnStranger, writeRunningLoop } from '../../../support/lifecycle.js';
import { writeState } from '../../../../src/engine/store/state-file.js';
import { findResumable } from '../../../../src/engine/run/resume.js';
import { stopOrphanAgents } from '../../../../src/engine/store/orphans.js';
import type { LoopState, ParallelState, WorkerState } from '../../../../src/engine/store/state-types.js';
import type { RunOptions } from '../../../../src/engine/loop-options.js';

function state(dir: string, id: string): LoopState {
  return JSON.parse(readFileSync(path.join(dir, 'ralph/.runs', id, 'state.json'), 'utf8')) as LoopState;
}

function parallel(states: WorkerState[]): ParallelState {
  return { workers: states.length, states, queue: [], merged: [], attempts: {}, givenUp: {} };
}

const worker = (n: number, extra: Partial<WorkerState> = {}): WorkerState => ({
  worker: n,
  path: `/tmp/x.ralph-worktrees/p--w${n}`,
  phase: 'agent',
  story: `US-${n}`,
  ...extra,
});

/** Two agents left by a killed runner (their true starts) and a stranger that reused a third worker's pid. */
function killedParallelRun(dir: string, id: string) {
  const a = spawnStranger();
  const b = spawnStranger();
  const stranger = spawnStranger();
  const gone = spawnSync('true').pid as number;
  writeRunningLoop(dir, {
    id,
    pid: gone,
    parallel: parallel([
      worker(1, { agentPid: a.pid, agentPidStart: procStart(a.pid) }),
      worker(2, { agentPid: b.pid, agentPidStart: procStart(b.pid) }),
      worker(3, { agentPid: stranger.pid, agentPidStart: procStart(stranger.pid) + 1 }),
      worker(4, { phase: 'idle', story: undefined }),
    ]),
  });
  return { a, b, stranger, agents: () => Promise.all([goneWithin(a.pid), goneWithin(b.pid)]) };
}

describe.runIf(HAS_PROC)('the agents of a --parallel run', () => {
  it("writeState records when each worker's agent started, as it does for the loop's agent", () => {
    const dir = planRepo();
    const a = spawnStranger();
    const now = new Date().toISOString();
    const s: LoopState = {
      id: 'p',
      agent: 'claude',
      prd: 'ralph/prd.json',
      iteration: 1,
      iterationDone: false,
      maxIterations: 5,
      status: 'running',
      pid: process.pid,
      startedAt: now,
      updatedAt: now,
      costUsd: 0,
      exitCode: null,
      noProgressStreak: 0,
      options: {} as LoopState['options'],
      parallel: parallel([worker(1, { agentPid: a.pid }), worker(2, { phase: 'idle', story: undefined })]),
    };
    writeState(dir, s);
    const [w1, w2] = state(dir, 'p').parallel!.states;
    expect(w1).toMatchObject({ worker: 1, agentPid: a.pid, agentPidStart: procStart(a.pid) });
    expect('agentPidStart' in w2).toBe(false);
    // The runner's own object is left as it was: the start is for the file.
    expect('agentPidStart' in s.parallel!.states[0]).toBe(false);
  });

  it("stopOrphanAgents (start, cleanup) kills every worker's orphaned agent, never the stranger", async () => {
    const dir = planRepo();
    const { a, b, stranger, agents } = killedParallelRun(dir, 'p');
    const stopped = await stopOrphanAgents(dir, 'other');
    expect(stopped).toEqual([
      { loopId: 'p', agentPid: a.pid, worker: 1 },
      { loopId: 'p', agentPid: b.pid, worker: 2 },
    ]);
    expect(await agents()).toEqual([true, true]);
    expect(await goneWithin(stranger.pid, 300)).toBe(false);
  });

  it("cancel kills every worker's agent and records none; the stranger lives", async () => {
    const dir = planRepo();
    const { stranger, agents } = killedParallelRun(dir, 'p');
    const r = await engine(dir, ['cancel', 'p']);
    expect(r.code, r.stderr).toBe(0);
    expect(await agents()).toEqual([true, true]);
    expect(await goneWithin(stranger.pid, 300)).toBe(false);
    const after = state(dir, 'p');
    expect(after.status).toBe('cancelled');
    expect(after.parallel!.states.map((w) => w.agentPid)).toEqual([undefined, undefined, undefined, undefined]);
    expect(after.parallel!.states.map((w) => w.story)).toEqual(['US-1', 'US-2', 'US-3', undefined]);
  });

  it("a resume kills every worker's agent, never the stranger", async () => {
    const dir = planRepo();
    const { stranger, agents } = killedParallelRun(dir, 'p');
    expect(findResumable(dir, { resume: 'p' } as RunOptions).id).toBe('p');
    expect(await agents()).toEqual([true, true]);
    expect(await goneWithin(stranger.pid, 300)).toBe(false);
  });
});
