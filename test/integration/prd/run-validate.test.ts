import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runValidate } from '../../../src/prd/run-validate.js';
import { FIXTURES, testdir, writeFiles } from '../../support/repo.js';

const fixture = (name: string) => readFileSync(path.join(FIXTURES, 'prd', name), 'utf8');

describe('runValidate', () => {
  it('reads ralph/prd.json under cwd by default and counts the stories', () => {
    const dir = testdir();
    writeFiles(dir, { 'ralph/prd.json': fixture('original-ralph.json') });
    const result = runValidate({ cwd: dir });
    expect(result).toMatchObject({
      valid: true,
      unreadable: false,
      problems: [],
      stories: 3,
      passing: 1,
      hasChecks: false,
    });
    expect(result.file).toBe(path.join(dir, 'ralph/prd.json'));
  });

  it('resolves a named file against cwd, and a folder to its prd.json', () => {
    const dir = testdir();
    writeFiles(dir, { 'plans/next.json': fixture('full.json'), 'other/prd.json': fixture('full.json') });
    expect(runValidate({ cwd: dir, file: 'plans/next.json' })).toMatchObject({
      valid: true,
      stories: 3,
      hasChecks: true,
    });
    expect(runValidate({ cwd: dir, file: 'other' }).file).toBe(path.join(dir, 'other/prd.json'));
  });

  it('returns every problem with the file name in each', () => {
    const dir = testdir();
    writeFiles(dir, { 'ralph/prd.json': fixture('many-problems.json') });
    const result = runValidate({ cwd: dir });
    expect(result.valid).toBe(false);
    expect(result.problems).toHaveLength(7);
    expect(result.problems.every((p) => p.file === result.file && p.line! > 0 && p.col! > 0)).toBe(true);
  });

  it('marks a missing file unreadable instead of throwing', () => {
    const dir = testdir();
    const result = runValidate({ cwd: dir });
    expect(result).toMatchObject({ valid: false, unreadable: true });
    expect(result.problems).toEqual([
      { file: result.file, message: 'cannot read the plan: no such file', code: 'unreadable' },
    ]);
  });
});
