// Before the first iteration: put the work tree on the plan's branch with the plan the user started the loop
// with, archive the previous run when branchName changed, and commit what the runner wrote, so the agent starts
// from a clean tree. A failure on the way puts the tree back as it was.
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import { branchNameProblem } from '../../prd/branch-name.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull, readOwnTextOrNull, readFileNoWait } from '../../util/read.js';
import { runGit } from '../git/git.js';
import { checkoutBranch, readHead } from '../git/head.js';
import { readNamedObjects, readFileAt, readFileOnBranch, readDirtyPaths, type DirtyEntry } from '../git/read.js';
import { commitRunnerFiles } from '../git/commit.js';
import { type HeadState, isObjectId } from '../git/parse.js';
import { lastBranchPath, lastPlanPath } from '../store/layout.js';
import { applyBranchArchive, ensureProgressFile } from '../store/progress.js';
import { planPrdRepair, sameJson } from '../verify/prd-diff.js';
import type { RunPaths, RunContext } from '../types.js';
import { LoopExit, LOOP_EXIT, refuseLinkedFolders } from '../errors.js';
import { relPath } from '../../util/repo-path.js';
import { readEditedPrompt, isIgnored, renderPromptCommitPart, renderPromptEditNote } from './prompt.js';

/** The plan and the log as the user left them when the runner started, before any checkout. */
interface StartFiles {
  plan: string;
  progress: string | null;
  /** The prompt's text when the user left edits to it uncommitted (the runner commits them), else null. */
  editedPrompt: string | null;
}

/** What a failed start must put back. */
interface Undo {
  /** The branch (or the sha of a detached HEAD) the tree was on, once a checkout has happened. */
  origin: string | null;
  createdBranch: boolean;
  /** Archive files and folders the runner created. */
  created: string[];
  /** A commit was attempted, so the index may hold staged runner files. */
  staged: boolean;
}

/** What the start read of git that later steps can use instead of asking again. */
export interface PreparedBranch {
  /** HEAD's commit once the tree is on the plan's branch; undefined when the runner cannot know it without asking. */
  head?: string | null;
  /** The prompt as committed at `head` (for the first iteration's check for edits), when read. */
  promptAtHead?: { key: string; text: string | null };
  /** The plan as committed at `head`, and its object, when read. */
  planAtHead?: { blob: string; text: string };
}

/** HEAD, whether the plan's branch exists, and the plan, the log and the prompt as committed at HEAD. */
interface HeadFiles extends HeadState {
  /** Whether the plan's branch exists (undefined: not asked). */
  exists?: boolean;
  plan: string | null;
  /** The plan's object name at HEAD, when git said it. */
  planBlob?: string;
  progress: string | null;
  prompt: string | null;
}

/**
 * HEAD (from the clean-tree check's status when it said it, else one rev-parse), whether the plan's branch exists, and
 * the plan, the log and the prompt as committed at HEAD: one cat-file --batch. That the branch exists is asked of
 * --batch too, which answers "missing" only when no ref has that name: any other answer is checked again on checkout.
 */
async function readHeadFiles(paths: RunPaths, branch: string, known: HeadState | null): Promise<HeadFiles> {
  const { otherExists, ...at }: HeadState & { otherExists?: boolean } =
    known ?? (await readHead(paths.repoRoot, branch));
  if (at.head === null) return { ...at, exists: otherExists, plan: null, progress: null, prompt: null };
  const inRepo = (file: string) =>
    !relPath(paths.repoRoot, file).startsWith('../') && !path.isAbsolute(relPath(paths.repoRoot, file));
  const files = [paths.prd, paths.progress, paths.prompt].filter(inRepo);
  const asks = known && at.branch !== branch;
  const specs = [
    ...files.map((f) => `${at.head}:${relPath(paths.repoRoot, f).split('\\').join('/')}`),
    ...(asks ? [`refs/heads/${branch}`] : []),
  ];
  const objects = await readNamedObjects(paths.repoRoot, specs);
  const blob = (file: string) => {
    const i = files.indexOf(file);
    const o = i < 0 ? null : objects[i];
    return o && o.type === 'blob' ? o : null;
  };
  const plan = blob(paths.prd);
  const exists = asks ? (objects[specs.length - 1] === null ? false : undefined) : otherExists;
  return {
    ...at,
    exists,
    plan: plan?.text ?? null,
    planBlob: plan?.sha,
    progress: blob(paths.progress)?.text ?? null,
    prompt: blob(paths.prompt)?.text ?? null,
  };
}

/** The prompt and the plan as committed at `head`, for the steps after the start (HEAD has not moved since they were read). */
function readAtHead(paths: RunPaths, head: string, at: HeadFiles): Pick<PreparedBranch, 'promptAtHead' | 'planAtHead'> {
  const plan =
    at.planBlob !== undefined && at.plan !== null ? { planAtHead: { blob: at.planBlob, text: at.plan } } : {};
  return { promptAtHead: { key: `${head}:${relPath(paths.repoRoot, paths.prompt)}`, text: at.prompt }, ...plan };
}

/**
 * `start`: git status and HEAD as read under the locks just before (run/dirty-tree.ts). When the status lists none of
 * the runner's start files and the start writes none, there is nothing to commit and status is not read again.
 */
export async function prepareBranch(
  run: RunContext,
  start?: { entries: readonly DirtyEntry[]; head: HeadState | null },
): Promise<PreparedBranch> {
  const { paths } = run;
  const dirty = start?.entries;
  const at = await readHeadFiles(paths, run.branch, start?.head ?? null);
  const started: StartFiles = {
    plan: readFileNoWait(paths.prd).toString('utf8'),
    progress: readOwnTextOrNull(paths.progress),
    editedPrompt: await readEditedPrompt(paths, async () => at.prompt),
  };
  const last = readLastBranch(paths);
  const oldBranch = last && last !== run.branch && !branchNameProblem(last) ? last : null;
  const undo: Undo = { origin: null, createdBranch: false, created: [], staged: false };
  let prepared: PreparedBranch;
  try {
    const switched = await switchBranch(run, started, at, oldBranch !== null, undo);
    const parts = await writeStartFiles(run, started, oldBranch, switched.planCommitted, undo);
    const untouched =
      dirty !== undefined && !dirty.some((e) => isStartFile(paths, e.path)) && !parts.length && !undo.created.length;
    const committed = untouched ? undefined : await commitStartFiles(run, parts, undo);
    const head = committed ?? switched.head;
    prepared = {
      head,
      ...(head !== undefined && head === at.head && head !== null ? readAtHead(paths, head, at) : {}),
    };
  } catch (err) {
    await rollBack(run, started, undo);
    if (err instanceof LoopExit) throw err;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not prepare branch ${run.branch}: ${(err as Error).message}`,
      'the working tree was put back as it was; fix the cause, then start again',
    );
  }
  const lastFile = lastBranchPath(paths.repoRoot, relPath(paths.repoRoot, paths.prd));
  mkdirSync(path.dirname(lastFile), { recursive: true });
  writeFileSync(lastFile, `${run.branch}\n`);
  return prepared;
}

/**
 * True for the files the runner itself commits at start: plan, log, archive (also after each iteration), and the
 * prompt, which users are told to tailor; an edit they did not commit is theirs, not the agent's work.
 */
export function isStartFile(paths: RunPaths, rel: string): boolean {
  const own = (p: string) => path.relative(paths.repoRoot, p).split(path.sep).join('/');
  return (
    rel === own(paths.prd) ||
    rel === own(paths.progress) ||
    rel === own(paths.prompt) ||
    rel.startsWith(`${own(path.join(path.dirname(paths.prd), 'archive'))}/`)
  );
}

/**
 * Checks out the plan's branch. The user's uncommitted plan (and, when it is about to be archived, the log) is
 * parked at its committed version so git can switch; writeStartFiles puts the user's text back afterwards.
 * Returns whether the user's plan was committed as it is (a clean copy, possibly stale).
 */
async function switchBranch(
  run: RunContext,
  started: StartFiles,
  at: HeadFiles,
  resetsProgress: boolean,
  undo: Undo,
): Promise<{ planCommitted: boolean; head?: string | null }> {
  const { repoRoot, prd, progress } = run.paths;
  const planCommitted = at.plan === started.plan;
  if (at.branch === run.branch) return { planCommitted, head: at.head };
  const origin = at.branch ?? at.head;
  await park(repoRoot, prd, started.plan, at.plan);
  // An edited prompt may differ on the plan's branch too; git would refuse to switch over it.
  if (started.editedPrompt !== null) await park(repoRoot, run.paths.prompt, started.editedPrompt, at.prompt);
  if (resetsProgress) await park(repoRoot, progress, started.progress, at.progress);
  const done = await checkoutBranch(repoRoot, run.branch, run.base, { current: at.branch, exists: at.exists });
  Object.assign(undo, { origin, createdBranch: done.created });
  run.emit({ type: 'info', message: done.message });
  // A branch made from HEAD starts at HEAD's commit; any other checkout moved HEAD to a commit not read here.
  return { planCommitted, ...(done.created && !run.base ? { head: at.head } : {}) };
}

async function park(repoRoot: string, file: string, text: string | null, committed: string | null): Promise<void> {
  if (text === null || text === committed) return;
  await runGit(repoRoot, ['reset', '-q', '--', relPath(repoRoot, file)]);
  if (committed === null) unlinkSync(file);
  else atomicWriteFileSync(file, committed);
}

/** Puts the user's plan on the branch, archives the previous run, makes sure a log exists; returns commit message parts. */
async function writeStartFiles(
  run: RunContext,
  started: StartFiles,
  oldBranch: string | null,
  planCommitted: boolean,
  undo: Undo,
): Promise<string[]> {
  const { paths, emit } = run;
  const parts: string[] = [];
  const onBranch = readOwnTextOrNull(paths.prd);
  if (onBranch !== started.plan) {
    // A clean copy with the same stories is a stale checkout of this plan: the branch holds the loop's progress on it.
    if (planCommitted && onBranch !== null && sameDefinition(onBranch, started.plan)) {
      emit({
        type: 'info',
        message: `kept ${relPath(paths.repoRoot, paths.prd)} as it is on ${run.branch}: the same plan, with the loop's progress`,
      });
    } else {
      atomicWriteFileSync(paths.prd, started.plan);
      parts.push(`start ${run.branch} with the plan the loop was started with`);
      emit({
        type: 'info',
        message: `${relPath(paths.repoRoot, paths.prd)} on ${run.branch} differed from the plan you started with; wrote yours back`,
      });
    }
  }
  if (oldBranch) {
    const oldPrd = await readOldPlan(paths, oldBranch);
    // The archive is written into ralph/archive/<date-branch>/: only through folders of the repository.
    refuseLinkedFolders(path.join(path.dirname(paths.prd), 'archive', 'branch', 'file'), paths.repoRoot);
    const archived = applyBranchArchive({
      prdPath: paths.prd,
      progressPath: paths.progress,
      oldBranch,
      oldPrd,
      oldProgress: started.progress,
      now: new Date(),
      samePlan: sameText,
    });
    undo.created.push(...archived.created);
    if (archived.dir)
      emit({
        type: 'info',
        message: `branch changed from ${oldBranch}: archived the previous run to ${relPath(paths.repoRoot, archived.dir)}`,
      });
    else
      emit({
        type: 'info',
        message: `branch changed from ${oldBranch}: nothing new to archive (already in ralph/archive/, or empty)`,
      });
    if (archived.dir || archived.progressWritten) parts.push('archive the previous run and start a fresh progress.txt');
  } else if (ensureProgressFile(paths.progress, new Date())) {
    parts.push('start progress.txt');
  }
  if (started.editedPrompt !== null) {
    if (readOwnTextOrNull(paths.prompt) !== started.editedPrompt)
      atomicWriteFileSync(paths.prompt, started.editedPrompt);
    if (!(await isIgnored(paths.repoRoot, paths.prompt))) {
      parts.push(renderPromptCommitPart(paths));
      emit({ type: 'info', message: renderPromptEditNote(paths, 'the first iteration') });
    }
  }
  return parts;
}

/**
 * Commits the plan, log and archive files that differ from HEAD: the runner's writes and what the user left uncommitted.
 * Returns the runner's new commit, or undefined when it made none (HEAD did not move).
 */
async function commitStartFiles(run: RunContext, parts: string[], undo: Undo): Promise<string | undefined> {
  const root = run.paths.repoRoot;
  const dirty = (await readDirtyPaths(root)).filter((p) => isStartFile(run.paths, p));
  if (!dirty.length) return undefined;
  undo.staged = true;
  const message = `chore(ralph): ${parts.length ? parts.join('; ') : 'commit the plan files left uncommitted at start'}`;
  const sha = await commitRunnerFiles(root, dirty, message, dirty);
  const shown = dirty.length > 4 ? `${dirty.slice(0, 4).join(', ')} and ${dirty.length - 4} more` : dirty.join(', ');
  if (sha) run.emit({ type: 'info', message: `committed ${shown} as ${sha.slice(0, 7)} (${message})` });
  return sha ?? undefined;
}

async function rollBack(run: RunContext, started: StartFiles, undo: Undo): Promise<void> {
  const { repoRoot, prd, progress } = run.paths;
  try {
    for (const p of undo.created.reverse()) rmSync(p, { recursive: true, force: true });
    const prompt = started.editedPrompt !== null ? [run.paths.prompt] : [];
    if (undo.staged)
      await runGit(repoRoot, ['reset', '-q', '--', ...[prd, progress, ...prompt].map((f) => relPath(repoRoot, f))]);
    if (undo.origin) {
      // The branch's own versions first, so git can switch back without a conflict.
      for (const file of [prd, progress, ...prompt])
        restore(file, await readFileAt(repoRoot, 'HEAD', relPath(repoRoot, file)));
      const detached = isObjectId(undo.origin);
      const back = await runGit(repoRoot, [
        'checkout',
        '--quiet',
        ...(detached ? ['--detach'] : []),
        undo.origin,
        '--',
      ]);
      if (back.code !== 0) throw new Error(`git checkout ${undo.origin}: ${back.stderr.trim()}`);
      if (undo.createdBranch) await runGit(repoRoot, ['branch', '-q', '-D', run.branch]);
    }
    restore(prd, started.plan);
    restore(progress, started.progress);
    if (started.editedPrompt !== null) restore(run.paths.prompt, started.editedPrompt);
  } catch (err) {
    run.emit({
      type: 'warn',
      message: `could not put everything back after the failed start: ${(err as Error).message}`,
    });
  }
}

function restore(file: string, text: string | null): void {
  if (text === null) rmSync(file, { force: true });
  else if (readTextOrNull(file) !== text) atomicWriteFileSync(file, text);
}

// The old plan: the copy the last run left when it ended, else the one committed on the old branch. The plan on
// disk never is: it names the new branch by the time branchName has changed.
async function readOldPlan(paths: RunPaths, oldBranch: string): Promise<string | null> {
  const candidates = [
    readTextOrNull(lastPlanPath(paths.repoRoot, relPath(paths.repoRoot, paths.prd))),
    await readFileOnBranch(paths.repoRoot, oldBranch, relPath(paths.repoRoot, paths.prd)),
  ];
  return candidates.find((text) => text !== null && namesBranch(text, oldBranch)) ?? null;
}

function namesBranch(text: string, branch: string): boolean {
  try {
    return (JSON.parse(text) as Prd).branchName === branch;
  } catch {
    return false;
  }
}

/** Same stories, criteria, checks and settings; only `passes` and `notes` may differ. */
export function sameDefinition(a: string, b: string): boolean {
  try {
    return planPrdRepair(a, b).restored.length === 0;
  } catch {
    return false;
  }
}

function sameText(a: string, b: string): boolean {
  try {
    return sameJson(JSON.parse(a), JSON.parse(b));
  } catch {
    return a.trimEnd() === b.trimEnd();
  }
}

function readLastBranch(paths: RunPaths): string {
  const file = lastBranchPath(paths.repoRoot, relPath(paths.repoRoot, paths.prd));
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

/** A file's text, or null when it cannot be read (missing, or not a file). */
/** The file's text, or null (util/read.ts; run/deps.ts reads the agent's plan with it too). */
