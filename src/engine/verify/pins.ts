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
import { joinDir, makeRun, makefilesIn, planMakefiles, planSteps, type Step, unquoted } from './check-steps.js';

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
  return steps.flatMap((s) => missingIn(files, [...pythonPath, ...assignedPythonPath(s)], shadows(s.words)));
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

/** What `shadows` names for each step, in the step's folder (not one above the repository), that `files` lacks. */
function inFolders(steps: Step[], files: readonly string[], shadows: (words: readonly string[]) => string[]): string[] {
  return steps.flatMap((s) => missingIn(files, [s.cwd], shadows(s.words)));
}

/** Each of `names` in each of `folders` (relative to the top; none above it) that `files` lacks; a glob, when none matches. */
function missingIn(files: readonly string[], folders: readonly string[], names: readonly string[]): string[] {
  if (!names.length) return [];
  const present = new Set(files);
  return [...new Set(folders)]
    .filter((dir) => !dir.startsWith('..'))
    .flatMap((dir) => names.map((f) => (dir ? `${dir}/${f}` : f)))
    .filter((f) => !present.has(f) && !(f.includes('*') && matchGlobs(files, [f]).length));
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
