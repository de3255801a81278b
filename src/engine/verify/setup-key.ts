// When `setup` may run once per loop (SPEC §6): a recognised dependency install in a project whose own install
// lifecycle scripts are absent. The cache is built in a folder that holds only the files of its key (verify/setup-cache.ts
// buildApart): the lockfiles, every package.json, the tarballs they install from and the package managers' own
// configuration. What the install makes there cannot depend on anything else of the commit (a dependency's install script
// that reads the project's sources reads nothing), so it is a function of the key.
// Pure: the caller reads the files; here they are named, judged and hashed into the key.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { LIFECYCLE_SCRIPTS } from './check-steps.js';

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

const TARBALL = /\.(tgz|tar\.gz|tar)$/i;

/**
 * Pure: where a dependency spec takes the package from the project's files, as npm (npm-package-arg), yarn and pnpm
 * read it: a `file:`, `link:` or `portal:` spec, a `git+file:` repository, or a path (`./x`, `../x`, `/x`, `~/x`, `C:x`)
 * with no protocol; a tarball (`.tgz`, `.tar.gz`, `.tar`) or a folder. null: a registry, remote git or URL spec.
 */
export function localSpec(spec: string): { path: string; tarball: boolean } | null {
  // A git repository on this machine (`git+file:///home/you/x#sha`): a folder, wherever the URL says.
  const git = /^git\+file:(?:\/\/)?([^#]*)/i.exec(spec);
  if (git) return { path: git[1], tarball: false };
  const m = /^(file|link|portal):(.*)$/.exec(spec);
  const where = m ? m[2].replace(/^\/\/(?=\/)/, '') : /^(\.|~\/|\/|[a-zA-Z]:)/.test(spec) ? spec : null;
  if (where === null) return null;
  return { path: where, tarball: m?.[1] !== 'link' && m?.[1] !== 'portal' && TARBALL.test(where) };
}

/** A spec that takes a folder of this machine (localSpec, not a tarball). */
function isFolderSpec(spec: string): boolean {
  const local = localSpec(spec);
  return local !== null && !local.tarball;
}

/** The specs a manifest (package.json) depends on, or those an npm lockfile resolved its packages from. */
function projectSpecs(file: string, text: string): string[] {
  const parsed = parseManifest(text);
  if (!parsed) return [];
  if (path.posix.basename(file) !== 'package.json') {
    // package-lock.json / npm-shrinkwrap.json: where each package was resolved from; a workspace's link is the project's.
    const packages = parsed.packages;
    if (!packages || typeof packages !== 'object') return [];
    return Object.values(packages as Record<string, { resolved?: unknown; link?: unknown }>).flatMap((p) =>
      p && typeof p === 'object' && typeof p.resolved === 'string' && p.link !== true ? [p.resolved] : [],
    );
  }
  return dependencySpecs(parsed).map(([, spec]) => spec);
}

/**
 * Pure: the dependencies a package.json text takes from a folder (localSpec, tarballs aside). yarn copies such a
 * folder, pnpm links it, npm does with --install-links: what the install leaves then holds the project's own files,
 * which the key does not.
 */
export function localDependencies(text: string): string[] {
  const parsed = parseManifest(text);
  if (!parsed) return [];
  return dependencySpecs(parsed)
    .filter(([, spec]) => isFolderSpec(spec))
    .map(([name]) => name);
}

/** Pure: the folders an npm lockfile text resolved packages from (a workspace's link aside), as their specs. */
export function lockedFolders(text: string): string[] {
  return projectSpecs('package-lock.json', text).filter(isFolderSpec);
}

/** Where `local` leads from folder `dir` of the checkout; null when out of it (absolute, `~`, a drive, or `..` past the top). */
function inCheckout(dir: string, local: string): string | null {
  const joined = path.posix.normalize(path.posix.join(dir, local));
  return path.posix.isAbsolute(local) || /^(~|[a-zA-Z]:)/.test(local) || joined === '..' || joined.startsWith('../')
    ? null
    : joined;
}

/**
 * Pure: the tarballs of the project that a package.json, or an npm lockfile, at `file` (a path in the checkout)
 * installs from (localSpec), as paths in the checkout. Their bytes are part of the key, and they are put where the
 * cache is built. One out of the checkout is outsideDependencies'.
 */
export function localTarballs(file: string, text: string): string[] {
  const dir = path.posix.dirname(file);
  return projectSpecs(file, text).flatMap((spec) => {
    const local = localSpec(spec);
    const at = local?.tarball ? inCheckout(dir, local.path) : null;
    return at === null ? [] : [at];
  });
}

/**
 * Pure: the specs of a package.json, or an npm lockfile, at `file` that install from a path out of the checkout (a
 * tarball or a folder): files no commit holds, which a fresh clone elsewhere does not have.
 */
export function outsideDependencies(file: string, text: string): string[] {
  const dir = path.posix.dirname(file);
  return projectSpecs(file, text).filter((spec) => {
    const local = localSpec(spec);
    return local !== null && inCheckout(dir, local.path) === null;
  });
}

/** An npm lockfile by name: where the packages were resolved from is read from it. */
export function isNpmLockfile(name: string): boolean {
  return name === 'package-lock.json' || name === 'npm-shrinkwrap.json';
}

/**
 * Pure: a package.json text declares programs (`bin`, or `directories.bin`). For a workspace's package, npm links them
 * into node_modules/.bin only when the files they name exist, and those are the package's sources, not the key's. In a
 * project with workspaces any package.json but the root's may be one, and one that declares programs is not cached.
 */
export function declaresBin(text: string): boolean {
  const parsed = parseManifest(text);
  const dirs = parsed?.directories;
  return (
    !!parsed &&
    ((typeof parsed.bin === 'string' && parsed.bin !== '') ||
      (!!parsed.bin && typeof parsed.bin === 'object' && Object.keys(parsed.bin).length > 0) ||
      (!!dirs && typeof dirs === 'object' && typeof (dirs as Record<string, unknown>).bin === 'string'))
  );
}

/** Pure: a root package.json text declares workspaces (npm's and yarn's `workspaces`, a list or `{ packages }`). */
export function hasWorkspaces(text: string): boolean {
  const w = parseManifest(text)?.workspaces;
  return Array.isArray(w) ? w.length > 0 : !!w && typeof w === 'object';
}

export type SetupKey = { key: string } | { uncached: string };

/** In the inputs of setupKey: the project has a `.yarn` folder (its value is not read). */
export const YARN_FOLDER = '.yarn/';

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
  // A workspace's package is installed from its folder (a link in node_modules); other package.json files (a test's
  // fixture) are not installed at all.
  const workspaces =
    inputs.has('pnpm-workspace.yaml') || hasWorkspaces(inputs.get('package.json')?.toString('utf8') ?? 'null');
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
      if (file !== 'package.json' && workspaces && declaresBin(bytes.toString('utf8')))
        return {
          uncached: `${file} declares programs (bin), which an install links to the package's own files only where they exist: they are not in the key`,
        };
    }
    if (isNpmLockfile(file)) {
      const folders = lockedFolders(bytes.toString('utf8'));
      if (folders.length)
        return {
          uncached: `${file} installs packages from folders of the project (${folders.join(', ')}): their files are not in the key`,
        };
    }
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return { key: hash.digest('hex') };
}
