// Runner configuration (SPEC §6, verify/runner-config.ts): each runner reads its configuration in a precedence order,
// and a file of higher rank than the pinned one silences it. Each attack next to the honest run on the same plan;
// with and without --sandbox.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { buildApart } from '../../../../src/engine/verify/setup-cache.js';
import { refuseUpwardConfig } from '../../../../src/engine/verify/checkout.js';
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
  work: Record<string, string | Buffer>,
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

  it('runner config: what the pinned Makefile includes is pinned, an optional include it lacks pinned absent (an added local.mk that sets GREP = true is removed); honest work passes', async () => {
    const files = {
      Makefile: '-include local.mk\ninclude rules.mk\nGREP ?= grep\ntest:\n\t$(GREP) -q one src/app.txt\n',
      'rules.mk': 'FLAGS = -q\n',
      'src/app.txt': 'zero\n',
    };
    const attack = await claimOn(
      MAKE_PLAN,
      files,
      { 'local.mk': 'GREP = true\n', 'rules.mk': 'GREP = true\n' },
      sandboxed,
    );
    expect(attack.verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('make -s test` exited 2'),
    });
    expect(attack.verdict.reason).toContain('local.mk');
    expect(attack.verdict.reason).toContain('rules.mk');
    const honest = await claimOn(MAKE_PLAN, files, { 'src/app.txt': 'one\n' }, sandboxed);
    expect(honest.verdict.status).toBe('verified');
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

const UNITTEST_PLAN = plan([story('US-1', { checks: ['python3 -m unittest tests.test_add'] })]);
const UNITTEST_FILES = {
  'tests/__init__.py': '',
  'tests/test_add.py':
    'import pathlib\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertTrue(pathlib.Path("feature.txt").exists())\n',
};

/** `source` compiled into tests/__pycache__ as python would read it for tests/<name>.py, trusted without the source. */
function uncheckedPyc(name: string, source: string): Record<string, Buffer> {
  const out = execFileSync(
    'python3',
    [
      '-c',
      'import py_compile, sys, tempfile, base64, os\n' +
        'd = tempfile.mkdtemp(); src = os.path.join(d, "m.py"); open(src, "w").write(sys.argv[2])\n' +
        'c = os.path.join(d, "m.pyc")\n' +
        'py_compile.compile(src, cfile=c, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n' +
        'print(sys.implementation.cache_tag); print(base64.b64encode(open(c, "rb").read()).decode())',
      name,
      source,
    ],
    { encoding: 'utf8' },
  ).split('\n');
  return { [`tests/__pycache__/${name}.${out[0]}.pyc`]: Buffer.from(out[1], 'base64') };
}

describe.each(MODES)('the runner a check starts is the one that runs (%s)', (_mode, sandboxed) => {
  it.skipIf(!hasPytest)(
    'attack: `python -m pytest` with a committed pytest package, or a committed plugin in package metadata: both removed, the pinned test runs',
    async () => {
      const { verdict } = await claimOn(
        PYTEST_PLAN,
        PYTEST_FILES,
        {
          'pytest/__init__.py': '',
          'pytest/__main__.py': 'print("1 passed")\nraise SystemExit(0)\n',
          'helpers_meta-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: helpers-meta\nVersion: 1.0\n',
          'helpers_meta-1.0.dist-info/entry_points.txt': '[pytest11]\nhelpers = helpers_plugin\n',
          'helpers_plugin.py':
            'def pytest_collection_modifyitems(session, config, items):\n    items[:] = []\n\ndef pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n',
        },
        sandboxed,
      );
      expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('exited 1') });
      expect(verdict.reason).toContain('pytest/__init__.py');
      expect(verdict.reason).toContain('helpers_meta-1.0.dist-info/entry_points.txt');
    },
    60_000,
  );

  it.skipIf(!hasPytest)(
    'attack: bytecode committed in __pycache__ that python would run instead of the pinned test is removed',
    async () => {
      const pass = 'import unittest\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n';
      const { verdict } = await claimOn(UNITTEST_PLAN, UNITTEST_FILES, uncheckedPyc('test_add', pass), sandboxed);
      expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('exited 1') });
      expect(verdict.reason).toContain('tests/__pycache__/test_add.');
    },
    60_000,
  );

  it("attack: a committed file named like a make target (named, or the default one's prerequisite) is removed, so make runs the recipe", async () => {
    const { verdict } = await claimOn(MAKE_PLAN, MAKE_FILES, { test: '' }, sandboxed);
    expect(verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('check `make -s test` exited'),
    });
    // No target named: make runs the first rule's, whose prerequisite a committed file named `unit` would skip.
    const chained = {
      Makefile: 'check: unit\n\t@echo ok\nunit:\n\tgrep -q one src/app.txt\n',
      'src/app.txt': 'zero\n',
    };
    const plain = plan([story('US-1', { checks: ['make -s'] })]);
    const again = await claimOn(plain, chained, { unit: '' }, sandboxed);
    expect(again.verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('check `make -s` exited'),
    });
    // Through `npm test`, whose pinned script runs make.
    const pkg = JSON.stringify({ name: 'demo', private: true, scripts: { test: 'make -s test' } });
    const viaNpm = await claimOn(
      plan([story('US-1', { checks: ['npm test --silent'] })]),
      { ...MAKE_FILES, 'package.json': pkg },
      { test: '' },
      sandboxed,
    );
    expect(viaNpm.verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('check `npm test --silent` exited'),
    });
  }, 60_000);
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

  it.skipIf(!hasPytest)(
    "runner config: a setup.py above the checkout (pytest's rootdir when it finds no configuration) and the conftest.py beside it, which turns failures into passes, refuse the claim",
    async () => {
      const tmp = testdir('ralphkit-tmp-');
      vi.stubEnv('TMPDIR', tmp);
      writeFileSync(path.join(tmp, 'setup.py'), '');
      writeFileSync(
        path.join(tmp, 'conftest.py'),
        'import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    r = out.get_result()\n    if r.failed:\n        r.outcome = "passed"\n        r.longrepr = None\n',
      );
      const files = { 'tests/test_feature.py': PYTEST_FILES['tests/test_feature.py'] };
      const { verdict } = await claimOn(PYTEST_PLAN, files, { 'src.txt': 'no feature\n' }, false);
      expect(verdict).toMatchObject({
        status: 'rejected',
        reason: expect.stringMatching(/ lies above the verification checkout, where the tools a check starts look/),
      });
      expect(verdict.reason).toContain(`${tmp}${path.sep}`);
    },
    60_000,
  );

  it("runner config: a package.json above the checkout whose workspaces take it in (npm then reads that folder's .npmrc: a script-shell that exits 0) refuses the claim", async () => {
    const tmp = testdir('ralphkit-tmp-');
    vi.stubEnv('TMPDIR', tmp);
    const shell = path.join(tmp, 'ok-shell');
    writeFileSync(shell, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(
      path.join(tmp, 'package.json'),
      JSON.stringify({ name: 'root', private: true, workspaces: ['ralph-verify-*'] }),
    );
    writeFileSync(path.join(tmp, '.npmrc'), `script-shell=${shell}\n`);
    const pkg = { name: 'demo', version: '1.0.0', private: true, scripts: { test: 'grep -q one src/app.txt' } };
    const files = { 'package.json': JSON.stringify(pkg), 'src/app.txt': 'zero\n' };
    const prd = plan([story('US-1', { checks: ['npm test --silent'] })]);
    const { verdict } = await claimOn(prd, files, { 'notes.txt': 'no work\n' }, false);
    expect(verdict).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining(`${path.join(tmp, 'package.json')} lies above the verification checkout`),
    });
  }, 60_000);

  it('runner config: the temp folder inside a folder with a package.json of no workspace and a node_modules (a home where npm once ran) refuses nothing: honest work is verified', async () => {
    const home = testdir('ralphkit-home-');
    const tmp = path.join(home, 'tmp');
    mkdirSync(path.join(home, 'node_modules/left-pad'), { recursive: true });
    mkdirSync(tmp);
    writeFileSync(path.join(home, 'package.json'), JSON.stringify({ dependencies: { 'left-pad': '1.3.0' } }));
    vi.stubEnv('TMPDIR', tmp);
    const pkg = { name: 'demo', version: '1.0.0', private: true, scripts: { test: 'grep -q one src/app.txt' } };
    const files = { 'package.json': JSON.stringify(pkg), 'src/app.txt': 'zero\n' };
    const prd = plan([story('US-1', { checks: ['npm test --silent'], mayChange: ['src/app.txt'] })]);
    const { verdict } = await claimOn(prd, files, { 'src/app.txt': 'one\n' }, false);
    expect(verdict.status, verdict.reason).toBe('verified');
  }, 60_000);

  it('runner config: a tsconfig.json above a checkout that has none at its root is refused (tsc, vitest and tsx take the nearest one up); above one that has its own it is never read', () => {
    const tmp = testdir('ralphkit-tmp-');
    writeFileSync(path.join(tmp, 'tsconfig.json'), '{"compilerOptions":{"useDefineForClassFields":false}}');
    const checkout = path.join(tmp, 'ralph-verify-x');
    mkdirSync(checkout);
    expect(() => refuseUpwardConfig(checkout)).toThrow(
      `${path.join(tmp, 'tsconfig.json')} lies above the verification checkout`,
    );
    writeFileSync(path.join(checkout, 'tsconfig.json'), '{}');
    expect(() => refuseUpwardConfig(checkout)).not.toThrow();
    // npm puts every node_modules/.bin up the tree on a script's PATH.
    mkdirSync(path.join(tmp, 'node_modules/.bin'), { recursive: true });
    expect(() => refuseUpwardConfig(checkout)).toThrow(`${path.join(tmp, 'node_modules/.bin')} lies above`);
    rmSync(path.join(tmp, 'node_modules'), { recursive: true });
    // ESLint 8 merges every .eslintrc up the tree, the checkout's own or not.
    writeFileSync(path.join(tmp, '.eslintrc.json'), '{"rules":{}}');
    expect(() => refuseUpwardConfig(checkout)).toThrow(`${path.join(tmp, '.eslintrc.json')} lies above`);
  });

  it('runner config: the setup cache is not built under a workspace root either (an install there would read it into every later checkout)', async () => {
    const tmp = testdir('ralphkit-tmp-');
    vi.stubEnv('TMPDIR', tmp);
    writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ workspaces: ['*'] }));
    let ran = false;
    const build = buildApart(new Map([['package.json', Buffer.from('{}')]]), () => {
      ran = true;
      throw new Error('setup ran');
    });
    await expect(build).rejects.toThrow(
      `${path.join(tmp, 'package.json')} lies above the folder the setup cache is built in`,
    );
    expect(ran).toBe(false);
    expect(readdirSync(tmp)).toEqual(['package.json']);
  });
});
