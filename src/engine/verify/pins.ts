// Pinned tests (SPEC §6): a check runs with the test files and check inputs as they were at the plan commit, so an
// agent cannot make a check pass by weakening it. Pure: which files are pinned, which package.json scripts a
// check resolves to, and how to put a pinned script definition back into a manifest the agent may have edited.
import type { Prd, Story } from '../../prd/types.js';
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
export function allChecks(prd: Prd): string[] {
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
 * package.json scripts a check command runs: `npm test`, `npm t`, `npm run x`, `npm run-script x`, `yarn x`,
 * `yarn run x`, `pnpm x`, `pnpm run x`, `bun run x`. npm also runs `pre<x>` and `post<x>` around a script, so
 * those are pinned with it.
 */
export function planScriptNames(command: string): string[] {
  const names = new Set<string>();
  const re = /(?:^|[;&|(]\s*|\s)(npm|yarn|pnpm|bun)\s+(?:(?:--?[\w-]+(?:=\S+)?)\s+)*(run-script|run|test|t|start)?\s*([\w:.-]+)?/g;
  for (const m of command.matchAll(re)) {
    const [, tool, verb, arg] = m;
    let name: string | undefined;
    if (verb === 'test' || verb === 't') name = 'test';
    else if (verb === 'start') name = 'start';
    else if (verb) name = arg;
    else if (tool === 'yarn' || tool === 'pnpm') name = arg && !['install', 'add', 'exec', 'dlx', 'i', 'ci'].includes(arg) ? arg : undefined;
    if (!name) continue;
    for (const n of [name, `pre${name}`, `post${name}`]) names.add(n);
  }
  return [...names];
}

/** The definitions of `names` in a package.json text (null where the script is not defined). */
export function readScripts(packageJson: string | null, names: readonly string[]): Record<string, string | null> {
  let scripts: Record<string, unknown> = {};
  try {
    const parsed = packageJson ? (JSON.parse(packageJson) as { scripts?: Record<string, unknown> }) : {};
    if (parsed.scripts && typeof parsed.scripts === 'object') scripts = parsed.scripts;
  } catch {
    /* a manifest that is not JSON defines no scripts */
  }
  return Object.fromEntries(names.map((n) => [n, typeof scripts[n] === 'string' ? (scripts[n] as string) : null]));
}

/**
 * `current` (the claimed commit's package.json) with the pinned script definitions put back; everything else the
 * agent changed (dependencies, other scripts) stays. Returns the scripts that differed, or null text when none did.
 */
export function applyScriptPins(current: string, pinned: Record<string, string | null>): { text: string | null; changed: string[] } {
  let doc: { scripts?: Record<string, unknown> };
  try {
    doc = JSON.parse(current) as typeof doc;
  } catch {
    // Not JSON any more: npm cannot run it either, so the check fails on its own; nothing to pin into.
    return { text: null, changed: [] };
  }
  const scripts: Record<string, unknown> = doc.scripts && typeof doc.scripts === 'object' ? { ...doc.scripts } : {};
  const changed: string[] = [];
  for (const [name, value] of Object.entries(pinned)) {
    const now = typeof scripts[name] === 'string' ? scripts[name] : null;
    if (now === value) continue;
    changed.push(name);
    if (value === null) delete scripts[name];
    else scripts[name] = value;
  }
  if (!changed.length) return { text: null, changed };
  return { text: `${JSON.stringify({ ...doc, scripts }, null, 2)}\n`, changed };
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
