// --sandbox: the agent's private HOME layer (agents/sandbox-home.ts decides what goes where). One per loop and
// runner, in the temp folder (store/temp-folders.ts, kind ralph-agent-home, mode 0700): outside the repository, out of
// the sandbox's sight (its /tmp is private; inside, the layer is only ever seen at $HOME), and never read by checks,
// the reviewer or a later loop. Removed when the runner exits; a runner killed with -9 leaves it to the next start's
// sweep.
import {
  constants,
  cpSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import type { RunContext } from '../types.js';
import { STATE_SKIPPED, planHomeLayer } from '../agents/sandbox-home.js';
import { readHomeListing } from '../agents/home-listing.js';
import { listOrEmpty } from '../../util/read.js';
import { makeTempFolder } from '../store/temp-folders.js';

/** Logins a CLI refreshes in place: the user's own, when newer than the layer's copy, replaces it before each run. */
const LOGINS = ['.claude/.credentials.json', '.codex/auth.json'];

const LAYERS = new WeakMap<RunContext, string>();

/** The layer for this run's agent (made and seeded on first use) and the user's entries to bind read-only on it. */
export function prepareAgentHome(run: RunContext, home: string): { dir: string; readOnly: string[] } {
  const listing = readHomeListing(home, run.io.env);
  const plan = planHomeLayer(listing);
  let dir = LAYERS.get(run);
  if (!dir) {
    dir = makeTempFolder('ralph-agent-home');
    LAYERS.set(run, dir);
    removeAtExit(dir);
    seedLayer(home, dir, plan.copy);
  }
  // What an earlier run left is the agent's: a folder the runner writes into must still be a folder of the layer,
  // not a link the agent put there (the runner would write or delete on the host, where it points).
  for (const rel of [...plan.merged, ...LOGINS.map((p) => path.dirname(p)).filter((p) => listing.entries.includes(p))])
    keepFolder(dir, rel);
  refreshLogins(home, dir);
  clearMountPoints(home, dir, plan.readOnly);
  return { dir, readOnly: plan.readOnly };
}

const MADE = new Set<string>();

/** One exit handler for every layer this process made (a --parallel run makes one per worker). */
function removeAtExit(dir: string): void {
  if (!MADE.size) process.once('exit', removeAgentHomes);
  MADE.add(dir);
}

/** Removes every layer this process made (at exit; a process killed before leaves them to the next start's sweep). */
export function removeAgentHomes(): void {
  for (const d of MADE) rmSync(d, { recursive: true, force: true });
  MADE.clear();
}

/** The agents' state copied (reflinked where the file system can). */
function seedLayer(home: string, dir: string, copy: string[]): void {
  const skipped = new Set(STATE_SKIPPED.map((p) => path.join(home, p)));
  for (const rel of copy) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    // A state folder that is itself a link (~/.claude -> ~/dotfiles/claude) is copied as the folder it leads to;
    // links inside stay links.
    let source: string;
    try {
      source = realpathSync(path.join(home, rel));
    } catch {
      continue;
    }
    cpSync(source, path.join(dir, rel), {
      recursive: true,
      verbatimSymlinks: true,
      mode: constants.COPYFILE_FICLONE,
      filter: (src) => !skipped.has(path.join(home, rel, path.relative(source, src))),
    });
  }
}

/** `rel` in the layer made a plain folder again when it is anything else (a link is removed, not followed). */
function keepFolder(dir: string, rel: string): void {
  const p = path.join(dir, rel);
  try {
    if (lstatSync(p).isDirectory()) return;
  } catch {
    // missing: made below
  }
  rmSync(p, { recursive: true, force: true });
  mkdirSync(p, { recursive: true });
}

function refreshLogins(home: string, dir: string): void {
  for (const rel of LOGINS) {
    const real = path.join(home, rel);
    const copy = path.join(dir, rel);
    try {
      if (!existsSync(path.dirname(copy)) || statSync(real).mtimeMs <= statSync(copy).mtimeMs) continue;
    } catch {
      if (!existsSync(real) || !existsSync(path.dirname(copy))) continue;
    }
    rmSync(copy, { force: true });
    copyFileSync(real, copy);
  }
}

/**
 * Where a user's entry is bound, the layer may hold what an earlier run left (the agent's own file of that name, a
 * symbolic link it made, a mount point of another kind): removed, so bubblewrap makes the mount point it needs.
 */
function clearMountPoints(home: string, dir: string, readOnly: string[]): void {
  for (const p of readOnly) {
    const inLayer = path.join(dir, path.relative(home, p));
    let st;
    try {
      st = lstatSync(inLayer);
    } catch {
      continue;
    }
    const realIsDir = isDirFollowing(p);
    if (st.isSymbolicLink() || st.isDirectory() !== realIsDir || (st.isDirectory() && listOrEmpty(inLayer).length))
      rmSync(inLayer, { recursive: true, force: true });
  }
}

function isDirFollowing(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
