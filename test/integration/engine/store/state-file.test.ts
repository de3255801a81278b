// The runner's own loop files when a write fails: state.json (refusal on the first save, RunnerFileError later)
// and the agent's pid saved from inside a process event. Errors that are not the file system's keep their type.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testdir } from '../../../support/repo.js';
import { writeState } from '../../../../src/engine/store/state-file.js';
import { runAgentOnce } from '../../../../src/engine/agents/run.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import { LoopExit, RunnerFileError } from '../../../../src/engine/errors.js';

function newState(id: string): LoopState {
  const now = new Date().toISOString();
  return {
    id,
    agent: 'claude',
    prd: 'ralph/prd.json',
    iteration: 0,
    iterationDone: true,
    maxIterations: 3,
    status: 'running',
    pid: process.pid,
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: {} as LoopState['options'],
  };
}

describe('writeState when state.json cannot be written', () => {
  it('the first save refuses the start (exit 2); a later one ends the loop (RunnerFileError, exit 1)', () => {
    const root = testdir();
    mkdirSync(path.join(root, 'ralph'));
    writeFileSync(path.join(root, 'ralph/.runs'), 'not a folder');
    const first = newState('a');
    const refusal = catchError(() => writeState(root, first));
    expect(refusal).toBeInstanceOf(LoopExit);
    expect(refusal).not.toBeInstanceOf(RunnerFileError);
    expect(refusal).toMatchObject({
      code: 2,
      message: expect.stringMatching(/^could not write ralph\/\.runs\/a\/state\.json \((ENOTDIR|EEXIST)/),
    });

    rmSync(path.join(root, 'ralph/.runs'));
    const state = newState('b');
    writeState(root, state);
    expect(JSON.parse(readFileSync(path.join(root, 'ralph/.runs/b/state.json'), 'utf8'))).toMatchObject({
      id: 'b',
      status: 'running',
    });
    rmSync(path.join(root, 'ralph/.runs'), { recursive: true });
    writeFileSync(path.join(root, 'ralph/.runs'), 'not a folder');
    const midRun = catchError(() => writeState(root, Object.assign(state, { iteration: 1 })));
    expect(midRun).toBeInstanceOf(RunnerFileError);
    expect(midRun).toMatchObject({ code: 1, status: 'failed', file: path.join(root, 'ralph/.runs/b/state.json') });
  });

  it('an error that is not the file system’s is no refusal and keeps its type', () => {
    const state = { ...newState('c'), costUsd: 1n as unknown as number }; // JSON.stringify throws on a BigInt
    const err = catchError(() => writeState(testdir(), state));
    expect(err).toBeInstanceOf(TypeError);
  });
});

describe('runAgentOnce when the agent’s pid cannot be saved', () => {
  const request = (logFile: string, onStart: (pid: number) => void) => ({
    plan: { file: 'sh', args: ['-c', 'sleep 30'], input: '', output: 'text' as const },
    cwd: path.dirname(logFile),
    env: process.env,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    logFile,
    onTool: () => {},
    onStart,
  });

  it('stops the agent and rejects with the RunnerFileError instead of crashing the runner', async () => {
    const logFile = path.join(testdir(), 'iteration-1.log');
    const failure = new RunnerFileError('/x/state.json', 'could not write state.json', 'fix it');
    await expect(
      runAgentOnce(
        request(logFile, () => {
          throw failure;
        }),
      ),
    ).rejects.toBe(failure);
  });

  it('a bug in onStart is rethrown as it is', async () => {
    const logFile = path.join(testdir(), 'iteration-1.log');
    const bug = new TypeError('boom');
    await expect(
      runAgentOnce(
        request(logFile, () => {
          throw bug;
        }),
      ),
    ).rejects.toBe(bug);
  });
});

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}
