// When `setup` may run once per loop (SPEC §6): a recognised dependency install in a project whose own install
// lifecycle scripts are absent. The cache is built in a folder that holds only the files of its key (verify/setup-cache.ts
// buildApart): the lockfiles, every package.json, the tarballs they install from and the package managers' own
// configuration. What the install makes there cannot depend on anything else of the commit (a dependency's install script
// that reads the project's sources reads nothing), so it is a function of the key.
// Pure: the caller reads the files; here they are named, judged and hashed into the key.
import { createHash } from 'node:crypto';
import path from 'node:path';
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

/**
 * The package managers' configuration at the checkout's top: read by an install, so put beside the manifests where the
 * cache is built, and part of its key.
 */
export const INSTALL_CONFIG: readonly string[] = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  'pnpm-workspace.yaml',
  '.pnpmfile.cjs',
  'bunfig.toml',
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

type Manifest = Record<string, unknown>;

function parseManifest(text: string): Manifest | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Manifest) : null;
  } catch {
    return null;
  }
}

/** Every dependency spec of a manifest, as [name, spec]. */
function dependencySpecs(parsed: Manifest): [string, string][] {
  return ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'].flatMap((field) => {
    const deps = parsed[field];
    if (!deps || typeof deps !== 'object') return [];
    return Object.entries(deps as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    );
  });
}

const LOCAL_SPEC = /^(file|link|portal):/;
const TARBALL = /\.(tgz|tar\.gz|tar)$/;

/**
 * Pure: the dependencies a package.json text takes from a folder (`file:`, `link:`, `portal:` specs, tarballs aside).
 * yarn copies such a folder, pnpm links it, npm does with --install-links: what the install leaves then holds the
 * project's own files, which the key does not.
 */
export function localDependencies(text: string): string[] {
  const parsed = parseManifest(text);
  if (!parsed) return [];
  return dependencySpecs(parsed)
    .filter(([, spec]) => LOCAL_SPEC.test(spec) && !TARBALL.test(spec))
    .map(([name]) => name);
}

/**
 * Pure: the tarballs of the project a package.json at `file` (a path in the checkout) installs from (`file:` specs
 * ending in .tgz, .tar.gz or .tar), as paths in the checkout; `null` in place of one that leads out of it. Their bytes
 * are part of the key, and they are put where the cache is built.
 */
export function localTarballs(file: string, text: string): (string | null)[] {
  const parsed = parseManifest(text);
  if (!parsed) return [];
  const dir = path.posix.dirname(file);
  return dependencySpecs(parsed)
    .filter(([, spec]) => spec.startsWith('file:') && TARBALL.test(spec))
    .map(([, spec]) => {
      const rel = spec.slice('file:'.length);
      const joined = path.posix.normalize(path.posix.join(dir, rel));
      return path.posix.isAbsolute(rel) || joined.startsWith('../') ? null : joined;
    });
}

export type SetupKey = { key: string } | { uncached: string };

/** In the inputs of setupKey: the project has a `.yarn` folder (its value is not read). */
export const YARN_FOLDER = '.yarn/';
/** In the inputs of setupKey, before a package.json's path: a tarball spec of it that leads out of the checkout. */
export const OUTSIDE = '(outside) ';

/**
 * Pure: the cache key of `setup` in a checkout whose files `inputs` holds (the top-level lockfiles and install
 * configuration, every committed package.json and the tarballs they name, by path; null: not a regular file, so nothing
 * is cached), or why the setup runs in every checkout.
 */
export function setupKey(setup: string, inputs: ReadonlyMap<string, Buffer | null>): SetupKey {
  if (!isPureInstall(setup)) return { uncached: `\`${setup}\` is not a recognised dependency install` };
  if (inputs.has(YARN_FOLDER))
    return {
      uncached:
        'the project has a .yarn folder (a release of yarn, its plugins, patches), which an install reads and the key does not hold',
    };
  const outside = [...inputs.keys()].find((f) => f.startsWith(OUTSIDE));
  if (outside)
    return {
      uncached: `a dependency is installed from a tarball outside the project (${outside.slice(OUTSIDE.length)})`,
    };
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
