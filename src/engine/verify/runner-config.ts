// Where each test runner and package manager a check may use reads its configuration, in the order it looks (SPEC §6):
// a file of higher rank silences one of lower rank, so a pinned file is only pinned if every file ranked above it is
// pinned absent. Pure: the table, and what it pins for a plan commit's files and a plan's checks. Sources (checked
// against the tools' documentation): GNU make manual "What Name to Give Your Makefile"; pytest "Configuration"
// (9.0: pytest.toml, .pytest.toml, pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg, searched upwards);
// vitest "Configuring Vitest" (vitest.config.* before vite.config.*); jest "Configuring Jest"; mocha's CONFIG_FILES
// (searched in parent folders); the cargo book "Configuration: hierarchical structure" (every parent folder's
// .cargo/config.toml, `config` before `config.toml`); PHPUnit (phpunit.xml before phpunit.dist.xml and
// phpunit.xml.dist); RSpec "read options from files" (.rspec-local over .rspec).
import path from 'node:path';
import { matchGlobs } from './glob.js';

export interface RunnerConfig {
  runner: string;
  /** The words that start it in a check (`make`, `pytest`); none: it may run behind any command (`npm test`). */
  words?: readonly string[];
  /** Its configuration files, highest precedence first; a name without a slash matches in any folder. */
  files: readonly string[];
  /**
   * Of `files`, project files a story edits (package.json, pyproject.toml, a Makefile): not pinned whole, and not
   * removed when a commit adds one; but the files ranked above one present are pinned absent in its folder.
   * The rest are configuration only: pinned, and pinned absent (a commit that adds one has it removed).
   */
  manifests?: readonly string[];
  /** It also reads these files in every parent folder of where it runs (so above the verification checkout too). */
  upward?: boolean;
  /**
   * Of the configuration-only `files`, those pinned where the plan commit has them but that a commit or setup may add
   * elsewhere (a new package's tsconfig.json, the one `svelte-kit sync` generates; a mock beside a new module).
   */
  mayAdd?: readonly string[];
}

export const RUNNER_CONFIG: readonly RunnerConfig[] = [
  {
    runner: 'make',
    words: ['make', 'gmake'],
    files: ['GNUmakefile', 'makefile', 'Makefile'],
    manifests: ['GNUmakefile', 'makefile', 'Makefile'],
  },
  // npm's user and global files live in HOME and the node install: the checks' HOME is the runner's (check-env.ts).
  { runner: 'npm', files: ['.npmrc', 'node_modules/'] },
  { runner: 'pnpm', files: ['pnpm-workspace.yaml', '.pnpmfile.cjs', '.pnpmfile.mjs', '.npmrc'] },
  // Yarn reads its rc files from the parent folders too (yarnpkg.com/configuration/yarnrc).
  { runner: 'yarn', files: ['.yarnrc.yml', '.yarnrc'], upward: true },
  { runner: 'bun', files: ['bunfig.toml'] },
  { runner: 'node', files: ['node.config.json', '.node-options'] },
  { runner: 'vitest', files: ['vitest.config.*', 'vite.config.*', 'vitest.workspace.*'] },
  // A `__mocks__` folder beside node_modules stands in for a package in every test with no configuration at all (jest
  // "Manual Mocks"), and one beside a module for it where a test mocks it: an added `__mocks__/chai.js` made every
  // assertion pass in an adversarial pass.
  // Added ones are pinned absent only at the root (pins.ts PINNED_ABSENT_GLOBS): one beside a module is used only
  // where a test asks for it.
  {
    runner: 'jest',
    files: ['jest.config.*', '__mocks__/', 'package.json'],
    manifests: ['package.json'],
    mayAdd: ['__mocks__/'],
  },
  // jest's default transform (babel-jest) and @swc/jest apply the project's configuration to every test file, the
  // pinned ones too: a plugin there can take a test's assertions out (babeljs.io "Configure Babel", swc ".swcrc").
  {
    runner: 'babel',
    files: [
      'babel.config.js',
      'babel.config.cjs',
      'babel.config.mjs',
      'babel.config.cts',
      'babel.config.json',
      '.babelrc',
      '.babelrc.js',
      '.babelrc.cjs',
      '.babelrc.mjs',
      '.babelrc.cts',
      '.babelrc.json',
      '.swcrc',
    ],
  },
  {
    runner: 'mocha',
    files: [
      '.mocharc.cjs',
      '.mocharc.js',
      '.mocharc.mjs',
      '.mocharc.yaml',
      '.mocharc.yml',
      '.mocharc.jsonc',
      '.mocharc.json',
      'package.json',
    ],
    manifests: ['package.json'],
    upward: true,
  },
  {
    runner: 'ava',
    files: ['ava.config.js', 'ava.config.cjs', 'ava.config.mjs', 'package.json'],
    manifests: ['package.json'],
  },
  // Type checkers, linters and formatters a check runs (`tsc --noEmit`, `eslint src`, `prettier --check .`): their
  // configuration decides what they check. An adversarial pass turned "strict" off in tsconfig.json and emptied
  // eslint.config.js; their ignore files take files out as surely.
  {
    runner: 'typescript',
    files: ['tsconfig.json', 'tsconfig.*.json', 'jsconfig.json'],
    mayAdd: ['tsconfig.json', 'tsconfig.*.json', 'jsconfig.json'],
  },
  { runner: 'eslint', files: ['eslint.config.*', '.eslintrc', '.eslintrc.*', '.eslintignore'] },
  { runner: 'prettier', files: ['.prettierrc', '.prettierrc.*', 'prettier.config.*', '.prettierignore'] },
  { runner: 'biome', files: ['biome.json', 'biome.jsonc'] },
  { runner: 'playwright', files: ['playwright.config.*'] },
  { runner: 'cypress', files: ['cypress.config.*'] },
  { runner: 'karma', files: ['karma.conf.*'] },
  {
    runner: 'pytest',
    words: ['pytest', 'py.test'],
    files: [
      'pytest.toml',
      '.pytest.toml',
      'pytest.ini',
      '.pytest.ini',
      'pyproject.toml',
      'tox.ini',
      'setup.cfg',
      'conftest.py',
    ],
    manifests: ['pyproject.toml', 'setup.cfg'],
    upward: true,
  },
  {
    runner: 'tox',
    words: ['tox'],
    files: ['tox.ini', 'setup.cfg', 'pyproject.toml', 'tox.toml'],
    manifests: ['setup.cfg', 'pyproject.toml'],
  },
  // Python runs these at start-up, whatever the runner; and bytecode it finds in __pycache__ (or a sourceless .pyc)
  // beside a module runs instead of the module's source when the .pyc says so (an "unchecked" hash-based one).
  { runner: 'python', files: ['sitecustomize.py', 'usercustomize.py', '*.pth', '*.pyc', '__pycache__/'] },
  { runner: 'go', words: ['go'], files: ['go.work', 'go.mod'], manifests: ['go.mod'], upward: true },
  {
    runner: 'cargo',
    words: ['cargo'],
    files: ['**/.cargo/config', '**/.cargo/config.toml', 'rust-toolchain', 'rust-toolchain.toml', 'Cargo.toml'],
    manifests: ['Cargo.toml'],
    upward: true,
  },
  { runner: 'phpunit', words: ['phpunit'], files: ['phpunit.xml', 'phpunit.dist.xml', 'phpunit.xml.dist'] },
  { runner: 'rspec', words: ['rspec'], files: ['.rspec-local', '.rspec', '**/spec/spec_helper.rb'] },
];

/** The configuration-only files of every runner: pinned wherever the plan commit has them. */
export const RUNNER_CONFIG_GLOBS: readonly string[] = [
  ...new Set(RUNNER_CONFIG.flatMap((r) => r.files.filter((f) => !r.manifests?.includes(f)))),
];

/** Of RUNNER_CONFIG_GLOBS, those pinned absent too: one a commit adds is removed (all but each runner's `mayAdd`). */
export const RUNNER_ABSENT_GLOBS: readonly string[] = [
  ...new Set(RUNNER_CONFIG.flatMap((r) => r.files.filter((f) => !r.manifests?.includes(f) && !r.mayAdd?.includes(f)))),
];

/** The runners with project files among their configuration that one simple command (its words) starts. */
export function planRunnersOf(words: readonly string[]): RunnerConfig[] {
  const i = words.findIndex((w) => !/^\w+=/.test(w)); // after `VAR=value` prefixes
  const first = path.posix.basename(words[i] ?? '');
  const module = /^python[\d.]*$/.test(first) && words[i + 1] === '-m' ? words[i + 2] : undefined;
  return RUNNER_CONFIG.filter(
    (r) => r.manifests && r.words && (r.words.includes(first) || (module !== undefined && r.words.includes(module))),
  );
}

// Test runners and tools a check starts with `python -m <module>`, and the packages each imports before any test runs:
// python puts the folder the command runs in first on sys.path, so a module of that name there would run instead.
const PYTHON_RUNNER_MODULES: Readonly<Record<string, readonly string[]>> = {
  // pytest 9's own imports at start (py is its shim of the old library; pygments colours its report).
  pytest: [
    'pytest',
    '_pytest',
    'pluggy',
    'iniconfig',
    'packaging',
    'py',
    'pygments',
    'exceptiongroup',
    'tomli',
    'colorama',
  ],
  unittest: ['unittest'],
  doctest: ['doctest'],
  nose2: ['nose2'],
  nose: ['nose'],
  coverage: ['coverage'],
  tox: ['tox'],
  hypothesis: ['hypothesis'],
  behave: ['behave'],
  green: ['green'],
  ward: ['ward'],
  mypy: ['mypy'],
  pylint: ['pylint'],
  flake8: ['flake8'],
};

/** Where python (python, python3, python3.12, by a path or not) is among a command's words; -1 when it is not. */
function pythonAt(words: readonly string[]): number {
  return words.findIndex((w) => /^python[\d.]*$/.test(path.posix.basename(w)));
}

/**
 * Pure: for one simple command that starts a known test runner or tool with `python -m` (python, python3, python3.12;
 * `-mpytest`; `python -m coverage run -m pytest` names both), the files in the folder it runs in that would be run
 * instead of the runner or a package it imports first: each name as a source file, a compiled one, a package or an
 * extension module. Relative to that folder; empty for any other command.
 */
export function pythonModuleShadows(words: readonly string[]): string[] {
  if (pythonAt(words) < 0) return [];
  const names = [
    ...new Set(
      pythonModulesOf(words).flatMap((m) => (Object.hasOwn(PYTHON_RUNNER_MODULES, m) ? PYTHON_RUNNER_MODULES[m] : [])),
    ),
  ];
  return pythonModuleFiles(names);
}

/**
 * Pure: the modules a Python test runner or tool imports before any test, for one simple command that starts it by its
 * console script (`pytest`, `py.test`, `tox`, `coverage`; after `VAR=value` prefixes) or with `python -m`: a module of
 * one of those names in a folder python searches first (PYTHONPATH) would run instead. Empty for other commands.
 */
export function pythonRunnerModules(words: readonly string[]): string[] {
  const i = launchedAt(words);
  const first = path.posix.basename(words[i] ?? '');
  const started = pythonAt(words) >= 0 ? pythonModulesOf(words) : [first === 'py.test' ? 'pytest' : first];
  return [
    ...new Set(started.flatMap((m) => (Object.hasOwn(PYTHON_RUNNER_MODULES, m) ? PYTHON_RUNNER_MODULES[m] : []))),
  ];
}

// Commands that run the next word as the command, in a project's environment: `env`, and `<tool> run`.
const LAUNCHERS = new Set(['uv', 'poetry', 'pdm', 'hatch', 'pipenv', 'rye']);

/** Where the command a step starts is among its words: after `VAR=value`, `env [VAR=value]`, `uv run` (and the like). */
export function launchedAt(words: readonly string[]): number {
  let i = words.findIndex((w) => !/^\w+=/.test(w));
  for (;;) {
    const w = path.posix.basename(words[i] ?? '');
    if (w === 'env') i = words.findIndex((x, j) => j > i && !/^\w+=/.test(x) && !x.startsWith('-'));
    else if (LAUNCHERS.has(w) && words[i + 1] === 'run') i += 2;
    else return i;
    if (i < 0) return i;
  }
}

/** The modules `python -m` starts in a command (`-m pytest`, `-mpytest`, `-m coverage run -m pytest`), top-level names. */
function pythonModulesOf(words: readonly string[]): string[] {
  return words
    .slice(pythonAt(words) + 1)
    .flatMap((w, i, rest) => (w === '-m' ? [rest[i + 1] ?? ''] : w.startsWith('-m') ? [w.slice(2)] : []))
    .map((m) => m.split('.')[0]);
}

/** Each module name as python finds it in a folder: a source file, a compiled one, a package, an extension module. */
export function pythonModuleFiles(names: readonly string[]): string[] {
  return names.flatMap((n) => [`${n}.py`, `${n}.pyc`, `${n}/__init__.py`, `${n}/__init__.pyc`, `${n}.*so`, `${n}.pyd`]);
}

/** Installed-package metadata python reads in a folder on its path: entry points load plugins (pytest's `pytest11`). */
export const PYTHON_METADATA: readonly string[] = ['*.dist-info/', '*.egg-info/', '*.egg-link'];

/**
 * Pure: for one simple command that runs `python -m <anything>`, what python finds as installed packages in the folder
 * the command runs in (first on its path): package metadata, whose entry points load plugins (pytest's `pytest11`)
 * before any test. Globs relative to that folder. Pinned absent where a commit adds them, not after setup: an
 * editable install makes `<name>.egg-info` there itself.
 */
export function pythonMetadataShadows(words: readonly string[]): string[] {
  const at = pythonAt(words);
  if (at < 0 || !words.slice(at + 1).some((w) => w.startsWith('-m'))) return [];
  return [...PYTHON_METADATA];
}

/**
 * Paths the plan commit lacks that would silence a file it has, for `runners` (those the checks start): in each
 * folder holding a file of a runner's list, the files ranked above it. `files` are the plan commit's.
 */
export function planShadowPaths(files: readonly string[], runners: readonly RunnerConfig[]): string[] {
  const present = new Set(files);
  const out = new Set<string>();
  for (const r of runners) {
    for (const file of files) {
      const rank = r.files.indexOf(path.posix.basename(file));
      const dir = path.posix.dirname(file);
      for (const above of rank < 0 ? [] : r.files.slice(0, rank)) {
        const candidate = dir === '.' ? above : `${dir}/${above}`;
        if (!above.includes('*') && !present.has(candidate)) out.add(candidate);
      }
    }
  }
  return [...out].sort();
}

// Files the upward runners read that a project of that kind always has at its own root, where the search then stops
// for them (go.mod: go takes the nearest); such a file above the checkout matters only as a root that takes the
// folders below it in (ABOVE_ROOTS).
const OWN_ROOT_FILES: readonly string[] = ['package.json', 'go.mod', 'Cargo.toml'];

/** File names a runner reads from the parent folders of where it runs: each must be absent above a checkout. */
export const UPWARD_FILES: readonly string[] = [
  ...new Set([
    ...RUNNER_CONFIG.filter((r) => r.upward).flatMap((r) =>
      r.files.filter((f) => !OWN_ROOT_FILES.includes(f) && !f.includes('*', 3)).map((f) => f.replace(/^\*\*\//, '')),
    ),
    // pytest takes the folder of a setup.py above as its rootdir when it finds no configuration file, and loads the
    // conftest.py files from there down; pnpm takes the folder of a pnpm-workspace.yaml as its workspace's root.
    'setup.py',
    'pnpm-workspace.yaml',
    // npm puts every node_modules/.bin from the project up to the root on a script's PATH (a `node` there runs
    // `npm test`); a node_modules without one is only read by a require the diff shows.
    'node_modules/.bin',
    // ESLint 8 merges every .eslintrc up to the root (unless one says root: true).
    '.eslintrc',
    '.eslintrc.js',
    '.eslintrc.cjs',
    '.eslintrc.json',
    '.eslintrc.yaml',
    '.eslintrc.yml',
  ]),
];

/**
 * Files tools take from the nearest folder up that has one (each group one tool's names): tsc, tsx, vitest and
 * esbuild a tsconfig.json (a jsconfig.json for JavaScript), ESLint 9 its eslint.config, prettier its configuration,
 * Biome and Deno theirs. Above a checkout one is read only where the checkout has none of the group at its root.
 */
export const NEAREST_FILES: readonly (readonly string[])[] = [
  ['tsconfig.json'],
  ['jsconfig.json'],
  [
    'eslint.config.js',
    'eslint.config.mjs',
    'eslint.config.cjs',
    'eslint.config.ts',
    'eslint.config.mts',
    'eslint.config.cts',
  ],
  [
    '.prettierrc',
    '.prettierrc.json',
    '.prettierrc.yaml',
    '.prettierrc.yml',
    '.prettierrc.json5',
    '.prettierrc.js',
    '.prettierrc.cjs',
    '.prettierrc.mjs',
    '.prettierrc.toml',
    'prettier.config.js',
    'prettier.config.cjs',
    'prettier.config.mjs',
  ],
  ['biome.json', 'biome.jsonc'],
  ['deno.json', 'deno.jsonc'],
];

/**
 * Roots that tools walking up look for above a project whatever the project has at its own root, refused above a
 * checkout when they take the folders below them in: a package.json with `workspaces` (npm and yarn then take that
 * folder as the project: its .npmrc, its script-shell) or `mocha` settings, a Cargo.toml with `[workspace]`. A
 * package.json without them (your home's, say) changes nothing for a checkout that has its own.
 */
export const ABOVE_ROOTS: ReadonlyArray<{ name: string; takesIn: (text: string) => boolean }> = [
  {
    name: 'package.json',
    takesIn: (text) => {
      try {
        const pkg: unknown = JSON.parse(text);
        return typeof pkg !== 'object' || pkg === null || 'workspaces' in pkg || 'mocha' in pkg;
      } catch {
        return true;
      }
    },
  },
  { name: 'Cargo.toml', takesIn: (text) => /^\s*\[workspace\]/m.test(text) },
];

/** The files of `names` (repository paths) that the configuration-only globs match. */
export function matchRunnerConfig(names: readonly string[]): string[] {
  return matchGlobs(names, RUNNER_CONFIG_GLOBS);
}
