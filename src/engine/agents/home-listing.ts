// What a HOME holds, read for the sandbox's HOME layers (agents/sandbox-home.ts plans them): the agent's, made once
// per loop and runner (run/agent-home.ts), and the reviewer's, made for each review (verify/review.ts).
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { MERGED, statePathOf, type HomeListing } from './sandbox-home.js';
import { isRealDir, listOrEmpty } from '../../util/read.js';

/** HOME as the sandbox binds it: its real path, or undefined when it is not an absolute path to something there. */
export function realHome(home: string | undefined): string | undefined {
  return home && path.isAbsolute(home) && existsSync(home) ? realpathSync(home) : undefined;
}

/** What HOME holds now: read before each run, so a tool the user installs meanwhile shows up in the next one. */
export function readHomeListing(home: string, env: NodeJS.ProcessEnv): HomeListing {
  const entries = listOrEmpty(home);
  const merged: Record<string, string[]> = {};
  // Parents first: a MERGED folder is listed only inside a listed parent.
  for (const rel of MERGED) {
    const parent = path.posix.dirname(rel);
    const names = parent === '.' ? entries : merged[parent];
    if (names?.includes(path.posix.basename(rel)) && isRealDir(path.join(home, rel)))
      merged[rel] = listOrEmpty(path.join(home, rel));
  }
  const extraState = [env.CLAUDE_CONFIG_DIR, env.CODEX_HOME]
    .map((d) => statePathOf(home, d))
    .filter((p): p is string => !!p);
  return { home, entries, merged, extraState };
}
