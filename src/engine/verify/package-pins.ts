// The parts of a package.json and of other manifests that are pinned with the tests (SPEC §6): the scripts a check
// runs, the keys that configure a test runner, and pinned sections of other files; put back into a manifest the agent
// may have edited, the rest of it left as the commit has it. Pure.
import type { Prd } from '../../prd/types.js';
import { allChecks } from './pins.js';

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
