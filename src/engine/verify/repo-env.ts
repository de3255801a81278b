// Where the environment the loop started with names the repository (SPEC §6): PATH folders inside it (`node_modules/.bin`
// under npx, a `bin/` direnv adds), PYTHONPATH folders, and variables whose value names a path in it (NODE_OPTIONS with
// `--require <repo>/.pnp.cjs`). Each is found once, at loop start, and relative to the repository: a check finds the
// same folder of its own checkout, never what the working tree's links lead to later.
import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CheckEnvBase, RepoVar } from './types.js';
import { realpathOrUndefined } from '../../util/read.js';
import { isWithin } from '../../util/repo-path.js';

/** A PATH folder inside the repository: as PATH names it, and where it is in the repository ('' for the top). */
export interface RepoFolder {
  dir: string;
  rel: string;
}

/**
 * Where absolute path `p` leads now: the real path of the longest part of it that exists, the rest as written. A
 * folder named through a link (`~/code/app` where `~/code` leads to `/data/code`) or not made yet is placed by what
 * it would be, whatever spelling the environment uses.
 */
export function resolveLoosely(p: string): string {
  const rest: string[] = [];
  for (let at = path.resolve(p); ; at = path.dirname(at)) {
    const real = realpathOrUndefined(at);
    if (real) return path.join(real, ...rest.reverse());
    if (path.dirname(at) === at) return path.resolve(p);
    rest.push(path.basename(at));
  }
}

/** `dir` relative to `repo` (a real path) with forward slashes when it leads inside it (resolveLoosely), else null. */
function relToRepo(dir: string, repo: string): string | null {
  const at = resolveLoosely(dir);
  return isWithin(at, repo) ? path.relative(repo, at).split(path.sep).join('/') : null;
}

/**
 * The absolute folders on `env`'s PATH, each once, as where they lead at loop start (resolveLoosely): a folder
 * reached through a link the agent could replace later (an ignored `.devbox/.../bin` leading out of the repository)
 * stays the folder it led to then.
 */
export function absolutePath(env: NodeJS.ProcessEnv): string[] {
  return [
    ...new Set(
      (env.PATH ?? '')
        .split(path.delimiter)
        .filter((d) => path.isAbsolute(d))
        .map(resolveLoosely),
    ),
  ];
}

/**
 * The folders on `env`'s PATH inside `repo` (a real path), by where they lead. A check finds them in its checkout
 * (withCheckoutPath), where the programs directly in them are pinned as the plan commit has them
 * (verify/pin-capture.ts): a commit cannot put a `node` there.
 */
export function repoPathFolders(env: NodeJS.ProcessEnv, repo: string): RepoFolder[] {
  return absolutePath(env).flatMap((dir) => {
    const rel = relToRepo(dir, repo);
    return rel === null ? [] : [{ dir, rel }];
  });
}

/**
 * The folders of `env`'s PYTHONPATH a check finds in its checkout, relative to `repo`: those that lead inside it (a
 * variable naming the repository names the checkout: withRepoVars), and relative ones (they resolve in the checkout
 * too).
 */
export function pythonPathFolders(env: NodeJS.ProcessEnv, repo: string): string[] {
  const out = (env.PYTHONPATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .flatMap((d) => {
      if (path.isAbsolute(d)) {
        const rel = relToRepo(d, repo);
        return rel === null ? [] : [rel];
      }
      const rel = path.normalize(d);
      return rel.startsWith('..') ? [] : [rel === '.' ? '' : rel.split(path.sep).join('/')];
    });
  return [...new Set(out)];
}

// What separates a path from what stands around it in a variable's value (`--require=/x`, `a:b`, `"/x" -r /y`).
const AROUND = /[\s:;,="']/;

// The dynamic loader's variables: a library of the repository's (a committed or ignored build/lib/libc stub) would load
// into every program a check starts, node included, and into the runner's own git and bwrap outside the sandbox.
// OpenSSL's configuration and module folders too: node reads OPENSSL_CONF at start and loads the providers it names.
const LOADER = /^(LD_|DYLD_|OPENSSL_(CONF|MODULES|ENGINES)$)/;

export function isLoaderVar(name: string): boolean {
  return LOADER.test(name);
}

/**
 * The variables of `env` (PATH aside) whose value names a path that leads into `repo` (a real path), at loop start:
 * NODE_OPTIONS with `--require <repo>/.pnp.cjs` under Yarn, PYTHONPATH=<repo>/src from direnv, a VIRTUAL_ENV, npm's
 * INIT_CWD, an `--import file:///…` URL. A path counts by where it leads (resolveLoosely), however it is spelled (the
 * repository reached through a link, `//`, `%20` in a URL). `rewrite`: each is a folder, and the checks get the same
 * folder of their checkout. `drop`: a file (or nothing yet), which the agent can rewrite in the working tree, ignored,
 * where no commit shows it, or a loader variable: left out.
 */
export function planRepoVars(env: NodeJS.ProcessEnv, repo: string): Record<string, RepoVar> {
  const out: Record<string, RepoVar> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PATH' || !value) continue;
    const hits = findRepoPaths(value, repo);
    if (!hits.length) continue;
    if (isLoaderVar(name) || !hits.every((h) => existsDir(path.join(repo, h.rel)))) {
      out[name] = { how: 'drop' };
      continue;
    }
    const parts: Array<string | { rel: string; url: boolean }> = [];
    let from = 0;
    for (const h of hits) {
      parts.push(value.slice(from, h.at), { rel: h.rel, url: h.url });
      from = h.end;
    }
    parts.push(value.slice(from));
    out[name] = { how: 'rewrite', value, parts };
  }
  return out;
}

/**
 * Each absolute path or `file:` URL in `value` (starting it, or after a separator) that leads into `repo`: where it
 * stands in the value, and where it leads in the repository.
 */
function findRepoPaths(value: string, repo: string): Array<{ at: number; end: number; rel: string; url: boolean }> {
  const out: Array<{ at: number; end: number; rel: string; url: boolean }> = [];
  for (let at = 0; at < value.length; at++) {
    if (at > 0 && !AROUND.test(value[at - 1])) continue;
    const url = value.startsWith('file://', at);
    if (!url && value[at] !== '/') continue;
    let end = at + (url ? 'file://'.length : 0);
    while (end < value.length && !AROUND.test(value[end])) end++;
    const named = url ? fromFileUrl(value.slice(at, end)) : value.slice(at, end);
    const rel = named === null ? null : relToRepo(named, repo);
    if (rel !== null) out.push({ at, end, rel, url });
    at = end - 1;
  }
  return out;
}

function fromFileUrl(text: string): string | null {
  try {
    return fileURLToPath(text);
  } catch {
    return null;
  }
}

/**
 * `env` with the variables planRepoVars found naming the repository made to name `to` instead (the checkout a check,
 * setup or the reviewer works in), or left out; `to` undefined (--on-exit, which runs in your tree): all left out. A
 * value that is no longer what it was at loop start is left out too.
 */
export function withRepoVars(env: NodeJS.ProcessEnv, base: CheckEnvBase | undefined, to?: string): NodeJS.ProcessEnv {
  if (!base?.repoVars) return env;
  const out = { ...env };
  for (const [name, plan] of Object.entries(base.repoVars)) {
    if (out[name] === undefined) continue;
    if (plan.how === 'drop' || to === undefined || out[name] !== plan.value) delete out[name];
    else
      out[name] = plan.parts
        .map((p) =>
          typeof p === 'string' ? p : p.url ? pathToFileURL(path.join(to, p.rel)).href : path.join(to, p.rel),
        )
        .join('');
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
