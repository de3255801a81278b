// Where the environment the loop started with names the repository (SPEC §6): PATH folders inside it (`node_modules/.bin`
// under npx, a `bin/` direnv adds), PYTHONPATH folders, and variables whose value names a path in it (NODE_OPTIONS with
// `--require <repo>/.pnp.cjs`). Each is found once, at loop start, and relative to the repository: a check finds the
// same folder of its own checkout, never what the working tree's links lead to later.
import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import type { CheckEnvBase } from './types.js';
import { realpathOrUndefined } from '../../util/read.js';
import { isWithin } from '../../util/repo-path.js';

/** A PATH folder inside the repository: as PATH names it, and where it is in the repository ('' for the top). */
export interface RepoFolder {
  dir: string;
  rel: string;
}

/** The names the repository goes by in the environment: its real path and the ones it was reached by, longest first. */
export function repoNames(repo: string, spelled: readonly string[]): string[] {
  const names = [repo, ...spelled.filter((s) => path.isAbsolute(s)).map((s) => path.resolve(s))];
  return [...new Set(names)].sort((a, b) => b.length - a.length);
}

/** The absolute folders on `env`'s PATH, each once. */
export function absolutePath(env: NodeJS.ProcessEnv): string[] {
  return [...new Set((env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d)))];
}

/**
 * The folders on `env`'s PATH inside `repo` (a real path; `spelled`, other names it was reached by). A check finds them
 * in its checkout (withCheckoutPath), where the programs directly in them are pinned as the plan commit has them
 * (verify/pin-capture.ts): a commit cannot put a `node` there.
 */
export function repoPathFolders(env: NodeJS.ProcessEnv, repo: string, spelled: readonly string[] = []): RepoFolder[] {
  const names = repoNames(repo, spelled);
  return absolutePath(env).flatMap((dir) => {
    const rel = relToRepo(dir, repo, names);
    return rel === null ? [] : [{ dir, rel }];
  });
}

/**
 * Where folder `dir` is in the repository, relative with forward slashes, or null when outside: by its real path, or
 * (a folder not made yet, reached through a link) by how it is spelled against each of the repository's `names`.
 */
function relToRepo(dir: string, repo: string, names: readonly string[]): string | null {
  const real = realpathOrUndefined(dir);
  const candidates = real ? [[real, repo]] : names.map((name) => [path.resolve(dir), name]);
  for (const [at, name] of candidates) if (isWithin(at, name)) return path.relative(name, at).split(path.sep).join('/');
  return null;
}

/**
 * The folders of `env`'s PYTHONPATH a check finds in its checkout, relative to `repo`: those inside it, by any of its
 * names (a variable naming the repository names the checkout: withRepoVars), and relative ones (they resolve in the
 * checkout too).
 */
export function pythonPathFolders(env: NodeJS.ProcessEnv, repo: string, spelled: readonly string[] = []): string[] {
  const names = repoNames(repo, spelled);
  const out = (env.PYTHONPATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .flatMap((d) => {
      if (path.isAbsolute(d)) {
        const rel = relToRepo(d, repo, names);
        return rel === null ? [] : [rel];
      }
      const rel = path.normalize(d);
      return rel.startsWith('..') ? [] : [rel === '.' ? '' : rel.split(path.sep).join('/')];
    });
  return [...new Set(out)];
}

// What separates a path from what stands around it in a variable's value (`--require=/x`, `a:b`, `"/x" -r /y`); a
// `file://` URL (`--import file:///x.mjs`) starts one too.
const AROUND = /[\s:;,="']/;

export type RepoVar = 'rewrite' | 'drop';

/**
 * The variables of `env` (PATH aside) whose value names the repository or a path inside it, at loop start (NODE_OPTIONS
 * with `--require <repo>/.pnp.cjs` under Yarn, PYTHONPATH=<repo>/src from direnv, a VIRTUAL_ENV, npm's INIT_CWD).
 * `rewrite`: each path named is a folder: the checks get the same folder of their checkout. `drop`: a file (or nothing
 * yet), which the agent can rewrite in the working tree, ignored, where no commit shows it: left out.
 */
export function planRepoVars(env: NodeJS.ProcessEnv, names: readonly string[]): Record<string, RepoVar> {
  const out: Record<string, RepoVar> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PATH' || !value) continue;
    const named = findRepoPaths(value, names);
    if (!named.length) continue;
    out[name] = named.every((p) => existsDir(p.path)) ? 'rewrite' : 'drop';
  }
  return out;
}

/** Each path inside one of `names` (or the name itself) that `value` holds, where it starts and which name it starts with. */
function findRepoPaths(value: string, names: readonly string[]): Array<{ at: number; name: string; path: string }> {
  const out: Array<{ at: number; name: string; path: string }> = [];
  for (let at = 0; at < value.length; at++) {
    if (at > 0 && !AROUND.test(value[at - 1]) && !value.slice(0, at).endsWith('file://')) continue;
    const name = names.find(
      (n) => value.startsWith(n, at) && /^$|^[/\s:;,="']/.test(value.slice(at + n.length, at + n.length + 1)),
    );
    if (!name) continue;
    let end = at + name.length;
    while (end < value.length && !AROUND.test(value[end])) end++;
    out.push({ at, name, path: value.slice(at, end) });
    at = end - 1;
  }
  return out;
}

/**
 * `env` with the variables planRepoVars found naming the repository made to name `to` instead (the checkout a check,
 * setup or the reviewer works in), or left out; `to` undefined (--on-exit, which runs in your tree): all left out.
 */
export function withRepoVars(env: NodeJS.ProcessEnv, base: CheckEnvBase | undefined, to?: string): NodeJS.ProcessEnv {
  if (!base?.repo || !base.repoVars) return env;
  const out = { ...env };
  const names = repoNames(base.repo, base.spelled ?? []);
  for (const [name, how] of Object.entries(base.repoVars)) {
    const value = out[name];
    if (value === undefined) continue;
    if (how === 'drop' || to === undefined) delete out[name];
    else {
      let next = '';
      let from = 0;
      for (const hit of findRepoPaths(value, names)) {
        next += value.slice(from, hit.at) + to;
        from = hit.at + hit.name.length;
      }
      out[name] = next + value.slice(from);
    }
  }
  return out;
}

/**
 * `env` for a check in checkout `checkout`: the PATH folders the loop start left out because they are inside the
 * repository (`node_modules/.bin` under npx) come back as the checkout's own copies of them, first, as they were: a
 * check that calls a project tool by name finds the one setup installed in its checkout, never the working tree's.
 * Other variables naming the repository name the checkout, or are left out (withRepoVars).
 */
export function withCheckoutPath(
  env: NodeJS.ProcessEnv,
  base: CheckEnvBase | undefined,
  checkout: string,
): NodeJS.ProcessEnv {
  // --verify-in-place checks run in your tree: its variables stay as they are, as everything else there does.
  const vars = base?.repo && path.resolve(checkout) === base.repo ? env : withRepoVars(env, base, checkout);
  if (!base?.repo || !base.leftOutRel?.length) return vars;
  // Where each folder was at loop start, never worked out from the working tree again (a link the agent makes there,
  // ignored, would send the check to another folder of its commit); in the checkout, only as real folders down from it.
  const mapped = base.leftOutRel.map((rel) => path.join(checkout, rel)).filter((dir) => linkFreeBelow(checkout, dir));
  return { ...vars, PATH: [...mapped, vars.PATH].filter(Boolean).join(path.delimiter) };
}

/** Whether each folder from `root` down to `dir` is a real folder, or not there yet: none is a link. */
function linkFreeBelow(root: string, dir: string): boolean {
  const rel = path.relative(root, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
  let at = root;
  for (const part of rel.split(path.sep).filter(Boolean)) {
    at = path.join(at, part);
    try {
      if (!lstatSync(at).isDirectory()) return false;
    } catch {
      return true;
    }
  }
  return true;
}

export function existsDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
