// The one PATH lookup: which file a command name runs, by one rule for the runner (the agent, git, bwrap, gh, node,
// the reviewer) and the CLI's hints. Built-ins only (bundled into ralph.mjs).
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The shell the runner starts commands with (the agent's --agent-cmd, --review-cmd, checks, setup, --on-exit), by its
 * absolute path: never looked up on a PATH, whose folders an agent may have written since (a `sh` in
 * node_modules/.bin would otherwise run in place of the shell, and could answer for a reviewer). Where there is no
 * /bin/sh (Termux), `sh` as the system finds it.
 */
export const SHELL = process.platform === 'win32' || !existsSync('/bin/sh') ? 'sh' : '/bin/sh';

export interface WhichOptions {
  /** PATH folders to pass over (npm's node_modules/.bin folders, which the user's own shell does not have). */
  skip?: (folder: string) => boolean;
}

/**
 * The first regular file named `file` this user may execute, in the PATH folders of `env` in order, or null.
 * A name with a slash is that file itself. Empty and relative PATH folders are passed over: the shell would look
 * in them from whatever folder it stands in, which a lookup made once cannot know (and an agent can write).
 * On Windows each PATHEXT extension is tried first, as cmd.exe does.
 */
export function findExecutable(file: string, env: NodeJS.ProcessEnv, options: WhichOptions = {}): string | null {
  if (file.includes('/')) return isExecutableFile(file) ? file : null;
  const names = process.platform === 'win32' ? [...windowsNames(file, env), file] : [file];
  for (const folder of (env.PATH ?? '').split(path.delimiter)) {
    if (!folder || !path.isAbsolute(folder) || options.skip?.(folder)) continue;
    for (const name of names) {
      const candidate = path.join(folder, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

function windowsNames(file: string, env: NodeJS.ProcessEnv): string[] {
  return (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .filter(Boolean)
    .map((ext) => file + ext.toLowerCase());
}

/** A regular file (through links) this user may execute: not merely one with some execute bit. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
