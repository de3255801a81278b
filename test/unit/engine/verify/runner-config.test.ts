import { describe, expect, it } from 'vitest';
import {
  matchRunnerConfig,
  planRunnersOf,
  pythonMetadataShadows,
  pythonModuleShadows,
  pythonRunnerModules,
  planShadowPaths,
  RUNNER_CONFIG,
  UPWARD_FILES,
  ABOVE_ROOTS,
} from '../../../../src/engine/verify/runner-config.js';
import {
  matchAbsent,
  planAbsentPaths,
  makefileTargets,
  planCommittedAbsentPaths,
} from '../../../../src/engine/verify/pins.js';
import { planSetupScripts } from '../../../../src/engine/verify/check-steps.js';
import { plan, story } from '../../../support/verify-repo.js';

const filesOf = (runner: string) => RUNNER_CONFIG.find((r) => r.runner === runner)!.files;

describe("RUNNER_CONFIG: each runner's configuration files, highest precedence first", () => {
  it.each([
    ['make', ['GNUmakefile', 'makefile', 'Makefile']],
    [
      'pytest',
      [
        'pytest.toml',
        '.pytest.toml',
        'pytest.ini',
        '.pytest.ini',
        'pyproject.toml',
        'tox.ini',
        'setup.cfg',
        'conftest.py',
      ],
    ],
    ['vitest', ['vitest.config.*', 'vite.config.*', 'vitest.workspace.*']],
    [
      'mocha',
      [
        '.mocharc.cjs',
        '.mocharc.js',
        '.mocharc.mjs',
        '.mocharc.yaml',
        '.mocharc.yml',
        '.mocharc.jsonc',
        '.mocharc.json',
        'package.json',
      ],
    ],
    ['phpunit', ['phpunit.xml', 'phpunit.dist.xml', 'phpunit.xml.dist']],
    ['rspec', ['.rspec-local', '.rspec', '**/spec/spec_helper.rb']],
    ['go', ['go.work', 'go.mod']],
  ])('%s', (runner, files) => {
    expect(filesOf(runner)).toEqual(files);
  });

  it.each([
    ['pytest.toml', true],
    ['app/.pytest.ini', true],
    ['.npmrc', true],
    ['pnpm-workspace.yaml', true],
    ['bunfig.toml', true],
    ['crates/x/.cargo/config.toml', true],
    ['phpunit.dist.xml', true],
    ['.rspec-local', true],
    ['go.work', true],
    ['vite.config.mts', true],
    // project files a story edits: never removed when added
    ['Makefile', false],
    ['pyproject.toml', false],
    ['package.json', false],
    ['go.mod', false],
    ['Cargo.toml', false],
    ['src/app.ts', false],
  ])('%s is configuration only (pinned absent anywhere): %s', (file, expected) => {
    expect(matchRunnerConfig([file])).toEqual(expected ? [file] : []);
  });

  it('the files read from parent folders are refused above a checkout; a root a project always has is refused only where it takes the folders below in', () => {
    expect(UPWARD_FILES).toEqual(
      expect.arrayContaining([
        'pytest.toml',
        'pytest.ini',
        'pyproject.toml',
        'conftest.py',
        'setup.py',
        '.mocharc.js',
        '.yarnrc.yml',
        'pnpm-workspace.yaml',
        'go.work',
        '.cargo/config.toml',
      ]),
    );
    // Globs are matched in the project, not looked for above it; the project's own roots stop the search for them.
    expect(UPWARD_FILES.filter((f) => f.includes('*'))).toEqual([]);
    for (const own of ['package.json', 'go.mod', 'Cargo.toml', 'node_modules']) expect(UPWARD_FILES).not.toContain(own);
  });

  it.each([
    ['package.json', '{"workspaces":["*"]}', true],
    ['package.json', '{"name":"root","mocha":{"spec":"x"}}', true],
    ['package.json', '{"name":"home","dependencies":{"left-pad":"1"}}', false],
    ['package.json', 'not json', true],
    ['package.json', '[]', false],
    ['package.json', 'null', true],
    ['Cargo.toml', '[workspace]\nmembers = ["*"]\n', true],
    ['Cargo.toml', '  [workspace]\n', true],
    ['Cargo.toml', '[package]\nname = "x"\n', false],
  ])('above a checkout, %s holding %j takes the folders below in: %s', (name, text, expected) => {
    expect(ABOVE_ROOTS.find((r) => r.name === name)!.takesIn(text)).toBe(expected);
  });
});

describe('planShadowPaths / planAbsentPaths: files that would silence a pinned one', () => {
  it.each([
    [
      'make -C app test',
      ['Makefile', 'app/Makefile'],
      ['GNUmakefile', 'app/GNUmakefile', 'app/makefile', 'app/test', 'makefile'],
    ],
    ['make test', ['makefile'], ['GNUmakefile', 'test']],
    ['make test', ['GNUmakefile'], ['test']],
    // A file the plan commit has under a target's name is the project's; options and assignments are no targets.
    ['make -s -j4 CC=gcc check lint', ['Makefile', 'lint'], ['GNUmakefile', 'check', 'makefile']],
    ['pytest -q', ['pyproject.toml'], ['.pytest.ini', '.pytest.toml', 'pytest.ini', 'pytest.toml']],
    [
      'CI=1 pytest',
      ['setup.cfg'],
      ['.pytest.ini', '.pytest.toml', 'pyproject.toml', 'pytest.ini', 'pytest.toml', 'tox.ini'],
    ],
    ['go test ./...', ['go.mod'], ['go.work']],
    ['npm test', ['Makefile', 'pyproject.toml'], []],
  ])('%s with %j pins absent %j', (check, files, expected) => {
    expect(planAbsentPaths(files, plan([story('US-1', { checks: [check] })]))).toEqual(expected);
  });

  it('runners are told by the command word, a path to it, or python -m', () => {
    expect(planRunnersOf(['/usr/bin/make', 'test']).map((r) => r.runner)).toEqual(['make']);
    expect(planRunnersOf(['python3', '-m', 'pytest']).map((r) => r.runner)).toEqual(['pytest']);
    expect(planRunnersOf(['echo', 'make'])).toEqual([]);
    expect(planShadowPaths(['Makefile'], [])).toEqual([]);
  });

  it("a make check: every target its pinned makefile has a rule for, named or not, is pinned absent in make's folder", () => {
    const makefile = [
      '.PHONY: lint',
      'CC := gcc',
      'FLAGS ::= -O2',
      'all check: unit lint',
      '\techo done',
      'unit::',
      '\tnode --test',
      '%.o: %.c',
      '$(OUT)/x: y',
      'build/app.js: src/app.ts # the bundle',
      'ifeq ($(CI),1)',
      'endif',
    ].join('\n');
    expect(makefileTargets(makefile)).toEqual(['all', 'check', 'unit', 'build/app.js']);
    const absent = (check: string, files: string[]) =>
      planAbsentPaths(files, plan([story('US-1', { checks: [check] })]), (f) =>
        f.endsWith('Makefile') ? makefile : null,
      );
    // A target with a path or an extension is an output the project may commit: only named, it is pinned absent.
    expect(absent('make', ['Makefile', 'unit'])).toEqual(['GNUmakefile', 'all', 'check', 'makefile']);
    expect(absent('make build/app.js', ['Makefile'])).toContain('build/app.js');
    // Through a shell or a pinned script (`"test": "make check"` in app/package.json), make is read the same way.
    expect(absent("sh -c 'make check'", ['Makefile'])).toContain('check');
    const viaScript = planAbsentPaths(
      ['app/Makefile'],
      plan([story('US-1', { checks: ['npm test --prefix app'] })]),
      () => null,
      [{ dir: 'app', command: 'make check' }],
    );
    expect(viaScript).toContain('app/check');
    expect(absent('make -C app', ['app/Makefile'])).toEqual([
      'app/GNUmakefile',
      'app/all',
      'app/check',
      'app/makefile',
      'app/unit',
    ]);
  });

  it('a named absent path is matched like the globs, and one with a * as a glob', () => {
    expect(matchAbsent(['GNUmakefile', 'src/a.ts', '.npmrc'], ['GNUmakefile'])).toEqual(['GNUmakefile', '.npmrc']);
    expect(matchAbsent(['app/pytest.cpython-311-x86_64-linux-gnu.so', 'app/pytest.py'], ['app/pytest.*so'])).toEqual([
      'app/pytest.cpython-311-x86_64-linux-gnu.so',
    ]);
  });

  it('python -m: package metadata in its folder is pinned absent in what a commit adds (entry points load plugins)', () => {
    const committed = (c: string, files: string[] = []) =>
      planCommittedAbsentPaths(files, plan([story('US-1', { checks: [c] })]));
    expect(committed('python3 -m pytest -q')).toEqual(['*.dist-info/', '*.egg-info/', '*.egg-link']);
    expect(committed('cd api && python -m mycli --help')).toEqual([
      'api/*.dist-info/',
      'api/*.egg-info/',
      'api/*.egg-link',
    ]);
    // A project that commits its metadata keeps it; a console-script runner or a script is not started from its folder.
    expect(committed('python -m pytest', ['demo.egg-info/PKG-INFO'])).toEqual(['*.dist-info/', '*.egg-link']);
    expect(committed('pytest -q')).toEqual([]);
    expect(committed('python run.py')).toEqual([]);
    expect(pythonMetadataShadows(['node', '-m'])).toEqual([]);
  });

  it('python bytecode is configuration only: a .pyc or a __pycache__ folder the plan commit lacks is removed', () => {
    expect(matchAbsent(['tests/__pycache__/test_add.cpython-311.pyc', 'legacy.pyc', 'tests/test_add.py'])).toEqual([
      'tests/__pycache__/test_add.cpython-311.pyc',
      'legacy.pyc',
    ]);
  });

  it('python -m <runner>: a module of that name (or one the runner imports first) in the folder it runs in would run instead', () => {
    const as = (n: string) => [`${n}.py`, `${n}.pyc`, `${n}/__init__.py`, `${n}/__init__.pyc`, `${n}.*so`, `${n}.pyd`];
    expect(pythonModuleShadows(['python3', '-m', 'unittest', 'tests.test_add'])).toEqual(as('unittest'));
    // pytest, and what it imports before any test: its own package, pluggy, py's shim, pygments.
    const pytest = pythonModuleShadows(['/usr/bin/python3.12', '-B', '-mpytest', '-m', 'slow']);
    expect(pytest.slice(0, 6)).toEqual(as('pytest'));
    expect(pytest).toEqual(
      expect.arrayContaining([...as('_pytest'), ...as('pluggy'), 'py.py', 'pygments/__init__.py']),
    );
    expect(pythonModuleShadows(['python', '-m', 'coverage', 'run', '-m', 'unittest'])).toEqual([
      ...as('coverage'),
      ...as('unittest'),
    ]);
    // The project's own module, a script, another interpreter: nothing.
    for (const words of [
      ['python', '-m', 'mycli'],
      ['python', 'run_tests.py'],
      ['node', '-m', 'pytest'],
      ['python', '-m'],
    ])
      expect(pythonModuleShadows(words)).toEqual([]);
    const check = (c: string, files: string[] = []) => planAbsentPaths(files, plan([story('US-1', { checks: [c] })]));
    expect(check('cd api && python -m unittest')).toEqual(
      as('unittest')
        .map((f) => `api/${f}`)
        .sort(),
    );
    // One the plan commit has is the project's: not pinned absent.
    expect(check('python -m unittest', ['unittest/__init__.py', 'unittest.cpython-311.so'])).toEqual(
      ['unittest.py', 'unittest.pyc', 'unittest/__init__.pyc', 'unittest.pyd'].sort(),
    );
  });

  it("a folder python searches first (the loop's PYTHONPATH, or one a check sets): the runner's modules, and package metadata a commit adds there, are pinned absent for any command that starts it", () => {
    const as = (dir: string, n: string) => [`${dir}/${n}.py`, `${dir}/${n}/__init__.py`];
    expect(pythonRunnerModules(['pytest', '-q'])).toEqual(expect.arrayContaining(['pytest', '_pytest', 'pluggy']));
    expect(pythonRunnerModules(['py.test'])).toContain('pytest');
    expect(pythonRunnerModules(['PYTHONPATH=src', '/usr/local/bin/tox'])).toEqual(['tox']);
    expect(pythonRunnerModules(['python', '-m', 'unittest'])).toEqual(['unittest']);
    expect(pythonRunnerModules(['node', 'test.js'])).toEqual([]);
    // Started through the project's environment: `uv run`, `poetry run`, `env VAR=value`.
    for (const launch of [
      ['uv', 'run'],
      ['poetry', 'run'],
      ['env', 'PYTHONPATH=src'],
      ['env', '-i', 'A=1'],
    ])
      expect(pythonRunnerModules([...launch, 'pytest'])).toContain('pytest');
    expect(pythonRunnerModules(['uv', 'run', 'python', '-m', 'unittest'])).toEqual(['unittest']);
    const prd = (c: string) => plan([story('US-1', { checks: [c] })]);
    // The loop's PYTHONPATH=<repo>/src (a check gets <checkout>/src): a committed src/pytest.py stood in for pytest.
    const fromEnv = planAbsentPaths(['src/calc.py'], prd('pytest -q tests/test_calc.py'), () => null, [], ['src']);
    expect(fromEnv).toEqual(expect.arrayContaining([...as('src', 'pytest'), ...as('src', '_pytest'), 'src/pluggy.py']));
    // One a check sets, relative to the folder it runs in; an absolute one is outside the checkout, a relative one above it is not looked at.
    const fromCheck = planAbsentPaths([], prd('cd api && PYTHONPATH=lib:/opt/x:../up pytest'));
    expect(fromCheck).toEqual(expect.arrayContaining(as('api/lib', 'pytest')));
    expect(fromCheck.filter((f) => f.startsWith('/') || f.startsWith('..'))).toEqual([]);
    expect(planAbsentPaths([], prd('env PYTHONPATH=src uv run pytest'))).toEqual(
      expect.arrayContaining(as('src', 'pytest')),
    );
    // A command that starts no Python runner pins nothing there.
    expect(planAbsentPaths([], prd('node --test'), () => null, [], ['src'])).toEqual([]);
    expect(planCommittedAbsentPaths([], prd('pytest'), [], ['src'])).toEqual(
      ['src/*.dist-info/', 'src/*.egg-info/', 'src/*.egg-link'].sort(),
    );
  });
});

describe("planSetupScripts: what an install in setup runs of the project's own package.json", () => {
  const LIFECYCLE = [
    'preinstall',
    'install',
    'postinstall',
    'prepublish',
    'preprepare',
    'prepare',
    'postprepare',
    'dependencies',
  ];
  it.each([
    ['npm ci', ['']],
    ['npm install --no-audit', ['']],
    ['cd web && pnpm install --frozen-lockfile', ['web']],
    ['yarn', ['']],
    ['bun install && npm --prefix app ci', ['', 'app']],
    ['npm run build', []],
    ['pip install -r requirements.txt', []],
    ['', []],
  ])('%s', (setup, dirs) => {
    const got = planSetupScripts(setup || undefined);
    expect([...new Set(got.map((g) => g.dir))]).toEqual(dirs);
    for (const dir of dirs) expect(got.filter((g) => g.dir === dir).map((g) => g.name)).toEqual(LIFECYCLE);
  });
});
