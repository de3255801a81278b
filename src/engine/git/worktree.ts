// --worktree: a loop in its own git worktree on its plan's branch, beside the repository (never inside the tree
// the user edits, nor inside .git, where tools walking up from the agent's folder would find the user's tree).
// The runner creates it, removes it when the run ends with nothing uncommitted in it, and keeps its records in the
// main tree's ralph/.runs/ (store/layout.ts), so status, cancel, --resume and the dashboard see it.
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { pinnedGitDirs, readGitDirs, runGit, unpinGitDirs, type GitResult } from './git.js';
import { readDirtyPaths } from './read.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { keepRecordsIn } from '../store/layout.js';
import { removeDeadTempFolders, renderRemovedTempFolders } from '../store/temp-folders.js';
import { isRunning, readState } from '../store/state-file.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull, readOwnTextOrNull } from '../../util/read.js';
import { loopCommand } from '../../util/invocation.js';
import { stopOrphanAgents } from '../store/orphans.js';
import { shellQuote } from '../../util/shell-quote.js';

/** The folder that holds a repository's loop worktrees: `<repo>.ralph-worktrees/` beside it. */
export function worktreesFolder(mainRoot: string): string {
  return path.join(path.dirname(mainRoot), `${path.basename(mainRoot)}.ralph-worktrees`);
}

export function worktreePath(mainRoot: string, id: string): string {
  return path.join(worktreesFolder(mainRoot), id);
}

interface GitWorktree {
  path: string;
  branch: string | null;
}

// git's words for an entry of .git/worktrees/ it could not read whole.
const HALF_MADE = /failed to read .*worktrees\//;

/**
 * `git worktree list --porcelain`, read: every worktree of the repository and the branch it has checked out. Another
 * loop's `git worktree add` writes its entry in .git/worktrees/ a file at a time, and git's listing fails on an entry
 * half made ("failed to read .git/worktrees/<id>/commondir"): asked again a few times within two seconds.
 */
export async function listGitWorktrees(mainRoot: string): Promise<GitWorktree[]> {
  let r = await runGit(mainRoot, ['worktree', 'list', '--porcelain']);
  for (let tries = 0; r.code !== 0 && HALF_MADE.test(r.stderr) && tries < 8; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    r = await runGit(mainRoot, ['worktree', 'list', '--porcelain']);
  }
  if (r.code !== 0)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `git worktree list: ${r.stderr.trim()}`,
      'check that git works in this repository (git status)',
    );
  return r.stdout
    .split(/\n\n+/)
    .filter((block) => block.startsWith('worktree '))
    .map((block) => {
      const lines = block.split('\n');
      const branch = lines.find((l) => l.startsWith('branch refs/heads/'));
      return {
        path: lines[0].slice('worktree '.length),
        branch: branch ? branch.slice('branch refs/heads/'.length) : null,
      };
    });
}

/**
 * The loop's worktree on `branch`, made ready: re-used when a resumed loop's is still there, else created with
 * `git worktree add` (the branch from `base`, or HEAD, when it does not exist yet). Returns its root, whose records
 * go to the main tree's ralph/.runs/ from now on.
 */
export async function openWorktree(
  mainRoot: string,
  id: string,
  branch: string,
  base: string | undefined,
): Promise<string> {
  const root = worktreePath(mainRoot, id);
  const trees = await listGitWorktrees(mainRoot);
  const holder = trees.find((t) => t.branch === branch);
  if (holder && path.resolve(holder.path) !== root) refuseBranchInUse(mainRoot, branch, holder.path);
  if (!holder || !existsSync(root)) {
    unpinGitDirs(root);
    await runGit(mainRoot, ['worktree', 'prune']);
    mkdirSync(path.dirname(root), { recursive: true });
    const exists = (await runGit(mainRoot, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).code === 0;
    const args = exists
      ? ['worktree', 'add', '--quiet', root, branch]
      : ['worktree', 'add', '--quiet', '-b', branch, root, await resolveStart(mainRoot, base)];
    const r = await addWorktree(mainRoot, args.slice(2));
    if (r.code !== 0)
      throw new LoopExit(
        LOOP_EXIT.refused,
        `could not create the loop's worktree ${root}: ${r.stderr.trim()}`,
        `check that ${path.dirname(root)} can be written, then start again`,
      );
  }
  await holdTreeDirs(mainRoot, root);
  keepRecordsIn([root, realpathSync(root)], mainRoot);
  return root;
}

/**
 * A worktree of the runner's, its git folders read and held for every later git call there (git.ts pinGitDirs),
 * before any agent works in it: a linked worktree of this repository has its own folder under the common folder's
 * worktrees/ and shares that common folder. A tree kept from an earlier run whose `.git` names anything else was
 * pointed elsewhere (the agent's to write): stop, and say how to make it again.
 */
export async function holdTreeDirs(mainRoot: string, root: string): Promise<void> {
  const main = pinnedGitDirs(mainRoot) ?? (await readGitDirs(mainRoot));
  const dirs = await readGitDirs(root);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const common = real(main.commonDir);
  const own = real(dirs.gitDir);
  if (real(dirs.commonDir) === common && path.dirname(own) === path.join(common, 'worktrees')) return;
  unpinGitDirs(root);
  throw new LoopExit(
    LOOP_EXIT.protected,
    `the worktree ${root} does not name a git folder of this repository in its .git (it names ${dirs.gitDir}, with the common folder ${dirs.commonDir}): its .git was pointed elsewhere, and the runner's git would read and record there`,
    `look at ${shellQuote(path.join(root, '.git'))}; to make the tree again from the branch: git worktree remove --force ${shellQuote(root)} && git worktree prune, then resume`,
  );
}

let adding: Promise<unknown> = Promise.resolve();

/**
 * `git worktree add`, one at a time in this process, and again after a moment when git failed to read another
 * worktree's admin folder: a worktree that another git (another loop) is adding at that instant is half written, and
 * git refuses to go on (seen: "failed to read .git/worktrees/<name>/commondir"). It stops before creating anything.
 */
export function addWorktree(mainRoot: string, args: string[]): Promise<GitResult> {
  const run = async (): Promise<GitResult> => {
    for (let attempt = 0; ; attempt++) {
      const r = await runGit(mainRoot, ['worktree', 'add', ...args]);
      if (r.code === 0 || attempt >= 5 || !/failed to read \S*worktrees\//.test(r.stderr)) return r;
      await sleep(50 * 2 ** attempt);
    }
  };
  const next = adding.then(run, run);
  adding = next.catch(() => undefined);
  return next;
}

async function resolveStart(mainRoot: string, base: string | undefined): Promise<string> {
  if (!base) return 'HEAD';
  const r = await runGit(mainRoot, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
  if (r.code !== 0)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `baseBranch "${base}" does not name a commit in this repository`,
      'fix baseBranch in prd.json or remove it to branch from HEAD',
    );
  return r.stdout.trim();
}

function refuseBranchInUse(mainRoot: string, branch: string, where: string): never {
  if (path.resolve(where) === path.resolve(mainRoot)) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `branch ${branch} is checked out in your working tree, so a worktree cannot have it too`,
      `switch your tree to another branch (git switch <branch>), then start again; or run this plan in your tree, without --worktree`,
    );
  }
  if (path.dirname(path.resolve(where)) === worktreesFolder(mainRoot)) {
    const { id } = planWorktreeOwner(path.basename(where), (name) => readState(mainRoot, name) !== null);
    const state = readState(mainRoot, id);
    if (state && isRunning(state)) {
      throw new LoopExit(
        LOOP_EXIT.refused,
        `branch ${branch} is already being worked on by loop ${id} (in ${where}); two loops never share a branch`,
        `wait for it, or stop it with: ${loopCommand(`cancel ${id}`)}`,
      );
    }
    throw new LoopExit(
      LOOP_EXIT.refused,
      `branch ${branch} is checked out in the worktree of loop ${id} (${where}), which is not running: a crash left it`,
      `continue that loop with: ./ralph/ralph.sh --resume ${id}; or remove its worktree with: ${loopCommand('cleanup')}, then start again`,
    );
  }
  throw new LoopExit(
    LOOP_EXIT.refused,
    `branch ${branch} is checked out in another worktree, ${where}`,
    `switch that worktree to another branch, or remove it: git worktree remove ${shellQuote(where)}`,
  );
}

/**
 * A loop in the user's tree on a branch that a worktree (a --worktree loop's, or the user's own) has: refused.
 * `commonDir` (git's common dir): a repository with no linked worktree there (`worktrees/` missing or empty, as git
 * itself reads it) has only this tree, and git is not asked.
 */
export async function refuseBranchElsewhere(mainRoot: string, branch: string, commonDir?: string): Promise<void> {
  if (commonDir !== undefined && !hasLinkedWorktrees(commonDir)) return;
  const holder = (await listGitWorktrees(mainRoot)).find(
    (t) => t.branch === branch && path.resolve(t.path) !== path.resolve(mainRoot),
  );
  if (holder) refuseBranchInUse(mainRoot, branch, holder.path);
}

function hasLinkedWorktrees(commonDir: string): boolean {
  try {
    return readdirSync(path.join(commonDir, 'worktrees')).length > 0;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/**
 * Puts the user's plan and prompt (from the main tree) into the worktree. A new loop's plan replaces the branch's
 * copy unless that copy is the same plan with the loop's progress (`samePlan`); a resumed loop keeps the branch's.
 */
export function copyStartFiles(
  from: { prd: string; prompt: string },
  to: { prd: string; prompt: string },
  resumed: boolean,
  samePlan: (a: string, b: string) => boolean,
): void {
  const plan = readFileSync(from.prd, 'utf8');
  const there = readOwnTextOrNull(to.prd);
  if (!resumed && there !== plan && !(there !== null && samePlan(there, plan))) writeInto(to.prd, plan);
  const prompt = readTextOrNull(from.prompt);
  if (prompt !== null && readOwnTextOrNull(to.prompt) !== prompt) writeInto(to.prompt, prompt);
}

function writeInto(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  atomicWriteFileSync(file, text);
}

/**
 * At the end of a run: removes the worktree when nothing uncommitted is in it (`git worktree remove` refuses
 * otherwise); returns a warning that says where the kept one is and what to type, or null when it is gone.
 */
export async function closeWorktree(mainRoot: string, root: string, id: string): Promise<string | null> {
  // Whether it holds uncommitted work is the runner's own status (git/read.ts: never inside a submodule): `git worktree
  // remove` without --force runs a status that enters them, and so a repository the agent made there, whose filters
  // would run outside the sandbox. A tree with nothing uncommitted is then removed with --force.
  // A submodule checked out in it is kept whole, as git keeps it (its own changes are not in that status).
  const dirty = existsSync(root) ? await readDirtyPaths(root).catch(() => null) : [];
  const submodules = dirty?.length === 0 ? await readPopulatedSubmodules(root) : [];
  const r =
    dirty !== null && dirty.length === 0 && submodules.length === 0
      ? await runGit(mainRoot, ['worktree', 'remove', '--force', root])
      : {
          code: 1,
          stdout: '',
          stderr:
            dirty === null
              ? 'git could not read its status'
              : submodules.length
                ? `it holds the submodule ${submodules[0]}, whose changes the runner does not look into`
                : `it holds ${dirty.slice(0, 3).join(', ')}${dirty.length > 3 ? ` and ${dirty.length - 3} more` : ''}`,
        };
  if (r.code === 0) unpinGitDirs(root);
  if (r.code !== 0) {
    return `kept the loop's worktree ${root}: it holds changes nobody committed (${r.stderr.trim().replace(/^fatal: /, '')}); look with: git -C ${shellQuote(root)} status, then continue the loop with: ./ralph/ralph.sh --resume ${id}, or drop them with: git worktree remove --force ${shellQuote(root)}`;
  }
  removeEmptyFolder(path.dirname(root));
  return null;
}

/** The submodules checked out in `root` (a gitlink whose folder has a .git), read from the index, nothing run there. */
async function readPopulatedSubmodules(root: string): Promise<string[]> {
  const r = await runGit(root, ['ls-files', '--stage', '-z']);
  if (r.code !== 0) return [];
  return r.stdout
    .split('\0')
    .filter((line) => line.startsWith('160000 '))
    .map((line) => line.slice(line.indexOf('\t') + 1))
    .filter((p) => existsSync(path.join(root, p, '.git')));
}

function removeEmptyFolder(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    /* other loops' worktrees are in it */
  }
}

/** A loop worktree whose loop is not running: left by a crash (kill -9, power loss) or kept for its changes. */
export interface LeftoverWorktree {
  /** The loop it belongs to. */
  id: string;
  path: string;
  branch: string | null;
  /** Set for a --parallel worker's worktree (`<loop id>--w<n>`): the worker's number. */
  worker?: number;
}

/**
 * The loop a folder in `<repo>.ralph-worktrees/` belongs to: its name, or for a --parallel worker's tree
 * (`<loop id>--w<n>`) the loop id before the suffix. `isLoop` says whether a name is a loop's own (a loop may be
 * named `x--w2` with --name, and then its tree is its own, not a worker's of loop `x`).
 */
export function planWorktreeOwner(name: string, isLoop: (id: string) => boolean): { id: string; worker?: number } {
  const m = WORKER_TREE.exec(name);
  if (!m || isLoop(name)) return { id: name };
  return { id: m[1], worker: Number(m[2]) };
}

const WORKER_TREE = /^(.+)--w([1-9][0-9]*)$/;

export async function listLeftoverWorktrees(mainRoot: string): Promise<LeftoverWorktree[]> {
  const folder = worktreesFolder(mainRoot);
  const isLoop = (id: string) => readState(mainRoot, id) !== null;
  return (await listGitWorktrees(mainRoot))
    .filter((t) => path.dirname(path.resolve(t.path)) === folder)
    .map((t) => ({ ...planWorktreeOwner(path.basename(t.path), isLoop), path: t.path, branch: t.branch }))
    .filter((t) => {
      const state = readState(mainRoot, t.id);
      return !(state && isRunning(state));
    });
}

/** Lines for `status` under the table: each leftover worktree and the command that removes them. */
export function renderLeftovers(leftovers: LeftoverWorktree[]): string {
  if (!leftovers.length) return '';
  const lines = leftovers.map(
    (t) => `  ${t.id}${t.worker ? ` w${t.worker}` : ''}  ${t.path}${t.branch ? ` (${t.branch})` : ''}`,
  );
  return `\nworktrees of loops that are not running (continue one with ./ralph/ralph.sh --resume <id>, or remove them with: ${loopCommand('cleanup')}):\n${lines.join('\n')}\n`;
}

/** `cleanup`: removes the leftover worktrees; one with uncommitted changes is kept and named. Returns one line each. */
export async function cleanupWorktrees(mainRoot: string): Promise<string[]> {
  const said: string[] = [];
  // A killed runner's agent may still be at work in its worktree: stopped first, as cancel and --resume would.
  for (const o of await stopOrphanAgents(mainRoot, ''))
    said.push(
      `stopped the agent ${o.worker ? `worker w${o.worker} of ` : ''}loop ${o.loopId} left running (process group ${o.agentPid})`,
    );
  for (const t of await listLeftoverWorktrees(mainRoot)) {
    const kept = await closeWorktree(mainRoot, t.path, t.id);
    said.push(kept ?? `removed ${t.path} (loop ${t.id}; its branch${t.branch ? ` ${t.branch}` : ''} and records stay)`);
  }
  await runGit(mainRoot, ['worktree', 'prune']);
  // Verification checkouts a killed runner left in the temp folder (any loop's: they are named after their runner).
  said.push(...renderRemovedTempFolders(removeDeadTempFolders()));
  return said;
}
