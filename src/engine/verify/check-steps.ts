// How the runner reads a check or setup command line (SPEC §6), without running it: its simple commands and the folder
// each runs in, the package.json scripts a package manager runs for it, and the makefiles make reads. Pure.
import path from 'node:path';

/** A step's words without the quotes around them: `sh -c 'make check'` runs make as much as `make check` does. */
export function unquoted(step: Step): Step {
  return { ...step, words: step.words.map((w) => w.replace(/^['"]+|['"]+$/g, '')) };
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

/** One simple command of a check line: its words, and the folder it runs in. */
export interface Step {
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
export function makeRun({ cwd, words }: Step): { dir: string; rest: string[] } | null {
  const at = words.findIndex((w) => MAKES.includes(w.slice(w.lastIndexOf('/') + 1)));
  return at < 0 ? null : folderFlags(cwd, words.slice(at + 1), /^(-C|--directory)(?:=?(.+))?/, true);
}

/** The makefiles make looks for in `dir`, in its order. */
export function makefilesIn(dir: string): string[] {
  return ['GNUmakefile', 'makefile', 'Makefile'].map((n) => (dir ? `${dir}/${n}` : n));
}

export function joinDir(base: string, dir: string): string {
  const joined = path.posix.join(base, dir).replace(/\/$/, '');
  return joined === '.' ? '' : joined;
}
