// `--cwd <dir>` for every command: one check that the folder exists, and one that finds the git
// repository around it while keeping git's own reason when git refuses it.
import { statSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from './errors.js';
import { resolvePlanRootAt, resolveRepoRoot } from './engine/git/git.js';

const CWD_HINT = 'pass --cwd <folder of your repository>';

/** The absolute folder `cwd` names; refuses (exit 2) when it does not exist or is a file. */
export function resolveCwdFolder(cwd: string): string {
  const absolute = path.resolve(cwd);
  let isDir: boolean;
  try {
    isDir = statSync(absolute).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be read (${code ?? String(err)})`;
    throw new RalphkitError(`the folder ${cwd} ${reason}`, { exitCode: EXIT.refused, hint: CWD_HINT });
  }
  if (!isDir) throw new RalphkitError(`${cwd} is a file, not a folder`, { exitCode: EXIT.refused, hint: CWD_HINT });
  return absolute;
}

/** The top folder of the git repository at `cwd`; refuses (exit 2) with the real reason when there is none. */
export async function resolveGitRoot(cwd: string): Promise<string> {
  // A refusal is a LoopExit (exit 2, git's own reason and a hint), which the CLI reports as any RalphkitError.
  return resolveRepoRoot(resolveCwdFolder(cwd));
}

/** `--cwd` checked, then where its default `ralph/` paths live (engine/git/git.ts `resolvePlanRootAt`). */
export async function resolvePlanRoot(cwd: string): Promise<string> {
  return resolvePlanRootAt(resolveCwdFolder(cwd));
}
