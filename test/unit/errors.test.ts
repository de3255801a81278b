// The one error base class (src/util/errors.ts): the engine's exits are RalphkitErrors, so the CLI reports them as
// they are, with their code, hint and status, and nobody converts one kind into the other.
import { describe, expect, it } from 'vitest';
import { EXIT, ExitError, RalphkitError } from '../../src/errors.js';
import {
  LOOP_EXIT,
  LoopExit,
  LoopFailure,
  RunnerFileError,
  WorkProtected,
  usageExit,
} from '../../src/engine/errors.js';

describe('RalphkitError, the one base class', () => {
  it.each([
    ['LoopExit', new LoopExit(LOOP_EXIT.refused, 'no repo', 'git init'), LOOP_EXIT.refused, 'refused', 'git init'],
    ['usageExit', usageExit('bad flag'), 1, 'usage', 'see ./ralph/ralph.sh --help'],
    ['RunnerFileError', new RunnerFileError('/r/x', 'cannot write', 'chmod'), 1, 'failed', 'chmod'],
    ['LoopFailure', new LoopFailure('prompt gone', 'restore it'), 1, 'failed', 'restore it'],
    [
      'WorkProtected',
      new WorkProtected('history rewritten', 'see the log'),
      LOOP_EXIT.protected,
      'protected',
      'see the log',
    ],
    ['ExitError', new ExitError(3), 3, undefined, undefined],
    [
      'RalphkitError',
      new RalphkitError('refused', { exitCode: EXIT.refused, hint: 'do this' }),
      EXIT.refused,
      undefined,
      'do this',
    ],
  ])('%s carries its exit code, status and hint on the base class', (_name, err, exitCode, status, hint) => {
    expect(err).toBeInstanceOf(RalphkitError);
    expect(err).toMatchObject({ exitCode, status, hint });
  });

  it("LoopExit's code is the base class's exitCode; a status follows the code unless given", () => {
    const e = new LoopExit(LOOP_EXIT.budget, 'over budget');
    expect(e.code).toBe(e.exitCode);
    expect(e.status).toBe('budget');
    expect(new LoopExit(LOOP_EXIT.refused, 'x', undefined, 'usage').status).toBe('usage');
    expect(e.name).toBe('LoopExit');
  });
});
