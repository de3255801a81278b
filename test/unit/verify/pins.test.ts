// What is pinned (verify/pins.ts): pure tables over file lists, commands and manifest texts.
import { describe, expect, it } from 'vitest';
import { applyScriptPins, applySectionPin, matchAbsent, planNamedPaths, planPinnedPaths, planScriptNames, readSection, renderSetupWarning } from '../../../src/engine/verify/pins.js';
import { globToRegExp } from '../../../src/engine/verify/glob.js';

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
    ['npm test', [['', 'test'], ['', 'pretest'], ['', 'posttest']]],
    ['npm t --silent', [['', 'test'], ['', 'pretest'], ['', 'posttest']]],
    ['npm run lint && npx tsc', [['', 'lint'], ['', 'prelint'], ['', 'postlint']]],
    ['yarn build', [['', 'build'], ['', 'prebuild'], ['', 'postbuild']]],
    ['yarn install', []],
    ['pnpm -C app test', [['app', 'test'], ['app', 'pretest'], ['app', 'posttest']]],
    ['npm --prefix app run check', [['app', 'check'], ['app', 'precheck'], ['app', 'postcheck']]],
    ['npm -w packages/a test', [['packages/a', 'test'], ['packages/a', 'pretest'], ['packages/a', 'posttest']]],
    ['cd app && npm test', [['app', 'test'], ['app', 'pretest'], ['app', 'posttest']]],
    ['node --test test/', []],
  ])('%s', (command, expected) => {
    expect(planScriptNames(command).map((s) => [s.dir, s.name])).toEqual(expected);
  });
});

describe('planPinnedPaths and planNamedPaths', () => {
  const files = ['README.md', 'src/a.ts', 'src/a.test.ts', 'test/b.js', 'scripts/check.sh', '.npmrc', 'vitest.config.ts', 'Makefile', 'fixtures/x.json', 'package.json'];
  const plan = (extra: object) => ({ branchName: 'b', userStories: [{ id: 'S', title: 't', acceptanceCriteria: ['a'], priority: 1, passes: false, checks: ['sh scripts/check.sh', 'node --test src/'] }], ...extra });

  it('defaults: tests, runner and package-manager configuration, the files checks name (a named folder: only its tests)', () => {
    expect(planPinnedPaths(files, plan({}))).toEqual(['.npmrc', 'scripts/check.sh', 'src/a.test.ts', 'test/b.js', 'vitest.config.ts']);
  });

  it('protect adds globs; protectDefaults false keeps only them and the named files; make pins the Makefile', () => {
    // `make test` names the folder test/ too: its test files are pinned with the rest.
    expect(planPinnedPaths(files, plan({ protect: ['fixtures/**'], protectDefaults: false, checks: ['make test'] }))).toEqual(['Makefile', 'fixtures/x.json', 'scripts/check.sh', 'src/a.test.ts', 'test/b.js']);
  });

  it('a word that is neither a file nor a folder names nothing', () => {
    expect(planNamedPaths('echo hello && grep -q x README.md', files)).toEqual(['README.md']);
  });

  it('files a commit adds that the plan commit\'s absence pins', () => {
    expect(matchAbsent(['.npmrc', 'node_modules/.bin/node', 'src/new.test.ts', 'conftest.py', 'lib/x.pth'])).toEqual(['.npmrc', 'node_modules/.bin/node', 'conftest.py', 'lib/x.pth']);
  });
});

describe('applyScriptPins', () => {
  const pkg = (o: object) => JSON.stringify({ name: 'x', ...o });
  it.each([
    ['unchanged', pkg({ scripts: { test: 'vitest' } }), { test: 'vitest' }, {}, null],
    ['a neutralised script', pkg({ scripts: { test: 'exit 0' } }), { test: 'vitest' }, {}, ['scripts.test']],
    ['a pre hook the plan commit lacks', pkg({ scripts: { test: 'vitest', pretest: 'x' } }), { test: 'vitest', pretest: null }, {}, ['scripts.pretest']],
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
  const pyproject = (pytest: string) => `[project]\nname = "x"\ndependencies = ["a"]\n\n[tool.pytest.ini_options]\n${pytest}\n[tool.other]\nk = 1\n`;
  it('reads a section up to the next header', () => {
    expect(readSection(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]')).toBe('[tool.pytest.ini_options]\naddopts = "-q"');
    expect(readSection('[project]\n', '[tool.pytest.ini_options]')).toBeNull();
  });

  it('puts the pinned section back, removes one the plan commit lacked, and keeps the rest', () => {
    const pinned = readSection(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]');
    const restored = applySectionPin(pyproject('addopts = "--ignore=tests"'), '[tool.pytest.ini_options]', pinned)!;
    expect(restored).toBe(pyproject('addopts = "-q"'));
    expect(applySectionPin(pyproject('addopts = "-q"'), '[tool.pytest.ini_options]', pinned)).toBeNull();
    expect(applySectionPin(pyproject('addopts = "--ignore=tests"'), '[tool.pytest.ini_options]', null)).not.toContain('--ignore');
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
