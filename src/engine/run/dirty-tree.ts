// The clean-tree rule at start: uncommitted changes would be blamed on the agent, so a start with any is
// refused (a resumed loop's own leftovers excepted), with a hint that says what to commit, stash or ignore.
import path from 'node:path';
import { RUNS_DIR } from '../store/layout.js';
import { isStartFile } from './branch.js';
import type { Emit } from '../events.js';
import { readDirtyEntries, readStatusAndHead, type DirtyEntry } from '../git/read.js';
import { type HeadState } from '../git/parse.js';
import type { LoopState } from '../store/state-types.js';
import type { RunPaths } from '../types.js';
import { topFolders } from '../../util/top-folders.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { readCheckLeftovers } from '../store/check-leftovers.js';

const SHOWN_DIRTY = 10;

/** What the clean-tree check read: every uncommitted path, and HEAD (null: not said plainly; git/read.ts readStatusAndHead). */
export interface StartStatus {
  entries: DirtyEntry[];
  head: HeadState | null;
}

// Untracked files named in the .gitignore part of the hint; more would not fit on a line.
const SHOWN_IGNORE = 3;

/** Uncommitted paths that would refuse the start: everything but the runner's own files (plan, log, prompt, archive, .runs). */
export async function readStartDirty(paths: RunPaths): Promise<DirtyEntry[]> {
  return refusingEntries(paths, await readDirtyEntries(paths.repoRoot));
}

function refusingEntries(paths: RunPaths, entries: DirtyEntry[]): DirtyEntry[] {
  const runs = `${RUNS_DIR.split(path.sep).join('/')}/`;
  return entries.filter((e) => !isStartFile(paths, e.path) && !e.path.startsWith(runs));
}

/**
 * Uncommitted work the loop did not make would be blamed on the agent (every claim rejected as uncommitted) or
 * swept into its commit. The plan, its log, the prompt and the archive are the runner's to commit, so they do not count.
 * Returns every uncommitted path git listed (the runner's own among them) and HEAD, for prepareBranch (run/branch.ts).
 */
export async function refuseDirtyTree(paths: RunPaths, resumed: LoopState | null, emit: Emit): Promise<StartStatus> {
  const status = await readStatusAndHead(paths.repoRoot);
  const entries = refusingEntries(paths, status.entries);
  if (!entries.length) return status;
  const dirty = entries.map((e) => e.path);
  const more = dirty.length > SHOWN_DIRTY ? `\n  ... and ${dirty.length - SHOWN_DIRTY} more` : '';
  // An iteration cut short (Ctrl-C, cancel, kill -9) leaves the agent's half-done work; repeating that iteration is
  // how it gets finished and committed, so it is not in the way.
  if (resumed && !resumed.iterationDone && resumed.iteration > 0) {
    const list = `${dirty.slice(0, SHOWN_DIRTY).join(', ')}${more ? ', ...' : ''}`;
    const message = resumed.verifying
      ? `uncommitted changes since the interrupted iteration ${resumed.iteration}; its claims are checked first, and these count as uncommitted work: ${list}`
      : `uncommitted changes from the interrupted iteration ${resumed.iteration} stay for the agent to finish and commit: ${list}`;
    emit({ type: 'warn', message });
    return status;
  }
  throw new LoopExit(
    LOOP_EXIT.refused,
    `uncommitted changes in the working tree; the agent would be blamed for them:\n  ${dirty.slice(0, SHOWN_DIRTY).join('\n  ')}${more}\nnot starting`,
    renderStartDirtyHint(paths, entries),
  );
}

/** The hint for `entries` (from readStartDirty), with what the runner recorded about files its checks wrote. */
export function renderStartDirtyHint(paths: RunPaths, entries: readonly DirtyEntry[]): string {
  const untracked = entries.filter((e) => e.untracked).map((e) => e.path);
  return renderDirtyHint(
    entries.map((e) => e.path),
    { untracked, fromChecks: readCheckLeftovers(path.join(paths.repoRoot, RUNS_DIR)) },
  );
}

const LOOP_FILE_ROOTS = ['ralph/', '.claude/skills/', '.agents/skills/'];

/** What is known about the dirty paths beyond their names; without it the hint only mentions .gitignore in general. */
export interface DirtyHintFacts {
  /** Dirty paths git does not track yet. */
  untracked?: readonly string[];
  /** Paths the runner saw checks leave in the working tree in an earlier run (it warned then). */
  fromChecks?: readonly string[];
}

/**
 * What to type for a dirty tree at start. Stashing would take the loop's own files (ralph.sh itself) with it,
 * so it is offered only when none of them is among the dirty paths. Untracked files outside the loop's own may be
 * output a check or build writes: those belong in .gitignore, and when the runner saw the checks write them, it says so.
 */
export function renderDirtyHint(dirty: readonly string[], facts: DirtyHintFacts = {}): string {
  const isLoopFile = (p: string) => LOOP_FILE_ROOTS.some((root) => p.startsWith(root));
  const loopFiles = dirty.filter(isLoopFile);
  const untracked = (facts.untracked ?? []).filter((p) => dirty.includes(p) && !isLoopFile(p));
  const fromChecks = untracked.filter((p) => facts.fromChecks?.includes(p));
  const guessed = untracked.filter((p) => !fromChecks.includes(p));
  if (fromChecks.length && fromChecks.length === dirty.length) {
    return `the checks of an earlier run wrote ${renderIgnoreNames(fromChecks)} (the runner warned then): list ${fromChecks.length === 1 ? 'it' : 'them'} in .gitignore, then start again`;
  }
  const ignore = [
    ...(fromChecks.length
      ? [
          `the checks of an earlier run wrote ${renderIgnoreNames(fromChecks)}: list ${fromChecks.length === 1 ? 'it' : 'them'} in .gitignore`,
        ]
      : []),
    ...(guessed.length
      ? [
          `if a check or build writes ${renderIgnoreNames(guessed)}, list ${guessed.length === 1 ? 'it' : 'them'} in .gitignore instead`,
        ]
      : []),
  ]
    .map((part) => `; ${part}`)
    .join('');
  return renderCommitHint(dirty, loopFiles) + ignore;
}

function renderCommitHint(dirty: readonly string[], loopFiles: readonly string[]): string {
  if (loopFiles.length === dirty.length) {
    const message = dirty.includes('ralph/ralph.mjs') ? 'Add the Ralph loop' : 'Update the Ralph loop files';
    return `these are the loop's own files (ralph/, skills): commit them with \`git add ${topFolders(dirty).join(' ')} && git commit -m "${message}"\`, then start again`;
  }
  if (loopFiles.length) {
    return 'commit them (the loop\'s own files among them), e.g. `git add -A && git commit -m "Plan and loop files"`, then start again; do not stash them: ralph/ would go with them';
  }
  return 'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again';
}

/** A few paths by name; folding them to folders could name one that also holds sources (`src/`). */
function renderIgnoreNames(paths: readonly string[]): string {
  return paths.length > SHOWN_IGNORE
    ? `${paths.slice(0, SHOWN_IGNORE).join(', ')} and ${paths.length - SHOWN_IGNORE} more`
    : paths.join(', ');
}
