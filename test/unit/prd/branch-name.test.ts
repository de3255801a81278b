import { describe, expect, it } from 'vitest';
import { branchNameProblem } from '../../../src/prd/branch-name.js';
import { BRANCH_NAMES } from '../../support/branch-names.js';

describe('branchNameProblem', () => {
  it.each(BRANCH_NAMES.filter((c) => c.valid))('accepts %j', ({ name }) => {
    expect(branchNameProblem(name)).toBeUndefined();
  });

  it.each(BRANCH_NAMES.filter((c) => !c.valid))('refuses %j', ({ name, reason }) => {
    expect(branchNameProblem(name)).toContain(reason);
  });
});
