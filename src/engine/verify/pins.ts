// Pinned tests (SPEC §6): a check runs with the test files and check inputs as they were at the plan commit, so an
// agent cannot make a check pass by weakening it. Pure: which files are pinned, which package.json scripts a
// check resolves to, and how to put a pinned script definition back into a manifest the agent may have edited.
import type { Prd } from '../../prd/types.js';
import { matchGlobs } from './glob.js';

/**
 * Conventional test locations, pinned unless the plan says `"protectDefaults": false` (the configuration that decides
 * how they run is in PINNED_ABSENT_GLOBS: excluding a test there silences it as surely as deleting it).
 */
export const DEFAULT_PINNED_GLOBS: readonly string[] = [
  'test/', 'tests/', '__tests__/', 'spec/', 'e2e/',
  '*.test.*', '*.spec.*', '*_test.*', 'test_*.py', '*_test.go', 'phpunit.xml*',
];

/**
 * Files that change how a check runs without being a test: package-manager settings (`.npmrc` can hand node an
 * `--import` that makes every test pass), committed `node_modules/` (npm puts its .bin first on PATH), test-runner
 * configuration and interpreter start-up hooks. Pinned including their absence: one the plan commit did not have is
 * removed from the verification checkout (new test files, by contrast, are welcome and run).
 */
export const PINNED_ABSENT_GLOBS: readonly string[] = [
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs', 'bunfig.toml', 'node_modules/', '.node-options',
  'vitest.config.*', 'vitest.workspace.*', 'vite.config.*', 'jest.config.*', '.mocharc*', 'playwright.config.*', 'cypress.config.*',
  'karma.conf.*', 'ava.config.*', 'pytest.ini', 'tox.ini', 'conftest.py', 'sitecustomize.py', 'usercustomize.py', '*.pth',
];

/** The files (of those committed at the plan commit, `files`) that are pinned for this plan. */
export function planPinnedPaths(files: readonly string[], prd: Prd): string[] {
  const globs = [...(prd.protectDefaults === false ? [] : [...DEFAULT_PINNED_GLOBS, ...PINNED_ABSENT_GLOBS]), ...(prd.protect ?? [])];
  const named = allChecks(prd).flatMap((c) => planNamedPaths(c, files));
  // A check that runs `make` depends on the Makefile's recipes: pinned whole (a recipe is not parsed here).
  const make = allChecks(prd).some((c) => /(^|[;&|(\s])make(\s|$)/.test(c)) ? files.filter((f) => /^(GNU)?[Mm]akefile$/.test(f)) : [];
  return [...new Set([...matchGlobs(files, globs), ...named, ...make])].sort();
}

/** Of the files a commit added, those whose absence the plan commit pins (PINNED_ABSENT_GLOBS). */
export function matchAbsent(added: readonly string[]): string[] {
  return matchGlobs(added, PINNED_ABSENT_GLOBS);
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
  const words = command.split(/[\s;&|()<>"'`=]+/).map((w) => w.replace(/^\.\//, '').replace(/\/+$/, '')).filter((w) => w && !w.startsWith('-'));
  const out: string[] = [];
  for (const w of new Set(words)) {
    if (files.includes(w)) out.push(w);
    else out.push(...matchGlobs(files.filter((f) => f.startsWith(`${w}/`)), TEST_FILE_GLOBS));
  }
  return out;
}

// What counts as a test file inside a folder a check names.
const TEST_FILE_GLOBS: readonly string[] = ['*.test.*', '*.spec.*', '*_test.*', 'test_*.py', 'conftest.py', 'test/', 'tests/', '__tests__/', 'spec/'];

/**
 * package.json scripts a check command runs, with the folder of the package.json: `npm test`, `npm t`, `npm run x`,
 * `npm run-script x`, `yarn x`, `yarn run x`, `pnpm x`, `pnpm run x`, `bun run x`; in another folder with
 * `npm --prefix app`, `npm -w app` / `--workspace app`, `pnpm -C app`, `yarn --cwd app`, or a `cd app &&` before it.
 * npm also runs `pre<x>` and `post<x>` around a script, so those are pinned with it.
 */
export function planScriptNames(command: string): Array<{ dir: string; name: string }> {
  const out: Array<{ dir: string; name: string }> = [];
  let cwd = '';
  for (const part of command.split(/&&|\|\||;|\|/)) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    if (words[0] === 'cd' && words[1]) {
      cwd = joinDir(cwd, words[1]);
      continue;
    }
    const at = words.findIndex((w) => ['npm', 'yarn', 'pnpm', 'bun'].includes(w));
    if (at < 0) continue;
    const tool = words[at];
    let dir = cwd;
    const rest: string[] = [];
    for (let i = at + 1; i < words.length; i++) {
      const w = words[i];
      const flag = /^(--prefix|-C|--dir|--cwd|-w|--workspace|--filter)(?:=(.*))?$/.exec(w);
      if (flag) {
        const value = flag[2] ?? words[++i];
        if (value) dir = joinDir(cwd, value);
      } else if (!w.startsWith('-')) rest.push(w);
    }
    const [verb, arg] = rest;
    let name: string | undefined;
    if (verb === 'test' || verb === 't') name = 'test';
    else if (verb === 'start') name = 'start';
    else if (verb === 'run' || verb === 'run-script') name = arg;
    else if ((tool === 'yarn' || tool === 'pnpm') && verb && !['install', 'add', 'exec', 'dlx', 'i', 'ci', 'x'].includes(verb)) name = verb;
    if (!name) continue;
    for (const n of [name, `pre${name}`, `post${name}`]) if (!out.some((o) => o.dir === dir && o.name === n)) out.push({ dir, name: n });
  }
  return out;
}

function joinDir(base: string, dir: string): string {
  const joined = [...base.split('/'), ...dir.replace(/^\.\//, '').split('/')].filter((p) => p && p !== '.');
  return joined.join('/');
}

/** Top-level package.json keys that configure a test runner: pinned with the scripts, so tests cannot be excluded there. */
export const RUNNER_KEYS: readonly string[] = ['jest', 'mocha', 'ava', 'c8', 'nyc', 'tap'];

/** The definitions of `names` in a package.json text (null where the script is not defined). */
export function readScripts(packageJson: string | null, names: readonly string[]): Record<string, string | null> {
  const scripts = readObject(packageJson).scripts;
  const table = scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>) : {};
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
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
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
export function applyScriptPins(current: string, pinned: Record<string, string | null>, keys: Record<string, unknown> = {}): { text: string | null; changed: string[] } {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(current) as Record<string, unknown>;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return { text: null, changed: [] };
  } catch {
    // Not JSON any more: npm cannot run it either, so the check fails on its own; nothing to pin into.
    return { text: null, changed: [] };
  }
  const scripts: Record<string, unknown> = doc.scripts && typeof doc.scripts === 'object' ? { ...(doc.scripts as Record<string, unknown>) } : {};
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
  let end = start + 1;
  while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
  return lines.slice(start, end).join('\n');
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
  ['package-lock.json', 'npm ci'], ['npm-shrinkwrap.json', 'npm ci'], ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
  ['yarn.lock', 'yarn install --frozen-lockfile'], ['bun.lockb', 'bun install --frozen-lockfile'], ['bun.lock', 'bun install --frozen-lockfile'],
  ['poetry.lock', 'poetry install'], ['uv.lock', 'uv sync --frozen'], ['Pipfile.lock', 'pipenv sync'], ['Gemfile.lock', 'bundle install'],
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
