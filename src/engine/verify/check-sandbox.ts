// The sandbox a check runs in under --sandbox: its bubblewrap command line, its TMPDIR, and the stricter one of a setup
// run where the loop's setup cache is built. Apart from the session that runs the checks (session.ts) because the
// weak-check probe (weak-checks.ts) wraps the plan commit's checks the same way.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { planSandboxCommand } from '../agents/sandbox.js';
import { recordsRoot } from '../store/layout.js';
import type { VerifyInput } from './types.js';

type CheckWrap = (file: string, args: string[]) => { file: string; args: string[] };

/**
 * The bubblewrap command line of a check in checkout `cwd` under --sandbox (none without it, or in the repository):
 * writable are the checkout and the checks' own HOME (`env.HOME`, check-env.ts) and npm's cache; the user's HOME is
 * read-only (its toolchains run; nothing the checks do changes them).
 */
export function planCheckWrap(
  sb: VerifyInput['sandbox'],
  cwd: string,
  top: string,
  env: NodeJS.ProcessEnv,
): CheckWrap | undefined {
  if (!sb || cwd === top) return undefined;
  // npm's cache of the checks is their own, in their HOME (check-env.ts ownCache).
  const scratch = [env.HOME, env.npm_config_cache].filter(
    (d): d is string => !!d && path.isAbsolute(d) && existsSync(d),
  );
  return (file, args) =>
    planSandboxCommand({
      bwrap: sb.bwrap,
      file,
      args,
      repoRoot: cwd,
      gitDir: path.join(cwd, '.git'),
      readOnly: [...sb.readOnly, ...(sb.home ? [sb.home] : [])],
      scratch,
      network: sb.network,
      hidden: sb.hidden,
    });
}

/**
 * Under the sandbox, /tmp is the check's own and a TMPDIR elsewhere is read-only to it: tools that write there (jest's
 * cache, mkdtemp) would fail honest work. TMPDIR is then the private /tmp.
 */
export function sandboxedEnv(env: NodeJS.ProcessEnv, wrap: CheckWrap | undefined): NodeJS.ProcessEnv {
  return wrap && env.TMPDIR && env.TMPDIR !== '/tmp' ? { ...env, TMPDIR: '/tmp' } : env;
}

/**
 * The sandbox of a setup run where the loop's setup cache is built (verify/setup-cache.ts): the checks' sandbox, with
 * the repository and the loop's worktrees hidden besides. The cache must hold what the key's files make, and under
 * --sandbox an install script could otherwise read a commit's sources by their absolute path and copy them in.
 */
export function apartSandbox(sb: VerifyInput['sandbox'], top: string): VerifyInput['sandbox'] {
  if (!sb) return undefined;
  const main = recordsRoot(top);
  const project = [main, top, `${main}.ralph-worktrees`].filter((d) => existsSync(d));
  return { ...sb, hidden: [...new Set([...sb.hidden, ...project])] };
}
