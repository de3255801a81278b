// When `setup` may run once per loop (SPEC §6): a recognised dependency install (its output is a function of the
// lockfile and the manifests, not of the project's sources) in a project whose own install lifecycle scripts are absent.
// Pure: the caller reads the files; here they are named, judged and hashed into the key of the setup cache
// (verify/setup-cache.ts).
import { createHash } from 'node:crypto';
import { LIFECYCLE_SCRIPTS } from './pins.js';

/** Lockfiles at the checkout's top: the install's input besides the manifests. */
export const LOCKFILES: readonly string[] = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'bun.lock',
  'poetry.lock',
  'uv.lock',
  'Cargo.lock',
  'go.sum',
];

/** A lockfile by name: the table above, and requirements*.txt. */
export function isLockfile(name: string): boolean {
  return LOCKFILES.includes(name) || /^requirements[\w.-]*\.txt$/.test(name);
}

// Installs whose output (node_modules) is relocatable and fixed by the lockfile and package.json files. Python
// environments (.venv from uv sync, poetry install, pip) hold the absolute path of the folder they were made in, so a
// copy in another checkout would run the first checkout's interpreter: they are not cached.
const PURE_INSTALLS: readonly (readonly string[])[] = [
  ['npm', 'ci'],
  ['npm', 'install'],
  ['npm', 'i'],
  ['pnpm', 'install'],
  ['pnpm', 'i'],
  ['yarn', 'install'],
  ['yarn'],
  ['bun', 'install'],
];
// An option, with a plain value at most (no path out, no shell: `&&`, `;`, `$(...)` and quotes are not in it).
const OPTION = /^--?[A-Za-z][\w-]*(=[\w.:@-]*)?$/;

/** Pure: `setup` is one of the recognised dependency installs, with options only (`npm ci --no-audit --offline`). */
export function isPureInstall(setup: string): boolean {
  const words = setup.trim().split(/\s+/);
  return PURE_INSTALLS.some(
    (cmd) => cmd.every((w, i) => words[i] === w) && words.slice(cmd.length).every((w) => OPTION.test(w)),
  );
}

/**
 * Pure: the install lifecycle scripts (pins.ts) a package.json text names (unreadable JSON: `(unreadable)`, never
 * cached). They run the project's sources, so what an install makes depends on the commit, not on the lockfile alone.
 */
export function lifecycleScripts(text: string): string[] {
  try {
    const scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
    if (!scripts || typeof scripts !== 'object') return [];
    return LIFECYCLE_SCRIPTS.filter((name) => Object.hasOwn(scripts, name));
  } catch {
    return ['(unreadable)'];
  }
}

/**
 * Pure: the dependencies a package.json text takes from a folder (`file:`, `link:`, `portal:` specs, tarballs aside:
 * a `.tgz` is bytes the lockfile's integrity pins). yarn copies such a folder, pnpm links it, npm does with
 * --install-links: what the install leaves then holds the project's own files, which the key does not.
 */
export function localDependencies(text: string): string[] {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = parsed[field];
    if (!deps || typeof deps !== 'object') continue;
    for (const [name, spec] of Object.entries(deps as Record<string, unknown>)) {
      if (typeof spec === 'string' && /^(file|link|portal):/.test(spec) && !/\.(tgz|tar\.gz|tar)$/.test(spec))
        out.push(name);
    }
  }
  return out;
}

export type SetupKey = { key: string } | { uncached: string };

/**
 * Pure: the cache key of `setup` in a checkout whose files `inputs` holds (the top-level lockfiles and every committed
 * package.json, by path; null: not a regular file, so nothing is cached), or why the setup runs in every checkout.
 */
export function setupKey(setup: string, inputs: ReadonlyMap<string, Buffer | null>): SetupKey {
  if (!isPureInstall(setup)) return { uncached: `\`${setup}\` is not a recognised dependency install` };
  const hash = createHash('sha256').update(`${setup.trim()}\0`);
  for (const file of [...inputs.keys()].sort()) {
    const bytes = inputs.get(file);
    if (!bytes) return { uncached: `${file} is not a regular file` };
    if (file === 'package.json' || file.endsWith('/package.json')) {
      const scripts = lifecycleScripts(bytes.toString('utf8'));
      if (scripts.length) return { uncached: `${file} has install scripts of its own (${scripts.join(', ')})` };
      const local = localDependencies(bytes.toString('utf8'));
      if (local.length)
        return {
          uncached: `${file} depends on a folder of the project (${local.join(', ')}), which an install copies or links: its files are not in the key`,
        };
    }
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return { key: hash.digest('hex') };
}
