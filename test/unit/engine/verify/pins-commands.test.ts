// Which files and scripts a check command pins (verify/pins.ts): the folder each part of a shell line runs in,
// makefiles, package-manager spellings, and the manifest and section readers the pins are built from.
import { describe, expect, it } from 'vitest';
import { allChecks, planNamedPaths, planPinnedPaths } from '../../../../src/engine/verify/pins.js';
import {
  applyScriptPins,
  applySectionPin,
  readRunnerKeys,
  readScripts,
  readSection,
} from '../../../../src/engine/verify/package-pins.js';
import { planMakefiles, planScriptNames, planSteps } from '../../../../src/engine/verify/check-steps.js';

const dirs = (command: string) => [
  ...new Set(planScriptNames(command).map((s) => `${s.dir}:${s.name.replace(/^(pre|post)/, '')}`)),
];

describe('the folder each part of a check line runs in', () => {
  it.each([
    ['(cd app && npm test)', ['app:test']],
    ['(cd app && npm test) && npm run lint', ['app:test', ':lint']],
    ['cd web && npm run build && cd .. && npm test', ['web:build', ':test']],
    ['cd web; (cd sub && npm test); npm start', ['web/sub:test', 'web:start']],
    ['cd .. && npm test', ['..:test']],
    ['cd /srv/app && npm test', ['/srv/app:test']],
    ['cd && npm test', [':test']],
    ['npm --prefix app/ test', ['app:test']],
    ['cd app && npm --prefix one --prefix two test', ['app/two:test']],
    ['npm test & npm run lint', [':test', ':lint']],
    ['npm test;npm run lint', [':test', ':lint']],
    ['npm test|tee log.txt', [':test']],
    ['npm test || npm run lint', [':test', ':lint']],
    ['npm test\nnpm run lint', [':test', ':lint']],
    ['npm test && npm --prefix app test', [':test', 'app:test']],
    ['cd app && echo x) && npm test', ['app:test']],
  ])('%j → %j', (command, expected) => {
    expect(dirs(command)).toEqual(expected);
  });

  it('a cd alone is not a step; other commands are, with their words', () => {
    expect(planSteps('  cd app &&  node  --test (x) ')).toEqual([
      { cwd: 'app', words: ['node', '--test'] },
      { cwd: 'app', words: ['x'] },
    ]);
    expect(planSteps('')).toEqual([]);
  });
});

describe('the script a package-manager command runs', () => {
  it.each([
    ['bun run e2e', ['e2e']],
    ['npm run-script lint', ['lint']],
    ['npm --silent test', ['test']],
    ['npm test --prefix', ['test']],
    ['test -f README.md', []],
    ['npm audit', []],
    ['npm install', []],
    ['yarn ci', []],
    ['pnpm ci', []],
    ['npm run', []],
  ])('%j → %j', (command, names) => {
    expect(
      planScriptNames(command)
        .map((s) => s.name)
        .filter((n) => !/^(pre|post)/.test(n)),
    ).toEqual(names);
  });

  it('--workspaces is not --workspace: it takes no folder, the next word is the script', () => {
    expect(planScriptNames('npm --workspaces test')).toEqual([
      { dir: '', name: 'test' },
      { dir: '', name: 'pretest' },
      { dir: '', name: 'posttest' },
    ]);
  });
});

describe('makefiles', () => {
  const files = [
    'Makefile',
    'app/Makefile',
    'app/makefile',
    'app/GNUmakefile',
    'app/GNUMakefile',
    'lib/Makefile',
    'app/sub/Makefile',
  ];
  const app = ['app/GNUmakefile', 'app/makefile', 'app/Makefile'];
  it.each([
    ['make', ['Makefile']],
    ['time make test', ['Makefile']],
    ['cd app && make test', app],
    ['(cd app && make test) && make', [...app, 'Makefile']],
    ['make -C app test', app],
    ['make -Capp test', app],
    ['make --directory=app', app],
    ['make --directory app', app],
    ['make -C app -C sub', ['app/sub/Makefile']],
    ['cd app && make -C ../lib', ['lib/Makefile']],
    ['make test -C', ['Makefile']],
    ['make test OPTS=-Capp', ['Makefile']],
    ['cmake . && echo make-believe', []],
    ['gmake test', ['Makefile']],
    ['/usr/bin/make -C app', app],
    ['cd app && /usr/local/bin/gmake check', app],
  ])('%j reads %j', (command, expected) => {
    expect(planMakefiles(command, files)).toEqual(expected);
  });

  it("a check that makes in a folder pins that folder's Makefile, not the root one", () => {
    const plan = { branchName: 'b', checks: ['cd app && make test'], userStories: [], protectDefaults: false };
    expect(planPinnedPaths(files, plan)).toEqual(['app/GNUmakefile', 'app/Makefile', 'app/makefile']);
  });
});

describe('files a check names', () => {
  it.each([
    ['sh ./scripts/check.sh', ['scripts/check.sh']],
    ['sh scripts/../scripts/check.sh', ['scripts/check.sh']],
    ['node --test ./lib/', ['lib/a.test.js']],
    ['node --test lib//', ['lib/a.test.js']],
  ])('%j → %j', (command, expected) => {
    expect(planNamedPaths(command, ['scripts/check.sh', 'lib/a.test.js', 'lib/a.js'])).toEqual(expected);
  });

  it.each([
    'lib/a.test.js',
    'lib/a.spec.ts',
    'lib/a_test.go',
    'lib/test_a.py',
    'lib/conftest.py',
    'lib/test/a.js',
    'lib/tests/a.js',
    'lib/__tests__/a.js',
    'lib/spec/a.rb',
  ])('a named folder pins its test file %s, not its code', (file) => {
    expect(planNamedPaths('node --test lib', [file, 'lib/index.js'])).toEqual([file]);
  });

  it('*_test.* is pinned in any language', () => {
    expect(planPinnedPaths(['src/parse_test.rs', 'src/parse.rs'], { branchName: 'b', userStories: [] })).toEqual([
      'src/parse_test.rs',
    ]);
  });

  it('every check of the plan and its stories, once, in order', () => {
    const prd = {
      checks: ['npm test', 'make'],
      userStories: [{ checks: ['make', 'sh a.sh'] }, {}, { checks: ['npm test'] }],
    };
    expect(allChecks(prd as never)).toEqual(['npm test', 'make', 'sh a.sh']);
    expect(allChecks({ userStories: [{}] } as never)).toEqual([]);
  });
});

describe('reading manifests', () => {
  const noKeys = {
    jest: null,
    mocha: null,
    ava: null,
    c8: null,
    nyc: null,
    tap: null,
    babel: null,
    bin: null,
    directories: null,
    prettier: null,
    eslintConfig: null,
    eslintIgnore: null,
  };
  it('every runner key of the manifest, null where absent', () => {
    const doc = {
      jest: { a: 1 },
      mocha: 'm',
      ava: [1],
      c8: false,
      nyc: 0,
      tap: { b: 2 },
      babel: { plugins: [] },
      bin: { jest: 'fake.js' },
      directories: { bin: 'tools' },
      prettier: { requirePragma: true },
      eslintConfig: { root: true },
      eslintIgnore: ['src/'],
    };
    expect(readRunnerKeys(JSON.stringify({ name: 'x', ...doc }))).toEqual(doc);
    expect(readRunnerKeys(JSON.stringify({ name: 'x', mocha: { spec: 'x' } }))).toEqual({
      ...noKeys,
      mocha: { spec: 'x' },
    });
  });

  it.each([null, '{', 'null', '"text"', '5', '[1]'])('a manifest %j has no runner keys and no scripts', (text) => {
    expect(readRunnerKeys(text)).toEqual(noKeys);
    expect(readScripts(text, ['test'])).toEqual({ test: null });
  });

  it.each(['{}', '{"scripts": null}', '{"scripts": "npm test"}', '{"scripts": 5}'])('%s defines no script', (text) => {
    expect(readScripts(text, ['test', 'length'])).toEqual({ test: null, length: null });
  });
});

describe('putting pinned scripts and keys back', () => {
  const pkg = (o: object) => JSON.stringify({ name: 'x', ...o });
  it('a script pinned as absent is removed, not set to null', () => {
    const r = applyScriptPins(pkg({ scripts: { test: 'vitest', pretest: 'rm -rf test' } }), {
      test: 'vitest',
      pretest: null,
    });
    expect(JSON.parse(r.text!)).toEqual({ name: 'x', scripts: { test: 'vitest' } });
  });

  it('a value that is not a string is not a script: nothing to remove', () => {
    expect(applyScriptPins(pkg({ scripts: { pretest: 1 } }), { pretest: null })).toEqual({ text: null, changed: [] });
  });

  it('a runner key as pinned is left alone', () => {
    expect(
      applyScriptPins(pkg({ jest: { testMatch: ['a'] } }), {}, { jest: { testMatch: ['a'] }, mocha: null }),
    ).toEqual({ text: null, changed: [] });
  });
});

describe('pinned sections', () => {
  const H = '[tool.pytest.ini_options]';
  it.each([
    ['no file', null, null],
    ['no such section', '[project]\nname = "x"\n', null],
    ['the header indented, with spaces after it', `  ${H}  \naddopts = "-q"\n[x]\n`, `  ${H}  \naddopts = "-q"`],
    ['the first line', `${H}\naddopts = "-q"\n[x]`, `${H}\naddopts = "-q"`],
    ['the last section: up to the end', `[x]\n${H}\naddopts = "-q"\n`, `${H}\naddopts = "-q"\n`],
    ['an empty section before the next', `${H}\n[x]\nk = 1`, H],
    [
      'a [ inside a value is not a header',
      `${H}\naddopts = ["-q"]\ntestpaths = [\n  "tests",\n]\n[x]`,
      `${H}\naddopts = ["-q"]\ntestpaths = [\n  "tests",\n]`,
    ],
    ['an indented header ends it', `${H}\naddopts = "-q"\n  [x]\nk = 1`, `${H}\naddopts = "-q"`],
  ])('%s', (_, text, section) => {
    expect(readSection(text, H)).toBe(section);
  });

  it('a section the plan commit had and the commit lacks is appended after one blank line', () => {
    expect(applySectionPin('[project]\nname = "x"\n\n\n', H, `${H}\naddopts = "-q"`)).toBe(
      `[project]\nname = "x"\n\n${H}\naddopts = "-q"\n`,
    );
    expect(applySectionPin('[project]', H, H)).toBe(`[project]\n\n${H}\n`);
  });

  it('a section the plan commit lacked is removed, the rest kept as it was', () => {
    expect(applySectionPin(`[project]\n${H}\naddopts = "--ignore=tests"\n[x]\nk = 1\n`, H, null)).toBe(
      '[project]\n\n[x]\nk = 1\n',
    );
  });
});
