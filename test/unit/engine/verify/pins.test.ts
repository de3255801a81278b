// What is pinned (verify/pins.ts): pure tables over file lists, commands and manifest texts.
import { describe, expect, it } from 'vitest';
import {
  applyScriptPins,
  applySectionPin,
  PINNED_SECTIONS,
  readScripts,
  readSection,
  renderSetupWarning,
} from '../../../../src/engine/verify/package-pins.js';
import { matchAbsent, planConfigLoads, planNamedPaths, planPinnedPaths } from '../../../../src/engine/verify/pins.js';
import { planScriptNames } from '../../../../src/engine/verify/check-steps.js';
import { globToRegExp } from '../../../../src/engine/verify/glob.js';
import { story } from '../../../support/plan.js';

describe('globToRegExp', () => {
  it.each([
    ['*.test.*', 'src/a.test.ts', true],
    ['*.test.*', 'src/atest.ts', false],
    ['test/', 'test/a/b.js', true],
    ['test/', 'src/test/b.js', true],
    ['/test/x', 'test/x', false],
    ['src/*.js', 'src/a.js', true],
    ['src/*.js', 'src/a/b.js', false],
    ['src/**/*.js', 'src/a/b.js', true],
    ['src/**/*.js', 'src/b.js', true],
    ['{a,b}.txt', 'b.txt', true],
    ['?.txt', 'ab.txt', false],
    ['fixtures/**', 'fixtures/x/y', true],
    ['node_modules/', 'node_modules/.bin/node', true],
  ])('%s ~ %s → %s', (glob, file, hit) => {
    expect(globToRegExp(glob).test(file)).toBe(hit);
  });
});

describe('planScriptNames', () => {
  it.each([
    [
      'npm test',
      [
        ['', 'test'],
        ['', 'pretest'],
        ['', 'posttest'],
      ],
    ],
    [
      'npm t --silent',
      [
        ['', 'test'],
        ['', 'pretest'],
        ['', 'posttest'],
      ],
    ],
    [
      'npm run lint && npx tsc',
      [
        ['', 'lint'],
        ['', 'prelint'],
        ['', 'postlint'],
      ],
    ],
    [
      'yarn build',
      [
        ['', 'build'],
        ['', 'prebuild'],
        ['', 'postbuild'],
      ],
    ],
    ['yarn install', []],
    [
      'pnpm -C app test',
      [
        ['app', 'test'],
        ['app', 'pretest'],
        ['app', 'posttest'],
      ],
    ],
    [
      'npm --prefix app run check',
      [
        ['app', 'check'],
        ['app', 'precheck'],
        ['app', 'postcheck'],
      ],
    ],
    [
      'npm -w packages/a test',
      [
        ['packages/a', 'test'],
        ['packages/a', 'pretest'],
        ['packages/a', 'posttest'],
      ],
    ],
    [
      'cd app && npm test',
      [
        ['app', 'test'],
        ['app', 'pretest'],
        ['app', 'posttest'],
      ],
    ],
    ['node --test test/', []],
  ])('%s', (command, expected) => {
    expect(planScriptNames(command).map((s) => [s.dir, s.name])).toEqual(expected);
  });
});

describe('planPinnedPaths and planNamedPaths', () => {
  const files = [
    'README.md',
    'src/a.ts',
    'src/a.test.ts',
    'test/b.js',
    'scripts/check.sh',
    '.npmrc',
    'vitest.config.ts',
    'Makefile',
    'fixtures/x.json',
    'package.json',
  ];
  const plan = (extra: object) => ({
    branchName: 'b',
    userStories: [
      story('S', { title: 't', acceptanceCriteria: ['a'], checks: ['sh scripts/check.sh', 'node --test src/'] }),
    ],
    ...extra,
  });

  it('defaults: tests, runner and package-manager configuration, the files checks name (a named folder: only its tests)', () => {
    expect(planPinnedPaths(files, plan({}))).toEqual([
      '.npmrc',
      'scripts/check.sh',
      'src/a.test.ts',
      'test/b.js',
      'vitest.config.ts',
    ]);
  });

  it('protect adds globs; protectDefaults false keeps only them and the named files; make pins the Makefile', () => {
    // `make test` names the folder test/ too: its test files are pinned with the rest.
    expect(
      planPinnedPaths(files, plan({ protect: ['fixtures/**'], protectDefaults: false, checks: ['make test'] })),
    ).toEqual(['Makefile', 'fixtures/x.json', 'scripts/check.sh', 'src/a.test.ts', 'test/b.js']);
  });

  it('a word that is neither a file nor a folder names nothing', () => {
    expect(planNamedPaths('echo hello && grep -q x README.md', files)).toEqual(['README.md']);
  });

  it("files a commit adds that the plan commit's absence pins", () => {
    expect(matchAbsent(['.npmrc', 'node_modules/.bin/node', 'src/new.test.ts', 'conftest.py', 'lib/x.pth'])).toEqual([
      '.npmrc',
      'node_modules/.bin/node',
      'conftest.py',
      'lib/x.pth',
    ]);
  });
});

describe('applyScriptPins', () => {
  const pkg = (o: object) => JSON.stringify({ name: 'x', ...o });
  it.each([
    ['unchanged', pkg({ scripts: { test: 'vitest' } }), { test: 'vitest' }, {}, null],
    ['a neutralised script', pkg({ scripts: { test: 'exit 0' } }), { test: 'vitest' }, {}, ['scripts.test']],
    [
      'a pre hook the plan commit lacks',
      pkg({ scripts: { test: 'vitest', pretest: 'x' } }),
      { test: 'vitest', pretest: null },
      {},
      ['scripts.pretest'],
    ],
    ['a jest key that ignores tests', pkg({ jest: { testPathIgnorePatterns: ['.'] } }), {}, { jest: null }, ['jest']],
    ['not JSON', '{', { test: 'vitest' }, {}, []],
  ])('%s', (_, text, scripts, keys, changed) => {
    const r = applyScriptPins(text, scripts, keys);
    if (changed === null) expect(r).toEqual({ text: null, changed: [] });
    else expect(r.changed).toEqual(changed);
  });

  it('keeps the dependencies a story added', () => {
    const r = applyScriptPins(pkg({ scripts: { test: 'exit 0' }, dependencies: { a: '1' } }), { test: 'vitest' });
    expect(JSON.parse(r.text!)).toEqual({ name: 'x', scripts: { test: 'vitest' }, dependencies: { a: '1' } });
  });
});

describe('pinned sections (pytest in pyproject.toml)', () => {
  const pyproject = (pytest: string) =>
    `[project]\nname = "x"\ndependencies = ["a"]\n\n[tool.pytest.ini_options]\n${pytest}\n[tool.other]\nk = 1\n`;
  it('reads a section up to the next header', () => {
    expect(readSection(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]')).toBe(
      '[tool.pytest.ini_options]\naddopts = "-q"',
    );
    expect(readSection('[project]\n', '[tool.pytest.ini_options]')).toBeNull();
  });

  it('puts the pinned section back, removes one the plan commit lacked, and keeps the rest', () => {
    const pinned = readSection(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]');
    const restored = applySectionPin(pyproject('addopts = "--ignore=tests"'), '[tool.pytest.ini_options]', pinned)!;
    expect(restored).toBe(pyproject('addopts = "-q"'));
    expect(applySectionPin(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]', pinned)).toBeNull();
    expect(applySectionPin(pyproject('addopts = "--ignore=tests"'), '[tool.pytest.ini_options]', null)).not.toContain(
      '--ignore',
    );
  });
});

describe('renderSetupWarning', () => {
  const prd = (extra: object) => ({ branchName: 'b', checks: ['npm test'], userStories: [], ...extra });
  it.each([
    [['package-lock.json'], {}, '"setup": "npm ci"'],
    [['pnpm-lock.yaml'], {}, '"setup": "pnpm install --frozen-lockfile"'],
    [['package-lock.json'], { setup: 'npm ci' }, null],
    [['README.md'], {}, null],
    [['package-lock.json'], { checks: undefined }, null],
  ])('%j %j', (files, extra, line) => {
    const w = renderSetupWarning(files, prd(extra));
    if (line === null) expect(w).toBeNull();
    else expect(w).toContain(line);
  });
});

describe('every entry of the pinned tables pins what it names', () => {
  // One committed file per default glob; a file nobody pins beside them.
  const samples: Array<[string, boolean]> = [
    ['test/a.js', true],
    ['pkg/tests/a.py', true],
    ['src/__tests__/a.js', true],
    ['spec/a_spec.rb', true],
    ['e2e/flow.ts', true],
    ['src/a.test.ts', true],
    ['src/a.spec.js', true],
    ['pkg/a_test.go', true],
    ['pkg/test_a.py', true],
    ['phpunit.xml.dist', true],
    ['.npmrc', true],
    ['.yarnrc', true],
    ['.yarnrc.yml', true],
    ['.pnpmfile.cjs', true],
    ['bunfig.toml', true],
    ['node_modules/x/index.js', true],
    ['.node-options', true],
    ['vitest.config.ts', true],
    ['vitest.workspace.ts', true],
    ['vite.config.mjs', true],
    ['jest.config.js', true],
    ['babel.config.js', true],
    ['src/.babelrc', true],
    ['.swcrc', true],
    ['.mocharc.yml', true],
    ['playwright.config.ts', true],
    ['cypress.config.js', true],
    ['karma.conf.js', true],
    ['ava.config.cjs', true],
    ['pytest.ini', true],
    ['tox.ini', true],
    ['conftest.py', true],
    ['sitecustomize.py', true],
    ['usercustomize.py', true],
    ['lib/site.pth', true],
    ['src/index.ts', false],
    ['README.md', false],
    ['package.json', false],
    ['pyproject.toml', false],
    ['src/latest.js', false],
  ];
  it.each(samples)('%s → %s', (file, pinned) => {
    const files = [file, 'other.txt'];
    expect(planPinnedPaths(files, { branchName: 'b', userStories: [] }).includes(file)).toBe(pinned);
    // protectDefaults: false drops every one of them.
    expect(planPinnedPaths(files, { branchName: 'b', userStories: [], protectDefaults: false })).toEqual([]);
  });

  it.each([
    ['package-lock.json', 'npm ci'],
    ['npm-shrinkwrap.json', 'npm ci'],
    ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
    ['yarn.lock', 'yarn install --frozen-lockfile'],
    ['bun.lockb', 'bun install --frozen-lockfile'],
    ['bun.lock', 'bun install --frozen-lockfile'],
    ['poetry.lock', 'poetry install'],
    ['uv.lock', 'uv sync --frozen'],
    ['Pipfile.lock', 'pipenv sync'],
    ['Gemfile.lock', 'bundle install'],
  ])('the lockfile %s asks for "setup": "%s"', (lockfile, line) => {
    expect(renderSetupWarning([lockfile], { branchName: 'b', checks: ['make'], userStories: [] })).toContain(
      `"setup": "${line}",`,
    );
  });

  it.each(['jest', 'mocha', 'ava', 'c8', 'nyc', 'tap', 'babel', 'bin', 'directories'])(
    'the package.json key %s is put back as pinned',
    (key) => {
      const r = applyScriptPins(JSON.stringify({ name: 'x', [key]: { exclude: ['**'] } }), {}, { [key]: null });
      expect(r.changed).toEqual([key]);
      expect(JSON.parse(r.text!)).toEqual({ name: 'x' });
    },
  );

  it('a runner key the plan commit had is put back with its value', () => {
    const r = applyScriptPins(
      JSON.stringify({ name: 'x', jest: { testMatch: [] } }),
      {},
      { jest: { testMatch: ['**/*.test.js'] } },
    );
    expect(JSON.parse(r.text!).jest).toEqual({ testMatch: ['**/*.test.js'] });
  });

  it.each([
    ['npm --prefix=app test', 'app'],
    ['npm -w=packages/a test', 'packages/a'],
    ['yarn --cwd web test', 'web'],
    ['pnpm --dir ./web run e2e', 'web'],
    ['cd app && cd sub && npm test', 'app/sub'],
    ['cd ./app && npm test', 'app'],
  ])('%s runs the scripts of %s/package.json', (command, dir) => {
    expect(new Set(planScriptNames(command).map((s) => s.dir))).toEqual(new Set([dir]));
  });

  it.each([
    ['pnpm exec vitest', []],
    ['pnpm dlx x', []],
    ['yarn add left-pad', []],
    ['pnpm i', []],
    ['npm ci', []],
    ['pnpm x', []],
    ['pnpm lint', ['lint', 'prelint', 'postlint']],
    ['npm run lint && npm run lint', ['lint', 'prelint', 'postlint']],
    ['npm start', ['start', 'prestart', 'poststart']],
  ])('%s → %j', (command, names) => {
    expect(planScriptNames(command).map((s) => s.name)).toEqual(names);
  });

  it('scripts that are not strings, or a manifest that is not an object, define nothing', () => {
    expect(readScripts(JSON.stringify({ scripts: { test: 1, lint: 'eslint' } }), ['test', 'lint'])).toEqual({
      test: null,
      lint: 'eslint',
    });
    expect(readScripts(JSON.stringify({ scripts: 'npm test' }), ['test'])).toEqual({ test: null });
    expect(readScripts('[1]', ['test'])).toEqual({ test: null });
    expect(readScripts(null, ['test'])).toEqual({ test: null });
    expect(applyScriptPins('[1, 2]', { test: 'x' })).toEqual({ text: null, changed: [] });
    expect(applyScriptPins('"text"', { test: 'x' })).toEqual({ text: null, changed: [] });
  });

  it('a script pinned while the manifest has no scripts object gets one', () => {
    expect(
      JSON.parse(applyScriptPins(JSON.stringify({ name: 'x', scripts: 'oops' }), { test: 'vitest' }).text!).scripts,
    ).toEqual({ test: 'vitest' });
  });

  it('each pinned section names its own file', () => {
    expect(PINNED_SECTIONS).toEqual([
      { file: 'pyproject.toml', header: '[tool.pytest.ini_options]' },
      { file: 'pyproject.toml', header: '[tool.pytest]' },
      { file: 'setup.cfg', header: '[tool:pytest]' },
    ]);
  });

  it('make pins the Makefile only for a check that runs make', () => {
    const files = ['Makefile', 'GNUmakefile', 'makefile.txt'];
    const run = (checks: string[]) =>
      planPinnedPaths(files, { branchName: 'b', checks, userStories: [], protectDefaults: false });
    expect(run(['make'])).toEqual(['GNUmakefile', 'Makefile']);
    expect(run(['make test'])).toEqual(['GNUmakefile', 'Makefile']);
    expect(run(['cmake .'])).toEqual([]);
    expect(run(['echo make-believe'])).toEqual([]);
  });
});

describe('globToRegExp, the edges', () => {
  it.each([
    ['./test/', 'test/a.js', true],
    ['**/x.js', 'a/b/x.js', true],
    ['**/x.js', 'x.js', true],
    ['a/**', 'a', false],
    ['{unclosed', '{unclosed', true],
    ['a.b', 'axb', false],
    ['src/{a,b}/*.js', 'src/b/c.js', true],
    ['src/{a,b}/*.js', 'src/ab/c.js', false],
  ])('%s ~ %s → %s', (glob, file, hit) => {
    expect(globToRegExp(glob).test(file)).toBe(hit);
  });
});

describe('planConfigLoads', () => {
  const files = [
    'jest.setup.js',
    'test/env.ts',
    'config/mocha-setup.cjs',
    'testsupport.py',
    'plugins/extra/__init__.py',
    'tsconfig.base.json',
    'src/index.ts',
    'rules.mk',
    'pkg/Makefile',
    'pkg/common.mk',
    'next.config.mjs',
    'node.ts',
    'tests/plug.py',
  ];
  it.each<[string, string, string, { pinned: string[]; absent: string[] }]>([
    [
      'jest setup and environment files, <rootDir> and ./ resolved; a module name by its committed file',
      'jest.config.js',
      "module.exports = { setupFilesAfterEnv: ['<rootDir>/jest.setup.js'], testEnvironment: './test/env', roots: ['<rootDir>/src'] };",
      { pinned: ['jest.setup.js', 'test/env.ts'], absent: [] },
    ],
    [
      "package.json's jest key, as pinned (JSON)",
      'package.json',
      JSON.stringify({ jest: { setupFiles: ['./jest.setup.js'] }, mocha: null }),
      { pinned: ['jest.setup.js'], absent: [] },
    ],
    [
      "mocha's require",
      '.mocharc.yml',
      'require: ["config/mocha-setup.cjs"]\nspec: test/**/*.spec.js\n',
      { pinned: ['config/mocha-setup.cjs'], absent: [] },
    ],
    [
      "pytest's -p plugins and a conftest's pytest_plugins, as modules or packages",
      'pytest.ini',
      '[pytest]\naddopts = -q -p testsupport\npytest_plugins = ["plugins.extra"]\n',
      { pinned: ['testsupport.py', 'plugins/extra/__init__.py'], absent: [] },
    ],
    [
      "a tsconfig's extends; its files list is the project's code, not loaded configuration",
      'tsconfig.json',
      '{ "extends": "./tsconfig.base.json", "files": ["src/index.ts"] }',
      { pinned: ['tsconfig.base.json'], absent: [] },
    ],
    [
      "a makefile's includes, from its folder; an optional one it lacks pinned absent; names with variables skipped",
      'pkg/Makefile',
      '-include local.mk\ninclude common.mk ../rules.mk\nsinclude $(HOME)/x.mk\napp: main.c util.c\n',
      { pinned: ['pkg/common.mk', 'rules.mk'], absent: ['pkg/local.mk'] },
    ],
    [
      'a bare name is a package, not a file of the project (next, node)',
      '.eslintrc.json',
      '{ "extends": ["next", "prettier"], "env": { "node": true } }',
      { pinned: [], absent: [] },
    ],
    [
      "vitest's environment by name",
      'vitest.config.ts',
      "export default { test: { environment: 'node', setupFiles: ['./jest.setup.js'] } };",
      { pinned: ['jest.setup.js'], absent: [] },
    ],
    [
      "a YAML block list and a bare scalar (mocha's require)",
      '.mocharc.yml',
      'require:\n  - config/mocha-setup.cjs\nextends: ./tsconfig.base.json\n',
      { pinned: ['config/mocha-setup.cjs', 'tsconfig.base.json'], absent: [] },
    ],
    [
      "pyproject's addopts as a list",
      'pyproject.toml',
      '[tool.pytest.ini_options]\naddopts = ["-p", "tests.plug", "-p", "no:cacheprovider"]\n',
      { pinned: ['tests/plug.py'], absent: [] },
    ],
    [
      'a required include the plan commit lacks is not pinned absent (setup may generate it)',
      'Makefile',
      'include config.mk\n',
      { pinned: [], absent: [] },
    ],
  ])('%s', (_what, file, text, expected) => {
    expect(planConfigLoads(file, text, files)).toEqual(expected);
  });
});

describe('type-checker, linter, formatter and mock configuration', () => {
  it('pins tsconfig, eslint, prettier and biome configuration and every __mocks__ folder, and pins them absent when added', () => {
    const committed = [
      'tsconfig.json',
      'tsconfig.build.json',
      'eslint.config.js',
      '.prettierrc',
      'biome.json',
      '__mocks__/chai.js',
      'src/app.ts',
    ];
    const prd = { branchName: 'b', userStories: [story('S', { checks: ['npx tsc --noEmit'] })] };
    expect(planPinnedPaths(committed, prd)).toEqual([
      '.prettierrc',
      '__mocks__/chai.js',
      'biome.json',
      'eslint.config.js',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
    // Added: root mocks and lint configuration are removed; a mock beside a module and a new package's tsconfig stay.
    expect(
      matchAbsent(['__mocks__/fs.js', 'src/__mocks__/db.ts', '.eslintrc.json', 'packages/a/tsconfig.json', 'src/b.ts']),
    ).toEqual(['__mocks__/fs.js', '.eslintrc.json']);
  });
});
