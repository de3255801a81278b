// What the runner decides with, held where the agent cannot quietly rewrite it (SPEC §6): the baseline plan (in
// memory; in git objects for a resume), the pins (the plan commit), and the snapshot of its own files and git's
// configuration. ralph/.runs/ is never read to decide a verdict.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Prd, Story } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readFileNoWait, readOwnTextOrNull, lstatOrNull } from '../../util/read.js';
import type { CheckEnvBase, Pins } from './types.js';
import type { Emit } from '../events.js';
import { holdRunnerPath } from '../git/harden.js';
import { headSha } from '../git/head.js';
import { readFileAt } from '../git/read.js';
import type { RepoLocation } from '../types.js';
import { planPrdRepair } from './prd-diff.js';
import { readBaseline, readPinCommit, pinsRef } from './baseline.js';
import { moveAnchoredRefs, readLoopRefs, type AnchorValues } from './anchors.js';
import { gitOk } from '../git/git.js';
import { readPins } from './pin-capture.js';
import { hashObject, ObjectMismatch } from '../git/objects.js';
import { renderSetupWarning } from './package-pins.js';
import { takeCheckEnvBase } from './check-env.js';
import { isLoaderVar, pythonPathFolders } from './repo-env.js';
import { worktreesFolder } from '../git/worktree.js';
import { recordsRoot } from '../store/layout.js';
import { ENGINE_FILES, heldEngineBytes, snapshotRunnerFiles, type RunnerGuard } from './runner-guard.js';
import { holdNestedGits, type NestedGits } from './nested-git.js';
import { type IndexView, readIndexView } from './index-flags.js';
import type { RunOptions } from '../loop-options.js';
import type { RunPaths } from '../types.js';
import type { ShippedReview } from './types.js';
import { guardWrite, LoopExit, WorkProtected, LOOP_EXIT } from '../errors.js';
import { keyDir, keyProblem, readKey } from '../store/verdict-record.js';
import { readShipped } from './shipped.js';
import { readHeldRefs, type HeldRefs } from './replace-refs.js';
import { hookScriptFolders, renderHooksInRepo } from './hook-scripts.js';
import { readToolBins, type ToolBins } from './tool-bins.js';
import { shellQuote } from '../../util/shell-quote.js';

export interface RunTrust {
  /** git's top level, real path. */
  topLevel: string;
  /** The plan as the runner last settled it; null until the first settlement of a loop that recorded none. */
  baseline: string | null;
  pins: Pins | null;
  guard: RunnerGuard;
  /** The commit each story's claim was verified at in this run (the final gate names the range that broke it). */
  verifiedAt: Map<string, string>;
  /** The reviewer's SHIP of each story accepted in this run, sealed into the verdict record by the final gate. */
  shipped: Map<string, ShippedReview>;
  /** Every SHIP of this run, in order, those of stories rejected since too: what a reviewer read stays read. */
  reviewed: ShippedReview[];
  /**
   * Whether the loop's SHIPs ref (verify/shipped.ts) may hold a record: false only while a loop started now has no such
   * ref (none sealed yet, none left by an earlier loop of its name). An empty record over no record says nothing, so
   * such a loop (no reviewer) writes none.
   */
  shippedRecorded: boolean;
  /** Stories whose checks passed on the plan commit before any work (the start's probe, or a resumed loop's ledger). */
  weak: Set<string>;
  /**
   * The last commit a reviewer shipped in this run: the next review's diff starts there, so a claim accepted without
   * a review (`"review": false`) in between is in it.
   */
  lastReviewed?: string;
  /**
   * The commit the loop's final gate last passed on, and whether every story it judged was verified (not on the
   * agent's word): --deliver pr-merge merges that commit or nothing (deliver/deliver-merge.ts).
   */
  gatePassed?: { commit: string; allVerified: boolean };
  /**
   * The key that seals the verdict record, held from the start (null: none could be had): under --sandbox its folder
   * exists before anything sandboxed runs, so it is hidden from all of it, and a key planted later is never used.
   */
  verdictKey: Buffer | null;
  /** git's common dir (hooks, config, objects), for the sandbox. */
  gitDir: string;
  /** The repositories at the index's gitlinks when the loop started (verify/nested-git.ts). */
  nested?: NestedGits;
  /** The index's skip-worktree and assume-unchanged flags when the loop started: yours (verify/index-flags.ts). */
  indexFlags?: IndexView['flagged'];
  /** When the loop (first) started, ms: a tracked file changed since may be the agent's (index-flags.ts distrustStat). */
  indexSince?: number;
  /** The refs but branches, your stash list and HEAD's reflog as the loop started: put back at its end (replace-refs.ts). */
  heldRefs?: HeldRefs;
  /**
   * Each local branch as the loop started (the loop's own and other loops' are skipped where compared), and those
   * checked out in a worktree at the place they were named: what an agent run's moves are put back to
   * (branch-moves.ts). Against the loop's start, so a move that once got through (a failed put-back) is not taken as
   * the next run's starting point.
   */
  heldBranches?: Map<string, string>;
  /** The folders in the repository that hold hook scripts git runs (hook-scripts.ts), named again at the loop's end. */
  hookFolders?: string[];
  /** The programs in node_modules/.bin as the loop started (tool-bins.ts), compared at the loop's end. */
  toolBins?: ToolBins;
  /** What the loop's pins and plan refs name, as the runner last set and sealed them (verify/anchors.ts). */
  anchored: AnchorValues;
  /** The checks' HOME seed, PATH and toolchains as at loop start (verify/check-env.ts). */
  checkBase: CheckEnvBase;
  /** True once `baseline` is the text recorded in git (settleBaseline skips writing it again). */
  recorded?: boolean;
  /** The text establishTrust pointed a new loop's plan ref at (the committed plan), until the first settlement. */
  planRefText?: string;
  /** `baseline` parsed: the plan object it was rendered from, frozen so that nothing can edit it behind the text. */
  baselinePrd?: Prd;
  /** `baseline` as bytes (set with baselinePrd). */
  baselineBytes?: Buffer;
}

/**
 * Before a resumed loop reads its plan: the plan on disk is compared with the runner's own last record of it (or,
 * when that record is gone, with the plan at the loop's plan commit). A file the agent left half-written (a kill
 * mid-write) is backed up and replaced by that record; edits beyond `passes` and `notes` (the owner's, between runs,
 * or an agent's before a kill), and stories set aside since the plan commit (SPEC §13: only the plan's own skips
 * count), are shown and need --accept-plan-edits. Returns the baseline claims are judged against (`passes` as the
 * runner last settled them), or null when no record exists.
 */
export async function settleResumedPlan(
  paths: RunPaths,
  loopId: string,
  options: RunOptions,
  emit: Emit,
  ask?: (question: string) => Promise<boolean>,
): Promise<string | null> {
  const rel = path.relative(paths.repoRoot, paths.prd).split(path.sep).join('/');
  const planCommit = await readPinCommit(paths.repoRoot, loopId);
  const atPlanCommit = planCommit ? await readFileAt(paths.repoRoot, planCommit, rel) : null;
  const recorded = (await readBaseline(paths.repoRoot, loopId)) ?? atPlanCommit;
  if (recorded === null) return null;
  const disk = readOwnTextOrNull(paths.prd);
  if (disk === null || !parsesAsPlan(disk)) {
    // Read without following a link (readOwnTextOrNull): a link there is the agent's, and the file it leads to is not
    // the plan's to back up into the repository (the verdict record's key, hidden from the sandbox, was).
    const saved = disk === null ? null : backUp(paths, rel, disk);
    await confirmPlanEdits(renderLateSkips(recorded, atPlanCommit), rel, loopId, options, emit, ask);
    atomicWriteFileSync(paths.prd, recorded);
    emit({
      type: 'warn',
      message: `${rel} was ${disk === null ? (lstatOrNull(paths.prd) ? 'not a file (a link, a pipe or a folder), left unread' : 'missing') : 'not a readable plan (left half-written?)'}; restored the runner's last record of it${saved ? `, and kept the damaged file as ${saved}` : ''}`,
    });
    return recorded;
  }
  const repair = planPrdRepair(recorded, disk, rel);
  const edits = [...repair.restored.map((r) => r.replace(/; restored$/, '')), ...renderLateSkips(disk, atPlanCommit)];
  if (!edits.length) return recorded;
  await confirmPlanEdits(edits, rel, loopId, options, emit, ask);
  return renderAcceptedBaseline(recorded, disk);
}

/**
 * Stories set aside in `plan` that the plan commit did not set aside. The runner's record can be moved by an agent
 * that also kills the runner; the plan commit is what the pins, and the loop's start, rest on.
 */
function renderLateSkips(plan: string, atPlanCommit: string | null): string[] {
  const before = new Set(skippedIds(atPlanCommit));
  return skippedIds(plan)
    .filter((id) => !before.has(id))
    .map((id) => `story ${id}: set aside (skip) since the loop's plan commit`);
}

function skippedIds(text: string | null): string[] {
  if (text === null) return [];
  try {
    const plan = JSON.parse(text) as Prd;
    return Array.isArray(plan?.userStories)
      ? plan.userStories.filter((s) => s && isSkipped(s)).map((s) => String(s.id))
      : [];
  } catch {
    return [];
  }
}

async function confirmPlanEdits(
  edits: string[],
  rel: string,
  loopId: string,
  options: RunOptions,
  emit: Emit,
  ask?: (question: string) => Promise<boolean>,
): Promise<void> {
  if (!edits.length) return;
  const list = [...new Set(edits)].map((e) => `  - ${e}`).join('\n');
  const accepted =
    options.acceptPlanEdits ||
    (ask
      ? await ask(
          `${rel} changed since loop ${loopId} stopped, beyond passes and notes:\n${list}\nAre these your edits, to continue with? [y/N] `,
        )
      : false);
  if (!accepted) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${rel} changed since loop ${loopId} stopped, beyond passes and notes:\n${list}`,
      `if these are your edits, continue with them: ./ralph/ralph.sh --resume ${loopId} --accept-plan-edits; to drop them: git diff -- ${shellQuote(rel)} shows them, git checkout -- ${shellQuote(rel)} undoes uncommitted ones`,
    );
  }
  emit({
    type: 'warn',
    message: `accepted the edits to ${rel}${options.acceptPlanEdits ? ' (--accept-plan-edits)' : ''}:\n${list}`,
  });
}

/**
 * The edited plan with each story's `passes` as the runner last settled it (new stories: false), so flips stay claims;
 * a story the owner set aside with a `passes` spelling ("cancelled") keeps it, as `skip: true` would be kept.
 */
export function renderAcceptedBaseline(recorded: string, edited: string): string {
  const before = JSON.parse(recorded) as Prd;
  const plan = JSON.parse(edited) as Prd;
  const passes = new Map(before.userStories.map((s) => [s.id, s.passes === true]));
  const settle = (s: Story): Story => ({
    ...s,
    passes: typeof s.passes === 'string' && isSkipped(s) ? s.passes : (passes.get(s.id) ?? false),
  });
  return `${JSON.stringify({ ...plan, userStories: plan.userStories.map(settle) }, null, 2)}\n`;
}

/** What the start has just read of git (run/branch.ts, git/git.ts resolveRepo), so establishTrust need not ask again. */
export interface KnownAtStart {
  /** HEAD's commit now (undefined: not known, git is asked). */
  head?: string | null;
  /** git's folders for paths.repoRoot. */
  dirs?: RepoLocation;
  /** The plan file as committed at `head`, and its object (run/branch.ts). */
  plan?: { blob: string; text: string };
  /** A resumed loop's first start (ms), from its state.json (read-only to a sandboxed agent): see holdNestedGits. */
  loopStartedAt?: number;
}

/**
 * Once the loop is on its branch: the pins (a new loop pins HEAD, the plan commit; a resumed one keeps its own, or
 * takes HEAD's with --repin) and the snapshot of the runner's files and git's configuration.
 */
export async function establishTrust(
  paths: RunPaths,
  topLevel: string,
  loopId: string,
  resumed: boolean,
  options: RunOptions,
  baseline: string | null,
  emit: Emit,
  known: KnownAtStart = {},
): Promise<RunTrust> {
  const startedAt = Date.now();
  const head = known.head !== undefined ? known.head : await headSha(paths.repoRoot);
  const commit = resumed && !options.repin ? await readPinCommit(paths.repoRoot, loopId) : head;
  if (resumed && !commit && !options.repin) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `loop ${loopId} has no record of its pinned tests (${pinsRef(loopId)} is missing)`,
      `pin the tests as they are now and continue: ./ralph/ralph.sh --resume ${loopId} --repin`,
    );
  }
  if (options.repin && commit)
    emit({ type: 'warn', message: `--repin: checks now run with the tests as committed at ${commit.slice(0, 7)}` });
  // The runner's own record when there is one: the file on disk may be an agent's half-written edit (in-session loops).
  const plan = JSON.parse(
    baseline !== null && parsesAsPlan(baseline) ? baseline : readFileNoWait(paths.prd).toString('utf8'),
  ) as Prd;
  let pins: Pins | null = null;
  // Held before the pins are sealed with it (and before anything sandboxed runs).
  const verdictKey = holdVerdictKey(emit);
  // A resume has just held the refs against their seal (verify/resume-anchors.ts) and put them back where needed.
  const { anchors: before, shipped: shippedRefFound, held, branches } = await readLoopRefs(paths.repoRoot, loopId);
  // A new loop's plan ref starts as the plan committed at its plan commit (what a resume would read without it), set
  // with the pins in one git process; a resumed loop's plan ref is its settled record and stays.
  const fresh = !resumed && known.plan !== undefined && known.plan !== null && known.head === commit;
  const anchored: AnchorValues = { pins: commit, plan: fresh ? known.plan!.blob : before.plan };
  const planRefText = fresh ? known.plan!.text : undefined;
  const guard = await snapshotRunnerFiles(paths.repoRoot, known.dirs);
  // The repository's PATH folders, PYTHONPATH folders and variables naming it, once: by where they lead now.
  const checkBase = takeCheckEnvBase(process.env, topLevel, {
    // --verify-in-place checks run in your tree, outside the sandbox: what they write is listed as without it.
    ...(options.sandbox && !options.verifyInPlace
      ? { sandboxWritable: sandboxWritable(paths.repoRoot, topLevel, guard.gitDir) }
      : {}),
  });
  if (commit) {
    await moveAnchoredRefs(paths.repoRoot, loopId, anchored, before, verdictKey);
    pins = await capturePins(topLevel, commit, plan, {
      pathFolders: checkBase.leftOutRel ?? [],
      pythonPath: pythonPathFolders(process.env, topLevel),
    });
    const files = [...pins.tree.keys()];
    const setup = options.verifyInPlace ? null : renderSetupWarning(files, plan);
    if (setup) emit({ type: 'warn', message: setup });
    // A clone of the claimed commit brings no submodule content with it.
    if (!options.verifyInPlace && files.includes('.gitmodules'))
      emit({
        type: 'warn',
        message:
          'this repository has submodules: the fresh checkout the checks run in has none of their files; if a check needs them, run the loop with --verify-in-place',
      });
  }
  if (pins && head) pins = { ...pins, runnerFiles: await readRunnerFiles(topLevel, head, pins, guard) };
  // The index as the loop starts: the flags set in it are yours (verify/index-flags.ts), its gitlinks your repositories.
  const ownGitDir = guard.ownGitDir ?? guard.gitDir;
  const index = await readIndexView(paths.repoRoot, ownGitDir, null);
  const nested = await holdNestedGits(paths.repoRoot, ownGitDir, known.loopStartedAt, index);
  // The runner's own git looks for what it starts by name (a filter's program, a credential helper) on PATH as the
  // loop started with it, without the repository's folders: a `git-crypt` the agent puts into node_modules/.bin is
  // not the user's filter.
  const named = Object.entries(checkBase.repoVars ?? {});
  holdRunnerPath(
    checkBase.path.map((p) => p.dir),
    named.map(([name]) => name),
  );
  // The dynamic loader's variables naming the repository go for everything the runner starts from now on: the
  // sandbox's bwrap, gh and the agent itself load their libraries before any sandbox is up.
  const loaders = named.filter(([name]) => isLoaderVar(name)).map(([name]) => name);
  for (const name of loaders) delete process.env[name];
  if (loaders.length)
    emit({
      type: 'info',
      message: `${loaders.join(', ')} name${loaders.length === 1 ? 's' : ''} a path in the repository, where the agent can put a library that every program started with ${loaders.length === 1 ? 'it' : 'them'} loads (bwrap and git included, outside the sandbox): left out of everything this loop starts, the agent included`,
    });
  const hooksHere = hookScriptFolders(
    topLevel,
    guard.dirs.map((d) => d.abs),
  );
  if (hooksHere.length) emit({ type: 'info', message: renderHooksInRepo(hooksHere) });
  if (checkBase.leftOut?.length)
    emit({
      type: 'info',
      message: `PATH folders inside the repository (${checkBase.leftOut.join(', ')}) are left out of what the runner starts (setup, the reviewer, --on-exit, its git): the agent can write what they hold; each check finds its checkout's own copy of them instead`,
    });
  const dropped = named.filter(([name, v]) => v.how === 'drop' && !isLoaderVar(name)).map(([name]) => name);
  if (dropped.length)
    emit({
      type: 'info',
      message: `${dropped.join(', ')} name${dropped.length === 1 ? 's' : ''} a file in the repository, which the agent can rewrite where no commit shows it (an ignored .pnp.cjs): left out of what the checks, setup, the reviewer and --on-exit get (a check that needs it sets it itself, for its checkout: \`yarn test\` does)`,
    });
  // A resumed loop's earlier SHIPs, so its final gate seals them again (verify/shipped.ts).
  const shipped = resumed ? await readShipped(topLevel, loopId, head, verdictKey) : new Map<string, ShippedReview>();
  return {
    topLevel,
    baseline,
    pins,
    guard,
    verifiedAt: new Map(),
    shipped,
    reviewed: [],
    shippedRecorded: resumed || shippedRefFound,
    weak: new Set(),
    gitDir: guard.gitDir,
    nested,
    indexFlags: index.flagged,
    indexSince: known.loopStartedAt ?? startedAt,
    heldRefs: readHeldRefs(held, guard.gitDir, ownGitDir),
    heldBranches: branches,
    hookFolders: hooksHere,
    toolBins: readToolBins(topLevel),
    verdictKey,
    anchored,
    checkBase,
    ...(planRefText === undefined ? {} : { planRefText }),
  };
}

/**
 * The runner's own files by blob id, as the loop runs them (the working tree's bytes, which ralph.sh checked against
 * the manifest), for those HEAD tracks; null for the others. Not HEAD's blobs: a commit of the agent's made through
 * the index alone holds another engine there, and a resume after a kill would take it for the runner's. Which files
 * HEAD tracks: the pins' tree when HEAD is the plan commit (a new loop: no git process), else git.
 */
async function readRunnerFiles(
  top: string,
  head: string,
  pins: Pins,
  guard: RunnerGuard,
): Promise<Map<string, string | null>> {
  const tracked =
    pins.commit === head
      ? ENGINE_FILES.filter((f) => pins.tree.has(f))
      : (await gitOk(top, ['ls-tree', '-z', '--name-only', head, '--', ...ENGINE_FILES])).split('\0');
  const held = heldEngineBytes(guard);
  return new Map(
    ENGINE_FILES.map((f) => {
      const bytes = held.get(f);
      return [f, tracked.includes(f) && bytes ? hashObject(pins.format, 'blob', bytes) : null];
    }),
  );
}

/**
 * Under --sandbox, the host folders a sandboxed agent of this loop can write (agents/sandbox.ts planBinds): the tree it
 * works in, the main tree, git's common folder and the loop worktrees beside the main tree. Its HOME and /tmp are
 * private layers.
 */
export function sandboxWritable(repoRoot: string, topLevel: string, gitDir: string): string[] {
  const main = recordsRoot(repoRoot);
  return [...new Set([topLevel, repoRoot, main, gitDir, worktreesFolder(main)])];
}

/**
 * The pins with their bytes, read from the plan commit down and hashed against their ids: an object that is not what
 * its id says stops the loop (exit 6) before anything is verified with it.
 */
async function capturePins(
  top: string,
  commit: string,
  plan: Prd,
  env: { pathFolders: string[]; pythonPath: string[] },
): Promise<Pins> {
  try {
    return await readPins(top, commit, plan, env.pathFolders, env.pythonPath);
  } catch (err) {
    if (!(err instanceof ObjectMismatch)) throw err;
    throw new WorkProtected(
      `the plan commit ${commit.slice(0, 7)} cannot be read as committed: ${err.message} (something rewrote .git/objects: an object replaced in place, a pack or an alternate store of its own); the pinned tests would not be the ones you committed`,
      `find the damaged objects: git fsck --full; restore them from another clone or a backup (or git fetch from a remote that has the commit), then continue with: ./ralph/ralph.sh --resume-last`,
    );
  }
}

/** The record key, created now if there is none; a file the runner would not have written is named, and not used. */
export function holdVerdictKey(emit: Emit): Buffer | null {
  const key = readKey(true);
  if (key) return key;
  const problem = keyProblem();
  emit({
    type: 'warn',
    message: `${problem ? `refusing the key that seals the verdict record (${problem})` : `could not create the key that seals the verdict record (${keyDir()}/verdict.key)`}; status will show this loop's verdicts as reported, not verified${problem ? '; if you did not make that file, remove it and a new key is made (records sealed with the old one then show as reported)' : ''}`,
  });
  return null;
}

/**
 * After a verification pass: the plan as the runner itself decided it (never re-read from disk, where a process
 * started by a check could have rewritten it since) is the new baseline, in memory and in git.
 */
export async function settleBaseline(
  paths: RunPaths,
  loopId: string,
  trust: RunTrust,
  emit: Emit,
  prd: Prd,
): Promise<void> {
  // A pass that changed nothing hands back the very (frozen) plan the baseline was rendered from.
  if (prd === trust.baselinePrd && trust.recorded) return;
  const text = `${JSON.stringify(prd, null, 2)}\n`;
  trust.baselinePrd = deepFreeze(prd);
  trust.baselineBytes = Buffer.from(text, 'utf8');
  // Most iterations leave the plan as it was: no need to write the same record again.
  if (text === trust.baseline && trust.recorded) return;
  trust.baseline = text;
  trust.recorded = true;
  const inGit = trust.planRefText;
  trust.planRefText = undefined;
  if (text === inGit) return;
  try {
    // The record is sealed with the pins before the ref moves (verify/anchors.ts): a resume checks the two agree.
    const blob = (await gitOk(paths.repoRoot, ['hash-object', '-w', '--stdin'], text)).trim();
    const before = trust.anchored;
    trust.anchored = { pins: before.pins, plan: blob };
    await moveAnchoredRefs(paths.repoRoot, loopId, trust.anchored, before, trust.verdictKey);
  } catch (err) {
    emit({
      type: 'warn',
      message: `could not record the plan in git (refs/ralphkit): ${(err as Error).message}; a resume would verify every story that says passes: true`,
    });
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

function parsesAsPlan(text: string): boolean {
  try {
    const v = JSON.parse(text) as Prd;
    return !!v && typeof v === 'object' && Array.isArray(v.userStories);
  } catch {
    return false;
  }
}

/** The damaged plan's text (as read, not the file again) kept under ralph/.backup/, written only through real folders. */
function backUp(paths: RunPaths, rel: string, text: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const to = path.join(paths.repoRoot, 'ralph', '.backup', stamp, rel);
  guardWrite(
    to,
    paths.repoRoot,
    () => {
      mkdirSync(path.dirname(to), { recursive: true });
      atomicWriteFileSync(to, text);
    },
    'the damaged plan could not be kept',
  );
  return path.relative(paths.repoRoot, to).split(path.sep).join('/');
}
