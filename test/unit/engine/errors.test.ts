// The engine's one error type: the status recorded in state.json travels with the exit, never guessed from a code.
import { describe, expect, it } from 'vitest';
import {
  LoopExit,
  LoopFailure,
  WorkProtected,
  RunnerFileError,
  usageExit,
  describeError,
  gitDiskFullError,
  renderWriteError,
} from '../../../src/engine/errors.js';

describe('LoopExit.status', () => {
  it.each([
    [0, 'complete'],
    [2, 'refused'],
    [3, 'stuck'],
    [4, 'no-progress'],
    [5, 'budget'],
    [130, 'interrupted'],
    // exit 1 has no single meaning: unnamed, it is a failure
    [1, 'failed'],
    [42, 'failed'],
  ])('code %i without a status → %s', (code, status) => {
    expect(new LoopExit(code, 'm').status).toBe(status);
  });

  it('a status given wins over the code', () => {
    expect(new LoopExit(1, 'max iterations reached', 'raise it', 'max-iterations').status).toBe('max-iterations');
  });

  it('usage, runner-file and loop failures are exit 1 with their own status', () => {
    expect(usageExit('--x needs a value')).toMatchObject({
      code: 1,
      status: 'usage',
      hint: 'see ./ralph/ralph.sh --help',
    });
    expect(new RunnerFileError('/r/ralph/prd.json', 'could not write', 'chmod')).toMatchObject({
      code: 1,
      status: 'failed',
      file: '/r/ralph/prd.json',
    });
    expect(new LoopFailure('left the branch', 'git checkout')).toMatchObject({ code: 1, status: 'failed' });
    expect(new LoopFailure('x', 'y')).toBeInstanceOf(LoopExit);
  });

  it('a stop to protect work is exit 6, status protected (SPEC §4), not the exit 1 of a limit', () => {
    expect(new WorkProtected('history rewritten', 'git reset --hard abc')).toMatchObject({
      code: 6,
      status: 'protected',
      hint: 'git reset --hard abc',
    });
    expect(new LoopExit(6, 'x').status).toBe('protected');
  });
});

describe('renderWriteError', () => {
  it('names the file relative to the repository and drops the temp file from the OS message', () => {
    const err = Object.assign(new Error("EACCES: permission denied, open '/repo/ralph/.prd.json.123.tmp'"), {
      code: 'EACCES',
    });
    expect(describeError(err)).toBe('EACCES: permission denied');
    const e = renderWriteError('/repo/ralph/prd.json', '/repo', err, 'the plan still says passes: true');
    expect(e.message).toBe(
      'could not write ralph/prd.json (EACCES: permission denied): the plan still says passes: true',
    );
    expect(e.hint).toContain('chmod u+w ralph ralph/prd.json');
  });

  it('a file outside the repository is named by its absolute path', () => {
    const err = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(renderWriteError('/elsewhere/log.txt', '/repo', err).message).toBe(
      'the disk is full: could not write /elsewhere/log.txt (ENOSPC: no space left on device)',
    );
  });

  it.each(['ENOSPC', 'EDQUOT'])('%s: says the disk is full and asks for space, not for chmod', (code) => {
    const e = renderWriteError(
      '/repo/ralph/.runs/x/state.json',
      '/repo',
      Object.assign(new Error(`${code}: no room, write`), { code }),
    );
    expect(e).toMatchObject({
      code: 1,
      status: 'failed',
      diskFull: true,
      hint: 'free some space on the disk that holds /repo, then continue with: ./ralph/ralph.sh --resume-last',
    });
    expect(e.message).toBe(`the disk is full: could not write ralph/.runs/x/state.json (${code}: no room)`);
  });
});

describe('gitDiskFullError', () => {
  it.each([
    [
      "fatal: sha1 file '/r/.git/index.lock' write error. Out of diskspace",
      "sha1 file '/r/.git/index.lock' write error. Out of diskspace",
    ],
    [
      'error: unable to write loose object file: No space left on device\nfatal: unable to write new index file',
      'unable to write loose object file: No space left on device',
    ],
    ['fatal: write error: Disk quota exceeded', 'write error: Disk quota exceeded'],
  ])('git saying %j is a full disk', (stderr, said) => {
    expect(gitDiskFullError('/r', 'git add', stderr)).toMatchObject({
      diskFull: true,
      code: 1,
      message: `the disk is full: git add could not write (${said})`,
    });
  });

  it.each([
    "fatal: pathspec 'x' did not match any files",
    // git quotes paths the agent chose: the words inside one are not git's verdict.
    "error: unable to create file 'No space left on device/a': Permission denied",
    "fatal: pathspec 'Out of diskspace' did not match any files",
    'hint: No space left on device',
  ])('any other git failure is not: %j', (stderr) => {
    expect(gitDiskFullError('/r', 'git add', stderr)).toBeNull();
  });
});
