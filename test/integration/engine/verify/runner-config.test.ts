// Runner configuration (SPEC §6, verify/runner-config.ts): each runner reads its configuration in a precedence order,
// and a file of higher rank than the pinned one silences it. Each attack next to the honest run on the same plan;
// with and without --sandbox.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { findExecutable } from '../../../../src/engine/agents/check.js';
import type { Prd } from '../../../../src/prd/types.js';
import type { CheckSandbox, StoryVerdict } from '../../../../src/engine/verify/types.js';
import { git, testdir } from '../../../support/repo.js';
import { claim, commitAll, plan, story, verifyRepo, type VerifyRepo } from '../../../support/verify-repo.js';

const bwrap = findExecutable('bwrap', process.env);
const MODES: Array<[string, boolean]> = [
  ['without --sandbox', false],
  ...(bwrap ? [['with --sandbox', true] as [string, boolean]] : []),
];
const hasPytest = findExecutable('pytest', process.env) !== null || findExecutable('python3', process.env) !== null;

afterEach(() => vi.unstubAllEnvs());

/** A loop started on `files` (the plan commit and its pins), then the agent's commit `work` claimed. */
async function claimOn(
  prd: Prd,
  files: Record<string, string>,
  work: Record<string, string>,
  sandboxed: boolean,
): Promise<{ r: VerifyRepo; verdict: StoryVerdict }> {
  const r = verifyRepo(prd, files);
  const head = git(r.dir, 'rev-parse', 'HEAD');
  const pins = await readPins(r.dir, head, prd);
  commitAll(r.dir, work);
  claim(r, 'US-1');
  const sandbox: CheckSandbox | undefined = sandboxed
    ? { bwrap: bwrap!, readOnly: [r.dir, path.join(r.dir, '.git')], hidden: [], network: true }
    : undefined;
  const res = await verifyIteration(r.input({ pins, ...(sandbox ? { sandbox } : {}) }));
  return { r, verdict: res.verdicts[0] };
}

const MAKE_PLAN = plan([story('US-1', { checks: ['make -s test'] })]);
const MAKE_FILES = { Makefile: 'test:\n\tgrep -q one src/app.txt\n', 'src/app.txt': 'zero\n' };

const PYTEST_PLAN = plan([story('US-1', { checks: ['python3 -m pytest -q -p no:cacheprovider'] })]);
const PYTEST_FILES = {
  'pyproject.toml': '[project]\nname = "demo"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
  'tests/test_feature.py': 'import pathlib\n\ndef test_feature():\n    assert pathlib.Path("feature.txt").exists()\n',
};

describe.each(MODES)('runner config (%s)', (_mode, sandboxed) => {
  it('runner config: a GNUmakefile beside the pinned Makefile (make reads it first) is removed from the checkout', async () => {
    const { verdict } = await claimOn(MAKE_PLAN, MAKE_FILES, { GNUmakefile: 'test:\n\t@true\n' }, sandboxed);
    expect(verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('check `make -s test` exited 2'),
    });
    expect(verdict.reason).toContain('GNUmakefile');
  }, 60_000);

  it('runner config: honest make work passes', async () => {
    const { verdict } = await claimOn(MAKE_PLAN, MAKE_FILES, { 'src/app.txt': 'one\n' }, sandboxed);
    expect(verdict.status).toBe('verified');
  }, 60_000);

  it.skipIf(!hasPytest)(
    'runner config: a pytest.toml beside pyproject.toml (pytest 9 reads it first) is removed from the checkout',
    async () => {
      const forged = {
        'pytest.toml': '[pytest]\ntestpaths = ["checks"]\n',
        'checks/test_ok.py': 'def test_ok():\n    pass\n',
      };
      const { verdict } = await claimOn(PYTEST_PLAN, PYTEST_FILES, forged, sandboxed);
      expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('exited 1') });
    },
    60_000,
  );

  it.skipIf(!hasPytest)(
    'runner config: honest pytest work passes',
    async () => {
      const { verdict } = await claimOn(
        PYTEST_PLAN,
        PYTEST_FILES,
        { 'feature.txt': 'done\n', 'tests/test_more.py': 'def test_more():\n    pass\n' },
        sandboxed,
      );
      expect(verdict.status).toBe('verified');
    },
    60_000,
  );
});

describe('runner config above the checkout', () => {
  it.skipIf(!hasPytest)(
    'runner config: a pytest.ini above the verification checkout (pytest searches upwards) refuses the claim',
    async () => {
      const tmp = testdir('ralphkit-tmp-');
      vi.stubEnv('TMPDIR', tmp);
      // Only collects, so exits 0: read by pytest run in a checkout that has no configuration of its own.
      writeFileSync(path.join(tmp, 'pytest.ini'), '[pytest]\naddopts = --collect-only\n');
      const files = { 'tests/test_feature.py': PYTEST_FILES['tests/test_feature.py'] };
      const { verdict } = await claimOn(PYTEST_PLAN, files, { 'src.txt': 'no feature\n' }, false);
      expect(verdict).toMatchObject({
        status: 'rejected',
        reason: expect.stringContaining(`${path.join(tmp, 'pytest.ini')} lies above the verification checkout`),
      });
    },
    60_000,
  );
});
