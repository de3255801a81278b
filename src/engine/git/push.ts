// --deliver push: the plan branch pushed under its own name to its upstream's remote, else to origin. Through runGit, so with
// the runner's hardening: no hook of this repository runs (pre-push included), and git never waits for a password.
// Never --force: a remote that has moved on, or history the agent rewrote, is refused by git and reported, and
// nothing local changes. Never -u either: the runner does not write .git/config (it holds that file against the agent).
import { runGit } from './git.js';

/** How long one push may take before git is stopped (GIT_TERMINAL_PROMPT=0 already stops it asking for a password). */
export const PUSH_TIMEOUT_MS = 2 * 60_000;

/** Where a branch is pushed: a remote's name and the branch ref on it. */
export interface PushTarget {
  remote: string;
  ref: string;
}

export type PushOutcome = { ok: true; target: PushTarget } | { ok: false; target: PushTarget | null; reason: string };

/**
 * The branch's upstream when it is the same branch name on a configured remote, else origin's branch of the same name;
 * null: neither exists. The agent can rewrite branch.<name>.remote/merge (the guard leaves them, they run no code), so
 * an upstream is trusted only that far: never another branch (`--set-upstream-to=origin/main` would push the plan into
 * main with the user's credentials), never a URL or a path in place of a remote's name.
 */
export async function resolvePushTarget(top: string, branch: string): Promise<PushTarget | null> {
  const ref = `refs/heads/${branch}`;
  const listed = await runGit(top, ['remote']);
  const remotes =
    listed.code === 0
      ? listed.stdout
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
      : [];
  const remote = await readConfig(top, `branch.${branch}.remote`);
  const merge = await readConfig(top, `branch.${branch}.merge`);
  if (remote && remotes.includes(remote) && merge === ref) return { remote, ref };
  return remotes.includes('origin') ? { remote: 'origin', ref } : null;
}

async function readConfig(top: string, key: string): Promise<string | null> {
  const r = await runGit(top, ['config', '--get', key]);
  return r.code === 0 ? r.stdout.trim() || null : null;
}

/** Pushes refs/heads/<branch> (not HEAD: the tree may be elsewhere when a loop stops) to its target. */
export async function pushBranch(top: string, branch: string): Promise<PushOutcome> {
  const target = await resolvePushTarget(top, branch);
  if (!target)
    return { ok: false, target: null, reason: `the branch has no upstream and there is no remote named origin` };
  const r = await runGit(
    top,
    ['push', '--quiet', '--end-of-options', target.remote, `refs/heads/${branch}:${target.ref}`],
    { timeoutMs: PUSH_TIMEOUT_MS },
  );
  return r.code === 0
    ? { ok: true, target }
    : { ok: false, target, reason: renderGitComplaint(r.stderr) || `git push exited ${r.code}` };
}

/**
 * Pure: git's own message on one line. The "To <url>" line goes (a URL can carry a token), and so does any password
 * in a URL git quotes elsewhere; the rest (the remote's refusal, its hook's words, git's error) stays, in order.
 */
export function renderGitComplaint(stderr: string, maxLines = 6): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !/^To \S/.test(l));
  return lines
    .slice(-maxLines)
    .map((l) => l.replace(/(\/\/)[^/@\s]*@/g, '$1***@').slice(0, 300))
    .join(' | ');
}
