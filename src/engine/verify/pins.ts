// Pinned tests (SPEC §6): a check runs with the test files and check inputs as they were at the plan commit, so an
// agent cannot make a check pass by weakening it. Pure: which files are pinned, which package.json scripts a
// check resolves to, and how to put a pinned script definition back into a manifest the agent may have edited.
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import { matchGlobs } from './glob.js';
import {
  planRunnersOf,
  planShadowPaths,
  pythonMetadataShadows,
  pythonModuleShadows,
  pythonModuleFiles,
  pythonRunnerModules,
  PYTHON_METADATA,
  launchedAt,
  RUNNER_ABSENT_GLOBS,
  RUNNER_CONFIG_GLOBS,
} from './runner-config.js';

/**
 * Conventional test locations, pinned unless the plan says `"protectDefaults": false` (the configuration that decides
 * how they run is in PINNED_ABSENT_GLOBS: excluding a test there silences it as surely as deleting it).
 */
export const DEFAULT_PINNED_GLOBS: readonly string[] = [
  'test/',
  'tests/',
  '__tests__/',
  'spec/',
  'e2e/',
  '*.test.*',
  '*.spec.*',
  '*_test.*',
  'test_*.py',
  'phpunit.xml*',
];

/**
 * Files that change how a check runs without being a test: package-manager settings (`.npmrc` can hand node an
 * `--import` that makes every test pass), committed `node_modules/` (npm puts its .bin first on PATH), test-runner
 * configuration and interpreter start-up hooks: the configuration-only files of runner-config.ts's table. Pinned
 * including their absence: one the plan commit did not have is removed from the verification checkout (new test
 * files, by contrast, are welcome and run).
 */
export const PINNED_ABSENT_GLOBS: readonly string[] = [
  ...RUNNER_ABSENT_GLOBS,
  // jest's mocks of node_modules packages, used in every test with no configuration: added ones only at the root.
  '__mocks__/**',
];

/**
 * The keys of test-runner configuration whose values name files the runner loads into every test run: jest's and
 * vitest's setup and environment files, mocha's `require`, a tsconfig's `extends`. A file such a key names at the
 * plan commit is pinned with the configuration that names it (an adversarial pass made jest's `setupFilesAfterEnv`
 * file turn `expect` into a no-op: the config was pinned, the file it named was not). The value: a list, an object, a
 * quoted string, a YAML block list or a bare scalar.
 */
const LOADED_FILE_KEYS =
  /\b(setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|testEnvironment|environment|snapshotResolver|testSequencer|testResultsProcessor|resolver|runner|dependencyExtractor|require|extends|setup|reporters|transform)\b["']?[ \t]*[:=][ \t]*(\[[^\]]*\]|\{[^}]*\}|"[^"]*"|'[^']*'|`[^`]*`|\n(?:[ \t]*-[ \t]*[^\n]+\n?)+|[^\s,;{}[\]]+)/g;

/** Tree modes a PATH lookup runs: an executable file, or a link (to one). */
const RUNNABLE_MODES: ReadonlySet<string> = new Set(['100755', '120000']);

/**
 * Whether `file` is a program a PATH lookup in one of `folders` finds: directly in it, as an executable or a link.
 * `mode` is its mode in a commit's tree.
 */
export function isPathProgram(file: string, mode: string | undefined, folders: readonly string[]): boolean {
  if (!mode || !RUNNABLE_MODES.has(mode)) return false;
  const dir = path.posix.dirname(file);
  return folders.includes(dir === '.' ? '' : dir);
}

/** A file make reads as a makefile: GNU make's names for one, or an included `.mk`. */
export function isMakefile(file: string): boolean {
  return /^(GNUmakefile|[Mm]akefile|.*\.mk)$/.test(path.posix.basename(file));
}

/**
 * Files a pinned configuration file (`file`, its plan-commit `text`) has its runner load, among the committed `files`:
 * what LOADED_FILE_KEYS name as a path (`./`, `../` or `<rootDir>/`, resolved from the file's folder, with or without
 * its extension; a bare name is a package, the agent's dependency code anyway), the modules pytest's `-p` and
 * `pytest_plugins` name, and the files a makefile includes. `absent`: what a makefile's optional `-include` names
 * that the plan commit lacks (one a commit adds is removed; one setup generates is not). Pure.
 */
export function planConfigLoads(
  file: string,
  text: string,
  files: readonly string[],
): { pinned: string[]; absent: string[] } {
  const dir = path.posix.dirname(file) === '.' ? '' : path.posix.dirname(file);
  const present = new Set(files);
  const at = (name: string) => path.posix.normalize(dir ? `${dir}/${name}` : name);
  const inside = (f: string) => !f.startsWith('..') && !path.posix.isAbsolute(f);
  const pinned: string[] = [];
  const absent: string[] = [];
  if (isMakefile(file)) {
    for (const m of text.matchAll(/^[ \t]*(-include|sinclude|include)[ \t]+([^\n#]+)/gm))
      for (const word of m[2].trim().split(/\s+/)) {
        if (word.includes('$') || word.includes('*')) continue;
        const f = at(word);
        if (!inside(f)) continue;
        if (present.has(f)) pinned.push(f);
        else if (m[1] !== 'include') absent.push(f);
      }
    return { pinned, absent };
  }
  const specifiers: string[] = [];
  for (const m of text.matchAll(LOADED_FILE_KEYS)) {
    const value = m[2];
    const quoted = [...value.matchAll(/["'`]([^"'`\n]+)["'`]/g)].map((q) => q[1]);
    const listed = [...value.matchAll(/^[ \t]*-[ \t]*([^\s"'`]+)[ \t]*$/gm)].map((q) => q[1]);
    specifiers.push(...quoted, ...listed, ...(/^[^\s"'`[{]/.test(value) ? [value] : []));
  }
  for (const spec of specifiers) {
    const rel = spec.replace(/^<rootDir>\//, './');
    const f = at(rel);
    if (!inside(f)) continue;
    if (present.has(f) && (rel.startsWith('./') || rel.startsWith('../') || rel.includes('/'))) pinned.push(f);
    else if (rel.startsWith('./') || rel.startsWith('../')) {
      // `./setup` without its extension: the committed file it resolves to.
      const withExt = files.find((g) => g.startsWith(`${f}.`) && /\.[cm]?[jt]sx?$/.test(g));
      if (withExt) pinned.push(withExt);
    }
  }
  // pytest: `-p name` in addopts (`-p name`, `-pname`, `"-p", "name"`), and pytest_plugins, name modules of the project.
  const modules = [
    ...[...text.matchAll(/(?:^|[\s"'=[,])-p(?:\s*|["'],\s*["'])([\w.]+)/gm)].map((m) => m[1]),
    ...[...text.matchAll(/pytest_plugins\s*=\s*(\[[^\]]*\]|\([^)]*\)|"[^"]*"|'[^']*')/g)].flatMap((m) =>
      [...m[1].matchAll(/["']([\w.]+)["']/g)].map((q) => q[1]),
    ),
  ];
  for (const mod of modules) {
    if (mod.startsWith('no:')) continue;
    const base = mod.replace(/\./g, '/');
    for (const f of [`${base}.py`, `${base}/__init__.py`, `src/${base}.py`, `src/${base}/__init__.py`].map(at))
      if (present.has(f)) pinned.push(f);
  }
  return { pinned: [...new Set(pinned)], absent: [...new Set(absent)] };
}

/** The files (of those committed at the plan commit, `files`) that are pinned for this plan. */
export function planPinnedPaths(files: readonly string[], prd: Prd): string[] {
  const globs = [
    ...(prd.protectDefaults === false ? [] : [...DEFAULT_PINNED_GLOBS, ...RUNNER_CONFIG_GLOBS]),
    ...(prd.protect ?? []),
  ];
  const named = [...allChecks(prd), ...(prd.setup ? [prd.setup] : [])].flatMap((c) => planNamedPaths(c, files));
  const make = allChecks(prd).flatMap((c) => planMakefiles(c, files));
  return [...new Set([...matchGlobs(files, globs), ...named, ...make])].sort();
}

/**
 * Of the files a commit added, those whose absence the plan commit pins (PINNED_ABSENT_GLOBS, and the paths `absent`,
 * a path with a `*` being a glob).
 */
export function matchAbsent(added: readonly string[], absent: readonly string[] = []): string[] {
  const named = new Set(absent);
  const globs = absent.filter((a) => a.includes('*'));
  return added.filter((f) => named.has(f) || matchGlobs([f], [...PINNED_ABSENT_GLOBS, ...globs]).length > 0);
}

/** The paths whose absence is pinned in what a commit adds: both lists of the pins (absentPaths, committedAbsent). */
export function absentInCommits(pins: { absentPaths?: string[]; committedAbsent?: string[] }): string[] {
  return [...(pins.absentPaths ?? []), ...(pins.committedAbsent ?? [])];
}

/**
 * Paths whose absence the plan commit pins beyond the globs: for the runners the checks start (make, pytest, go,
 * cargo, tox), the files of higher rank than one the plan commit has, in its folder (a `GNUmakefile` beside the
 * pinned `Makefile`, a `pytest.toml` beside `pyproject.toml`); for a check that runs `python -m pytest`, a
 * `pytest.py` or `pytest/__init__.py` (any known runner so started) in the folder it runs in, which python would run
 * instead; for `make test`, a file named `test` in make's folder, which makes make take the target for done.
 */
export function planAbsentPaths(
  files: readonly string[],
  prd: Prd,
  read: (file: string) => string | null = () => null,
  scripts: ReadonlyArray<{ dir: string; command: string }> = [],
  pythonPath: readonly string[] = [],
): string[] {
  const steps = checkSteps(prd, scripts);
  const runners = [...new Set(steps.flatMap((s) => planRunnersOf(s.words)))];
  return [
    ...new Set([
      ...planShadowPaths(files, runners),
      ...inFolders(steps, files, pythonModuleShadows),
      ...inSearchFolders(steps, files, pythonPath, (w) => pythonModuleFiles(pythonRunnerModules(w))),
      ...makeTargets(steps, files, read),
    ]),
  ].sort();
}

/**
 * What `shadows` names for each step in each folder python searches first for it: the loop's PYTHONPATH folders inside
 * the repository (`pythonPath`, relative: a check gets them in its checkout) and those a `PYTHONPATH=` before the
 * command names (relative to the step's folder); the ones `files` lacks. An adversarial pass committed `src/pytest.py`
 * with PYTHONPATH=src: pytest's console script imported it instead of pytest.
 */
function inSearchFolders(
  steps: Step[],
  files: readonly string[],
  pythonPath: readonly string[],
  shadows: (words: readonly string[]) => string[],
): string[] {
  const present = new Set(files);
  return steps.flatMap((s) => {
    const names = shadows(s.words);
    if (!names.length) return [];
    const folders = [...pythonPath, ...assignedPythonPath(s)].filter((d) => !d.startsWith('..'));
    return [...new Set(folders)].flatMap((dir) =>
      names
        .map((f) => (dir ? `${dir}/${f}` : f))
        .filter((f) => !present.has(f) && !(f.includes('*') && matchGlobs(files, [f]).length)),
    );
  });
}

/** The relative folders a `PYTHONPATH=a:b` before a step's command names, from the repository's top. */
function assignedPythonPath(step: Step): string[] {
  const i = launchedAt(step.words);
  return step.words
    .slice(0, i < 0 ? step.words.length : i)
    .filter((w) => w.startsWith('PYTHONPATH='))
    .flatMap((w) => w.slice('PYTHONPATH='.length).split(':'))
    .filter((d) => d && !path.posix.isAbsolute(d))
    .map((d) => joinDir(step.cwd, d));
}

/**
 * Paths whose absence is pinned only in what a commit adds (not after setup, which makes some of them): package
 * metadata in the folder of a `python -m` check (pythonMetadataShadows).
 */
export function planCommittedAbsentPaths(
  files: readonly string[],
  prd: Prd,
  scripts: ReadonlyArray<{ dir: string; command: string }> = [],
  pythonPath: readonly string[] = [],
): string[] {
  const steps = checkSteps(prd, scripts);
  return [
    ...new Set([
      ...inFolders(steps, files, pythonMetadataShadows),
      ...inSearchFolders(steps, files, pythonPath, (w) => (pythonRunnerModules(w).length ? [...PYTHON_METADATA] : [])),
    ]),
  ].sort();
}

/** The checks' own commands, and the pinned scripts they run (`"test": "make check"`) in their package's folder. */
function checkSteps(prd: Prd, scripts: ReadonlyArray<{ dir: string; command: string }>): Step[] {
  return [
    ...allChecks(prd).flatMap((c) => planSteps(c)),
    ...scripts.flatMap(({ dir, command }) => planSteps(command).map((s) => ({ ...s, cwd: joinDir(dir, s.cwd) }))),
  ].map(unquoted);
}

/** A step's words without the quotes around them: `sh -c 'make check'` runs make as much as `make check` does. */
function unquoted(step: Step): Step {
  return { ...step, words: step.words.map((w) => w.replace(/^['"]+|['"]+$/g, '')) };
}

/** What `shadows` names for each step, in the step's folder (not one above the repository), that `files` lacks. */
function inFolders(steps: Step[], files: readonly string[], shadows: (words: readonly string[]) => string[]): string[] {
  const present = new Set(files);
  return steps.flatMap((s) =>
    s.cwd.startsWith('..')
      ? []
      : shadows(s.words)
          .map((f) => (s.cwd ? `${s.cwd}/${f}` : f))
          .filter((f) => !present.has(f) && !(f.includes('*') && matchGlobs(files, [f]).length)),
  );
}

/**
 * The targets a `make` step names, and every target its makefile has a rule for under a bare name (`read`: the plan
 * commit's text of a file), as files in make's folder (`-C`) that `files` lacks: a file of a target's name makes make
 * take the target, and so the default one or a prerequisite of the one named, for done.
 */
function makeTargets(steps: Step[], files: readonly string[], read: (file: string) => string | null): string[] {
  const present = new Set(files);
  return steps.flatMap((step) => {
    const run = makeRun(step);
    if (!run || run.dir.startsWith('..')) return [];
    const { dir, rest } = run;
    const makefile = makefilesIn(dir).find((f) => present.has(f));
    const text = makefile ? read(makefile) : null;
    // Of the makefile's own targets, the bare names (`check`, `unit`): a path or a file name with an extension is
    // usually an output the project may commit (`dist/index.js`), which other checks may read as it is.
    const own = text === null ? [] : makefileTargets(text).filter((t) => /^[\w-]+$/.test(t));
    return [...rest.filter((t) => !t.includes('=')), ...own]
      .filter((t) => /^[\w.-]+(\/[\w.-]+)*$/.test(t) && !t.split('/').some((p) => p === '.' || p === '..'))
      .map((t) => (dir ? `${dir}/${t}` : t))
      .filter((f) => !present.has(f));
  });
}

/**
 * Pure: the explicit targets of a makefile's rules (`check test: lint`, `build/app.js:`), special targets (`.PHONY`) and
 * pattern rules (`%.o:`) aside, and none with a variable in it. Recipes (lines starting with a tab) are not read.
 */
export function makefileTargets(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^([^\t#:=][^#:=]*?)\s*::?(?![:=])/.exec(line);
    if (!m) continue;
    for (const t of m[1].trim().split(/\s+/))
      if (t && !t.includes('%') && !t.includes('$') && !/^\.[A-Z_]+$/.test(t)) out.add(t);
  }
  return [...out];
}

// What npm, pnpm, yarn and bun run around an install of the project itself (its own package.json, not a dependency's),
// and npm's `dependencies`, run after an install that changed node_modules (npm 8 and later). setup-key.ts keys the
// setup cache on the same list.
export const LIFECYCLE_SCRIPTS: readonly string[] = [
  'preinstall',
  'install',
  'postinstall',
  'prepublish',
  'preprepare',
  'prepare',
  'postprepare',
  'dependencies',
];
const INSTALL_VERBS: readonly string[] = ['ci', 'install', 'i', 'add', 'clean-install', 'install-clean', 'isntall'];

/**
 * The lifecycle scripts a `setup` line runs, with the folder of their package.json: an install (`npm ci`, `npm
 * install`, `pnpm install`, `yarn`, `bun install`) runs the project's own `preinstall` ... `postprepare`.
 */
export function planSetupScripts(setup: string | undefined): Array<{ dir: string; name: string }> {
  const out: Array<{ dir: string; name: string }> = [];
  for (const { cwd, words } of setup ? planSteps(setup) : []) {
    const at = words.findIndex((w) => PACKAGE_MANAGERS.includes(w));
    if (at < 0) continue;
    const { dir, rest } = folderFlags(cwd, words.slice(at + 1), /^(--prefix|-C|--dir|--cwd)(?:=(.*))?$/, false);
    if (rest.length && !INSTALL_VERBS.includes(rest[0])) continue;
    if (!rest.length && words[at] !== 'yarn') continue;
    for (const name of LIFECYCLE_SCRIPTS)
      if (!out.some((o) => o.dir === dir && o.name === name)) out.push({ dir, name });
  }
  return out;
}

/** Every check command of the plan: the plan's own and each story's. */
export function allChecks(prd: Pick<Prd, 'checks' | 'userStories'>): string[] {
  return [...new Set([...(prd.checks ?? []), ...prd.userStories.flatMap((s) => s.checks ?? [])])];
}

/**
 * Committed files a command names: a word that is a file path (`sh scripts/check.sh`, `node --test test/a.test.mjs`:
 * the check's own input), and, for a word that names a folder (`node --test src/`, `go test ./pkg`), the test files
 * in it. The rest of a named folder is the implementation the story is there to change. Quotes and shell
 * punctuation are word breaks.
 */
export function planNamedPaths(command: string, files: readonly string[]): string[] {
  const words = command.split(/[\s;&|()<>"'`=]+/).map((w) => path.posix.normalize(w).replace(/\/$/, ''));
  const out: string[] = [];
  for (const w of new Set(words)) {
    if (files.includes(w)) out.push(w);
    else
      out.push(
        ...matchGlobs(
          files.filter((f) => f.startsWith(`${w}/`)),
          TEST_FILE_GLOBS,
        ),
      );
  }
  return out;
}

// What counts as a test file inside a folder a check names.
const TEST_FILE_GLOBS: readonly string[] = [
  '*.test.*',
  '*.spec.*',
  '*_test.*',
  'test_*.py',
  'conftest.py',
  'test/',
  'tests/',
  '__tests__/',
  'spec/',
];

/** One simple command of a check line: its words, and the folder it runs in. */
interface Step {
  cwd: string;
  words: string[];
}

/**
 * The simple commands of a check line, split at `&&`, `||`, `;`, `&`, `|` and newlines, each with the folder a
 * `cd` before it moved to (relative to the repository root; `..` outside it stays `..`). A `cd` inside `( … )`
 * ends with the subshell.
 */
export function planSteps(command: string): Step[] {
  const steps: Step[] = [];
  const outer: string[] = [];
  let cwd = '';
  let words: string[] = [];
  const end = () => {
    if (words[0] === 'cd' && words[1]) cwd = joinDir(cwd, words[1]);
    else if (words.length) steps.push({ cwd, words });
    words = [];
  };
  for (const token of command.match(/&&|\|\||[;&|()\n]|[^\s;&|()]+/g) ?? []) {
    if (!/^[;&|()\n]/.test(token)) {
      words.push(token);
      continue;
    }
    end();
    if (token === '(') outer.push(cwd);
    if (token === ')') cwd = outer.pop() ?? cwd;
  }
  end();
  return steps;
}

/**
 * package.json scripts a check command runs, with the folder of the package.json: `npm test`, `npm t`, `npm run x`,
 * `npm run-script x`, `yarn x`, `yarn run x`, `pnpm x`, `pnpm run x`, `bun run x`; in another folder with
 * `npm --prefix app`, `npm -w app` / `--workspace app`, `pnpm -C app`, `yarn --cwd app`, or a `cd app &&` before it.
 * npm also runs `pre<x>` and `post<x>` around a script, so those are pinned with it.
 */
export function planScriptNames(command: string): Array<{ dir: string; name: string }> {
  const out: Array<{ dir: string; name: string }> = [];
  for (const step of planSteps(command)) {
    const script = scriptOf(step);
    if (!script) continue;
    const { dir, name } = script;
    for (const n of [name, `pre${name}`, `post${name}`])
      if (!out.some((o) => o.dir === dir && o.name === n)) out.push({ dir, name: n });
  }
  return out;
}

const PACKAGE_MANAGERS: readonly string[] = ['npm', 'yarn', 'pnpm', 'bun'];
// yarn and pnpm run a script named by the first word, unless it is one of these commands of their own.
const NOT_SCRIPTS: readonly string[] = ['install', 'add', 'exec', 'dlx', 'i', 'ci', 'x'];

/** The script one simple command runs, and the folder of its package.json; null when it runs none. */
function scriptOf({ cwd, words }: Step): { dir: string; name: string } | null {
  const at = words.findIndex((w) => PACKAGE_MANAGERS.includes(w));
  if (at < 0) return null;
  const tool = words[at];
  const { dir, rest } = folderFlags(
    cwd,
    words.slice(at + 1),
    /^(--prefix|-C|--dir|--cwd|-w|--workspace|--filter)(?:=(.*))?$/,
    false,
  );
  const [verb, arg] = rest;
  let name: string | undefined;
  if (verb === 'test' || verb === 't') name = 'test';
  else if (verb === 'start') name = 'start';
  else if (verb === 'run' || verb === 'run-script') name = arg;
  else if ((tool === 'yarn' || tool === 'pnpm') && verb && !NOT_SCRIPTS.includes(verb)) name = verb;
  return name ? { dir, name } : null;
}

/**
 * The folder `args` move to with the flags `flag` matches (`-C dir`, `-C=dir`), relative to `cwd`: the last one for a
 * package manager, each relative to the one before for make (`-C a -C b` is a/b). And the words that are not options.
 */
function folderFlags(
  cwd: string,
  args: readonly string[],
  flag: RegExp,
  cumulative: boolean,
): { dir: string; rest: string[] } {
  let dir = cwd;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = flag.exec(args[i]);
    if (m) {
      const value = m[2] ?? args[++i];
      if (value) dir = joinDir(cumulative ? dir : cwd, value);
    } else if (!args[i].startsWith('-')) rest.push(args[i]);
  }
  return { dir, rest };
}

/**
 * The makefiles a check that runs `make` (or `gmake`) reads, of `files`: GNUmakefile, makefile and Makefile in the folder it runs
 * in (`cd app &&`, `make -C app`, `--directory=app`; `base`: the folder the command starts in, a script's package's).
 * Pinned whole: a recipe is not parsed here.
 */
export function planMakefiles(command: string, files: readonly string[], base = ''): string[] {
  const out: string[] = [];
  for (const step of planSteps(command).map((s) => unquoted({ ...s, cwd: joinDir(base, s.cwd) }))) {
    const run = makeRun(step);
    if (run) out.push(...makefilesIn(run.dir).filter((f) => files.includes(f)));
  }
  return out;
}

/** The names GNU make goes by: `gmake` where the system's own make is another. */
const MAKES = ['make', 'gmake'];

/**
 * The folder make runs in for one simple command (`cd app &&`, `make -C app`, `--directory=app`) and its other words
 * (targets, assignments); null when the command starts no make (by name or path: `/usr/bin/make`).
 */
function makeRun({ cwd, words }: Step): { dir: string; rest: string[] } | null {
  const at = words.findIndex((w) => MAKES.includes(w.slice(w.lastIndexOf('/') + 1)));
  return at < 0 ? null : folderFlags(cwd, words.slice(at + 1), /^(-C|--directory)(?:=?(.+))?/, true);
}

/** The makefiles make looks for in `dir`, in its order. */
function makefilesIn(dir: string): string[] {
  return ['GNUmakefile', 'makefile', 'Makefile'].map((n) => (dir ? `${dir}/${n}` : n));
}

function joinDir(base: string, dir: string): string {
  const joined = path.posix.join(base, dir).replace(/\/$/, '');
  return joined === '.' ? '' : joined;
}

/**
 * Top-level package.json keys that configure a test runner: pinned with the scripts, so tests cannot be excluded there.
 * `babel` configures the transform jest runs every test through; `bin` and `directories` are what `npx <name>` runs
 * first, ahead of node_modules/.bin (a package's own `"bin": {"jest": ...}` stood in for jest in a check).
 */
export const RUNNER_KEYS: readonly string[] = [
  'jest',
  'mocha',
  'ava',
  'c8',
  'nyc',
  'tap',
  'babel',
  'bin',
  'directories',
  // prettier reads its `prettier` key before a .prettierrc; ESLint 8 its `eslintConfig`, and `eslintIgnore` where no
  // .eslintignore is.
  'prettier',
  'eslintConfig',
  'eslintIgnore',
];

/** The definitions of `names` in a package.json text (null where the script is not defined). */
export function readScripts(packageJson: string | null, names: readonly string[]): Record<string, string | null> {
  // A `scripts` that is not an object (a string, a number) has no string members either.
  const table = (readObject(packageJson).scripts ?? {}) as Record<string, unknown>;
  return Object.fromEntries(names.map((n) => [n, typeof table[n] === 'string' ? (table[n] as string) : null]));
}

/** The test-runner keys of a package.json text (null where absent). */
export function readRunnerKeys(packageJson: string | null): Record<string, unknown> {
  const doc = readObject(packageJson);
  return Object.fromEntries(RUNNER_KEYS.map((k) => [k, k in doc ? doc[k] : null]));
}

function readObject(text: string | null): Record<string, unknown> {
  try {
    const v = text ? (JSON.parse(text) as unknown) : {};
    // An array has no `scripts` and no runner key, like an empty object.
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    // A manifest that is not JSON defines nothing; npm cannot run it either.
    return {};
  }
}

/**
 * `current` (the claimed commit's package.json) with the pinned script definitions and runner keys put back;
 * everything else the agent changed (dependencies, other scripts) stays. Returns what differed (`scripts.test`,
 * `jest`), and the new text, or null text when nothing did.
 */
export function applyScriptPins(
  current: string,
  pinned: Record<string, string | null>,
  keys: Record<string, unknown> = {},
): { text: string | null; changed: string[] } {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(current) as Record<string, unknown>;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return { text: null, changed: [] };
  } catch {
    // Not JSON any more: npm cannot run it either, so the check fails on its own; nothing to pin into.
    return { text: null, changed: [] };
  }
  const scripts: Record<string, unknown> =
    doc.scripts && typeof doc.scripts === 'object' ? { ...(doc.scripts as Record<string, unknown>) } : {};
  const changed: string[] = [];
  for (const [name, value] of Object.entries(pinned)) {
    const now = typeof scripts[name] === 'string' ? scripts[name] : null;
    if (now === value) continue;
    changed.push(`scripts.${name}`);
    if (value === null) delete scripts[name];
    else scripts[name] = value;
  }
  const next: Record<string, unknown> = { ...doc, ...(Object.keys(pinned).length ? { scripts } : {}) };
  for (const [key, value] of Object.entries(keys)) {
    if (JSON.stringify(key in doc ? doc[key] : null) === JSON.stringify(value)) continue;
    changed.push(key);
    if (value === null) delete next[key];
    else next[key] = value;
  }
  if (!changed.length) return { text: null, changed };
  return { text: `${JSON.stringify(next, null, 2)}\n`, changed };
}

/** Sections of shared configuration files that configure pytest: pinned, while the rest of the file (dependencies) is the story's. */
export const PINNED_SECTIONS: ReadonlyArray<{ file: string; header: string }> = [
  { file: 'pyproject.toml', header: '[tool.pytest.ini_options]' },
  { file: 'pyproject.toml', header: '[tool.pytest]' },
  { file: 'setup.cfg', header: '[tool:pytest]' },
];

/** The text of section `header` in an INI/TOML file (up to the next header), or null when it has none. */
export function readSection(text: string | null, header: string): string | null {
  if (text === null) return null;
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === header);
  if (start < 0) return null;
  const body = lines.slice(start + 1);
  const next = body.findIndex((l) => /^\s*\[/.test(l));
  return [lines[start], ...(next < 0 ? body : body.slice(0, next))].join('\n');
}

/** `text` with section `header` replaced by `pinned` (removed when null, appended when missing); null when unchanged. */
export function applySectionPin(text: string, header: string, pinned: string | null): string | null {
  const now = readSection(text, header);
  if (now === pinned) return null;
  if (now === null) return `${text.replace(/\n*$/, '\n')}\n${pinned}\n`;
  return text.replace(now, pinned ?? '');
}

// Lockfiles at the repository root and the setup line each calls for (SPEC §6: a fresh checkout has no dependencies).
const LOCKFILES: ReadonlyArray<[string, string]> = [
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
];

/**
 * The warning for a plan whose checks run in fresh checkouts without a `setup`, in a repository with a lockfile:
 * those checkouts have no installed dependencies. Null when there is nothing to say.
 */
export function renderSetupWarning(files: readonly string[], prd: Prd): string | null {
  if (prd.setup || !allChecks(prd).length) return null;
  const found = LOCKFILES.find(([f]) => files.includes(f));
  if (!found) return null;
  return `the plan has no "setup", but ${found[0]} says this project installs dependencies: checks run in a fresh checkout of each commit, which has none; add this line to prd.json: "setup": "${found[1]}", (or run the checks in the working tree with --verify-in-place)`;
}
