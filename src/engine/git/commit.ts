// The runner's own commits (the plan and the log it edits, with no hooks and no signing) and the verdict notes it
// attaches to commits under refs/notes/ralphkit.
import { gitOk, runGit } from './git.js';
import { headSha } from './head.js';
import { readDirtyPaths } from './read.js';

// Used only when git has no identity configured (a fresh CI box), so a runner commit never fails for want of one.
const RUNNER_IDENTITY = ['-c', 'user.name=ralphkit', '-c', 'user.email=ralphkit@localhost'];

/**
 * Commits exactly `paths` (those with changes) as the runner; returns the new sha, or null if nothing changed.
 * `dirty` is a status the caller read after its last write, to save reading it again.
 * `--only` leaves anything else the agent staged alone; `--no-verify` and no signing, because the user's hooks and
 * passphrase prompts are for their commits, not for the runner's bookkeeping of two text files.
 */
export async function commitRunnerFiles(
  top: string,
  paths: string[],
  message: string,
  dirty?: string[],
): Promise<string | null> {
  const changed = dirty ?? (await readDirtyPaths(top));
  const mine = paths.filter((p) => changed.includes(p));
  if (!mine.length) return null;
  await gitOk(top, ['add', '--', ...mine]);
  const identity = (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
  await gitOk(top, [...identity, 'commit', '-q', '--no-verify', '-m', message, '--only', '--', ...mine]);
  return headSha(top);
}

/**
 * commitRunnerFiles for bookkeeping that must not end the loop: a commit git refuses (a merge in progress, a
 * locked index) is reported through `warn` with git's message and gives null; the files stay written.
 */
export async function tryCommitRunnerFiles(
  top: string,
  paths: string[],
  message: string,
  warn: (reason: string) => void,
  dirty?: string[],
): Promise<string | null> {
  try {
    return await commitRunnerFiles(top, paths, message, dirty);
  } catch (err) {
    warn((err as Error).message);
    return null;
  }
}

/** The `-c user.name=... -c user.email=...` the runner commits with where git has no identity (a fresh CI box); else none. */
export async function runnerIdentity(top: string): Promise<string[]> {
  return (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
}

// Repositories where git had an identity to commit with: asked once per process (two git processes a commit before).
// A missing one is asked again each time, so an identity configured while the loop runs is used from then on.
const identityFound = new Set<string>();

/** False when git would refuse to commit for want of a user name or email (a fresh CI box). */
async function hasIdentity(top: string): Promise<boolean> {
  if (identityFound.has(top)) return true;
  for (const v of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'])
    if ((await runGit(top, ['var', v])).code !== 0) return false;
  identityFound.add(top);
  return true;
}

/**
 * Attaches `text` to `commit` as a note under refs/notes/ralphkit (the verdict record, SPEC §6), replacing an
 * older note there. Notes commits are the runner's own: no hooks run for them, and no identity is needed.
 */
export async function writeVerdictNote(top: string, commit: string, text: string): Promise<void> {
  const identity = (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
  // `git notes add` moves the ref without checking where it was: two loops of one repository (--worktree) writing at
  // once would lose one note. So the note is written on a scratch ref, then swapped in only over the value it was
  // built on, and built again when another loop got there first.
  const scratch = `refs/notes/ralphkit-pending/${process.pid}-${Date.now().toString(36)}`;
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      const old = (await runGit(top, ['rev-parse', '--verify', '--quiet', 'refs/notes/ralphkit'])).stdout.trim();
      await gitOk(top, old ? ['update-ref', scratch, old] : ['update-ref', '-d', scratch]);
      await gitOk(top, [...identity, 'notes', `--ref=${scratch}`, 'add', '-f', '-F', '-', commit], text);
      const next = (await gitOk(top, ['rev-parse', '--verify', scratch])).trim();
      if ((await runGit(top, ['update-ref', 'refs/notes/ralphkit', next, old])).code === 0) return;
    }
    throw new Error('refs/notes/ralphkit kept changing while the note was written (20 attempts)');
  } finally {
    await runGit(top, ['update-ref', '-d', scratch]);
  }
}
