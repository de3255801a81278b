// One run's lifecycle: settles the start (preflight.ts, trust.ts), takes the locks, puts the repository on the
// plan's branch (branch.ts), hands the iterations to the loop (core/loop.ts) with the real edges wired in
// (deps.ts), and records how it ended.
import { readFileNoWait } from '../../util/read.js';
import type { BudgetGate } from '../budget/types.js';
import type { RunIo, RunPaths, RunContext } from '../types.js';
import type { RunOptions } from '../loop-options.js';
import type { LoopState } from '../store/state-types.js';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import { isSettled } from '../../prd/skip.js';
import type { Emit } from '../events.js';
import { realClock } from '../clock.js';
import { resolveRepo } from '../git/git.js';
import type { RepoLocation } from '../types.js';
import { acquireLock, acquireTreeLock } from '../store/locks.js';
import { removeDeadTempFolders, renderRemovedTempFolders, setTempOwner } from '../store/temp-folders.js';
import { ledgerPath, loopDir, newLoopId, statePath } from '../store/layout.js';
import { writeState } from '../store/state-file.js';
import { isCancelRequested, clearCancelMarker } from '../store/cancel.js';
import { readPlan, refuseExamplePlan, checkPromptFile, resolvePaths } from '../plan-file.js';
import {
  locatePlan,
  refuseWaitWithoutCeiling,
  refuseUnboundedLoop,
  reportsCost,
  reviewerReportsCost,
  renderUnpricedReviewer,
  reportSetAside,
} from './preflight.js';
import { findResumable, mergeResumedOptions, refuseExhausted } from './resume.js';
import { stopOrphanAgents } from '../store/orphans.js';
import { planAgent, renderAgentCommand, renderMissingAgent } from '../agents/index.js';
import { runLoop } from '../core/loop.js';
import { runParallel } from './parallel/run.js';
import { restoreIntegrationTree } from './parallel/merge.js';
import { renderAllPass } from '../core/exits.js';
import { createBudget } from '../budget/wire.js';
import { renderUncheckedWarning } from '../verify/report.js';
import { printDryRun } from './dry-run.js';
import { hasReviewer, refuseReviewSetup, renderReviewCommand } from './review-setup.js';
import { captureReviewerLogin } from '../verify/review-home.js';
import { buildDeps, finishResumedIteration, loopConfig, pipelineOf } from './deps.js';
import { finalGate, verifyInput } from '../verify/pipeline.js';
import { prepareBranch } from './branch.js';
import type { PromptCache } from './upkeep.js';
import { verifyStartClaims } from '../verify/start-claims.js';
import { refuseDirtyTree, type StartStatus } from './dirty-tree.js';
import { establishTrust, settleBaseline, settleResumedPlan, type RunTrust } from '../verify/trust.js';
import { nameOwedPutBacks, settleRefsAtEnd, settleRefsAtResume } from './ref-sweep.js';
import { nameHookScripts } from '../verify/hook-scripts.js';
import { settleToolBins } from '../verify/tool-bins.js';
import { holdResumeAnchors } from '../verify/resume-anchors.js';
import { refuseModifiedEngine } from '../verify/engine-check.js';
import { holdPathEnv } from '../verify/check-env.js';
import { withRepoVars } from '../verify/repo-env.js';
import { readUnseenAgent, refuseUnseenAgent } from '../agents/sandbox-visible.js';
import { decideSandbox, type SandboxChoice } from './sandbox-default.js';
import { adoptDeadQuarantines, probeSandboxOnce } from './sandbox.js';
import { probeWeakChecks, readWeakStories, unprobedStories } from '../verify/weak-checks.js';
import { createInterface } from 'node:readline/promises';
import { LoopExit, LOOP_EXIT, describeError, usageExit, EXIT_FAILURE } from '../errors.js';
import { findExecutable } from '../agents/check.js';
import { showPath } from '../../util/repo-path.js';
import { loopCommand } from '../../util/invocation.js';
import { announceEnd } from '../deliver/announce.js';
import { deliverAtEnd } from '../deliver/deliver.js';
import { deliverOrNotMerged, finish, initialState, type RunEnd } from './finish.js';
import { refuseParallelOptions, withWebhookFromEnv } from './options.js';
import { holdEndPrograms } from '../deliver/programs.js';
import { enterWorktree, leaveWorktree, refuseWorktreeOptions, type WorktreeRun } from './worktree-start.js';
import { refuseBranchElsewhere, worktreePath } from '../git/worktree.js';
import { shellQuote } from '../../util/shell-quote.js';
import { interruptedOr, listenForInterrupts, type Interrupt } from './interrupt.js';

// Stands in for the prompt when the command line is shown before any prompt is read.
const PROMPT_PLACEHOLDER = '\0prompt';

/**
 * Runs the loop with parsed options: settles the start, takes the locks, runs the iterations and records how
 * they ended. Returns the exit code (SPEC §4); a refusal before the loop is recorded is thrown as a LoopExit.
 */
export async function startRun(
  parsed: RunOptions,
  given: Set<keyof RunOptions>,
  io: RunIo,
  emit: Emit,
): Promise<number> {
  // --max-duration counts from here: a CI job's time limit counts from before the start's own checks too.
  const started = realClock.now().getTime();
  const repo = await resolveRepo(io.cwd);
  const repoRoot = repo.top;
  const resumed = parsed.resume || parsed.resumeLast ? findResumable(repoRoot, parsed) : null;
  const merged = withWebhookFromEnv(resumed ? mergeResumedOptions(resumed.options, parsed, given) : parsed, io.env);
  const sandbox = decideSandbox(merged, given, resumed, () => probeSandboxOnce(io.env));
  const options: RunOptions = { ...merged, sandbox: sandbox.sandbox };
  if (sandbox.note) emit({ type: 'warn', message: sandbox.note });
  if (resumed) {
    refuseWaitWithoutCeiling(options);
    refuseUnboundedLoop(options);
    refuseExhausted(resumed, options);
    refuseParallelOptions(options, given, resumed.id);
  }
  refuseWorktreeOptions(options, resumed);
  const tree: WorktreeRun = { mainRoot: repoRoot, root: null, mayRemove: false };
  const id = resumed?.id ?? options.name ?? newLoopId(new Date());
  // From before the first side effect (a worktree, a branch): a Ctrl-C while the start is set up ends the loop at its
  // first step (130, resumable) instead of killing the runner between a worktree made and a loop recorded.
  const { stop, dispose } = listenForInterrupts();
  try {
    return await startIn({ repo, id, options, given, resumed, io, emit, tree, started, stop, sandbox });
  } finally {
    await leaveWorktree(tree, id, emit);
    dispose();
  }
}

interface StartInput {
  repo: RepoLocation;
  id: string;
  options: RunOptions;
  given: Set<keyof RunOptions>;
  resumed: LoopState | null;
  io: RunIo;
  emit: Emit;
  tree: WorktreeRun;
  /** When this invocation started (epoch ms): --max-duration counts from it. */
  started: number;
  stop: Interrupt;
  sandbox: SandboxChoice;
}

async function startIn({
  repo,
  id,
  options,
  given,
  resumed,
  io,
  emit,
  tree,
  started,
  stop,
  sandbox,
}: StartInput): Promise<number> {
  const repoRoot = repo.top;
  let paths = resolvePaths(repoRoot, io.cwd, locatePlan(repoRoot, options, given, resumed !== null, emit), given);
  const inTree = options.worktree && !options.dryRun;
  // A resumed worktree loop's plan is the one on its branch, in its worktree.
  // A --parallel run's tree is the merge queue's: a kill may have left it mid-merge, off its branch.
  // Where that tree is comes from the loop's id, not from state.json (the agents' to write): a path named there could
  // be your working tree, and the restore drops what is uncommitted in it. (The branch still comes from state.json: a
  // wrong one makes the restore fail or tidy the run's own tree only.)
  if (inTree && resumed?.worktree && options.parallel)
    await restoreIntegrationTree(worktreePath(tree.mainRoot, id), resumed.worktree.branch);
  if (inTree && resumed?.worktree)
    paths = await enterWorktree(tree, paths, id, resumed.worktree.branch, undefined, true, emit);
  // A resumed loop's plan is held against the runner's own record of it before anything reads it.
  const ask = process.stdin.isTTY && process.stderr.isTTY && !options.json ? askYesNo : undefined;
  // First of all, its refs (pins, plan record) must be the ones the runner sealed (exit 6 otherwise).
  if (resumed && !options.dryRun) {
    try {
      await holdResumeAnchors(paths.repoRoot, resumed.id, options, emit);
    } catch (err) {
      // Stopped before the plan is read: the push at the end says why it does not happen, as for any refused loop.
      if (options.deliver !== 'commit')
        emit({
          type: 'info',
          message: `--deliver ${options.deliver}: nothing pushed at the end (the loop is protected); look at the branch first, as the hint says`,
        });
      throw err;
    }
  }
  const baseline = resumed && !options.dryRun ? await settleResumedPlan(paths, resumed.id, options, emit, ask) : null;
  let prd = await readPlan(paths, emit);
  checkPromptFile(paths);
  const probe = planAgent({
    agent: options.agent,
    agentCmd: options.agentCmd,
    prompt: PROMPT_PLACEHOLDER,
    runDir: loopDir(repoRoot, id),
    iteration: 1,
    env: io.env,
  });
  if (options.dryRun) {
    warnExamplePlan(prd, paths, emit);
    const unseen = options.sandbox
      ? readUnseenAgent(options, { repoRoot: realpathSync(paths.repoRoot), gitDir: repo.commonDir, env: io.env })
      : null;
    if (unseen) emit({ type: 'warn', message: `the run would refuse to start: ${unseen.message}; ${unseen.hint}` });
    return printDryRun({
      options,
      paths,
      command: renderAgentCommand(probe, PROMPT_PLACEHOLDER),
      reviewCommand: renderReviewCommand(options, repoRoot, io.env),
      io,
      emit,
      json: options.json,
    });
  }
  refuseExamplePlan(prd, paths);
  reportSetAside(prd, paths, emit);
  // The engine that runs is the user's tree's (ralph/ralph.sh started it there), whatever the worktree holds.
  refuseModifiedEngine(
    repoRoot,
    options.allowModifiedEngine,
    (message) => emit({ type: 'warn', message }),
    io.packagedEngine,
  );
  refuseSandbox(options, io.env, sandbox);
  const reviewerBin = refuseReviewSetup(prd, options, paths, io.env, emit);
  // Before any agent runs: its writes to HOME must not decide where the reviewer's requests go.
  const reviewerLogin =
    hasReviewer(options) && !options.reviewCmd
      ? captureReviewerLogin(options.reviewAgent ?? options.agent, io.env)
      : undefined;
  if (!options.agentCmd && !findExecutable(probe.file, io.env)) {
    const missing = renderMissingAgent(options.agent, io.env);
    throw new LoopExit(LOOP_EXIT.refused, missing.message, missing.hint);
  }
  if (options.sandbox)
    refuseUnseenAgent(options, { repoRoot: realpathSync(paths.repoRoot), gitDir: repo.commonDir, env: io.env });
  if (!resumed && existsSync(statePath(repoRoot, id))) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `a loop named "${id}" already exists`,
      `continue it with --resume ${id}, or pick another --name`,
    );
  }
  if (inTree && !resumed) {
    paths = await enterWorktree(tree, paths, id, prd.branchName, prd.baseBranch, false, emit);
    prd = await readPlan(paths, emit);
  } else if (!inTree) {
    await refuseBranchElsewhere(repoRoot, prd.branchName, repo.commonDir);
  }
  warnAtStart(options, io, emit);
  holdEndPrograms(io.env);
  const worktree = tree.root ? { worktree: { path: tree.root, branch: prd.branchName } } : {};
  const run: RunContext = {
    id,
    options,
    paths,
    resumed,
    baseline,
    io,
    emit,
    command: renderAgentCommand(probe, PROMPT_PLACEHOLDER),
    branch: prd.branchName,
    base: prd.baseBranch,
    ...(reviewerBin ? { reviewerBin } : {}),
    ...(reviewerLogin ? { reviewerLogin } : {}),
    ...deadlineOf(options, started),
    ...worktree,
    repo,
  };
  if (stop.signalled) run.signalled = stop.signalled;
  stop.run = run;
  const end: RunEnd = { delivered: false };
  stop.end = end;
  try {
    return await startGuarded(run, stop.controller, tree, end);
  } finally {
    if (end.trust && end.ending)
      await nameHookScripts(end.trust.topLevel, end.trust.hookFolders ?? [], end.trust.pins?.commit, run.branch, emit);
    if (end.ending) {
      await deliverAtEnd(run, end.trust, end.ending.status, end.delivered);
      // --on-exit runs outside the sandbox: with PATH as the loop started with it, so a program the agent put into a
      // PATH folder since (node_modules/.bin, first on PATH under npx) is not what its command runs.
      const held = options.onExit && end.trust ? tryHoldPathEnv(end.trust.checkBase, io.env, emit) : null;
      if (held?.changed.length)
        emit({
          type: 'warn',
          message: `PATH folders changed since the loop started; --on-exit runs without their new entries: ${held.changed.join('; ')}`,
        });
      try {
        await announceEnd({
          ending: end.ending,
          options,
          cwd: paths.repoRoot,
          env: held?.env ?? io.env,
          emit,
          signal: stop.late.signal,
        });
      } finally {
        held?.remove();
      }
    }
  }
}

function deadlineOf(options: RunOptions, started: number): { deadline?: number } {
  return options.maxDurationMs === undefined ? {} : { deadline: started + options.maxDurationMs };
}

/** A yes/no question at the terminal (stdin and stderr are one); anything but y or yes is no. */
async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y|yes)$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** --sandbox where bubblewrap cannot run refuses the start (exit 2) with what to install or change. */
function refuseSandbox(options: RunOptions, env: NodeJS.ProcessEnv, choice: SandboxChoice): void {
  // Checked on the options a resume merged, too (run.ts, not args.ts): --no-network may come from the stored ones.
  if (!options.network && !options.sandbox)
    throw usageExit(
      "--no-network needs the sandbox: only the sandbox can cut the agent's network, and this loop runs without it (./ralph/ralph.sh --sandbox --no-network says why)",
    );
  if (!options.sandbox) return;
  const probe = choice.probe ?? probeSandboxOnce(env);
  if (!probe.ok) throw new LoopExit(LOOP_EXIT.refused, probe.message, probe.hint);
}

function warnAtStart(options: RunOptions, io: RunIo, emit: Emit): void {
  if (!options.agentCmd && options.agent === 'claude' && process.getuid?.() === 0 && !io.env.IS_SANDBOX) {
    emit({
      type: 'warn',
      message:
        'running as root: Claude Code refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1 is set (only do that in a sandbox)',
    });
  }
  if (options.maxCost === undefined) return;
  const agent = options.agentCmd ? 'an --agent-cmd agent' : options.agent;
  const reviewer = renderUnpricedReviewer(options);
  if (!reportsCost(options))
    emit({
      type: 'warn',
      message: `--max-cost: ${agent} reports no cost, so ${reviewerReportsCost(options) ? "only the reviewer's runs count against this limit" : 'this limit cannot trigger'}`,
    });
  if (reviewer)
    emit({
      type: 'warn',
      message: `--max-cost: ${reviewer} reports no cost, so its runs do not count against this limit`,
    });
}

/**
 * Every refusal before any side effect: the usage ceiling (unless the user asked to wait for it), the locks
 * (this plan, then this working tree), and uncommitted work in the tree. Only then is the loop recorded.
 */
async function startGuarded(
  run: RunContext,
  controller: AbortController,
  tree: WorktreeRun,
  end: RunEnd,
): Promise<number> {
  const { options, paths, io, emit } = run;
  const budget = createBudget({ options, clock: realClock, env: io.env, emit, signal: controller.signal });
  // A wait can take hours: the loop is recorded first, so status shows it and cancel can stop it.
  const waits = options.wait || options.waitNextSession;
  if (!waits) await budget.beforeStart();
  const releasePlan = acquireLock(paths.repoRoot, paths.prd, run.id);
  try {
    const releaseTree = acquireTreeLock(paths.repoRoot, paths.prd, run.id);
    // Held by this runner: no other is in the worktree, so it may go at the end.
    tree.mayRemove = tree.root !== null;
    try {
      for (const o of await stopOrphanAgents(paths.repoRoot, run.id)) {
        emit({
          type: 'warn',
          message: `loop ${o.loopId}'s runner is gone (killed) but its agent was still running in this working tree (process group ${o.agentPid}); stopped it, as ${loopCommand(`cancel ${o.loopId}`)} would`,
        });
      }
      setTempOwner(run.id);
      for (const message of renderRemovedTempFolders(removeDeadTempFolders())) emit({ type: 'info', message });
      if (run.repo) await adoptDeadQuarantines(run, run.repo.top, run.repo.commonDir);
      await nameOwedPutBacks(paths.repoRoot, run.id, run.repo?.top ?? paths.repoRoot, emit);
      // Then, with the agent's objects in the store, what a runner killed while its agent ran did not put back.
      if (run.resumed) await settleRefsAtResume(run);
      const dirty = await refuseDirtyTree(paths, run.resumed, emit);
      return await runLocked(run, budget, controller, waits, dirty, end);
    } finally {
      releaseTree();
    }
  } finally {
    releasePlan();
  }
}

/** `dirty`: what the clean-tree check just read (git status, HEAD), for putting the tree on the plan's branch. */
async function runLocked(
  run: RunContext,
  budget: BudgetGate,
  controller: AbortController,
  waits: boolean,
  dirty: StartStatus,
  end: RunEnd,
): Promise<number> {
  const { id, options, paths, emit } = run;
  const state = initialState(run);
  clearCancelMarker(paths.repoRoot, id);
  writeState(paths.repoRoot, state);
  let exit: LoopExit;
  let trust: RunTrust | undefined;
  let unexpected: { err: unknown } | undefined;
  try {
    if (waits) {
      await budget.beforeStart();
      dirty = await refuseDirtyTree(paths, run.resumed, emit);
    }
    const prepared = await prepareBranch(run, dirty);
    // git's folders as read at start, when the loop runs in the tree it was started in (not a --worktree loop's).
    const dirs = run.repo?.top === paths.repoRoot ? run.repo : undefined;
    trust = await establishTrust(
      paths,
      realpathSync(paths.repoRoot),
      id,
      run.resumed !== null,
      options,
      run.baseline,
      emit,
      {
        head: prepared.head,
        dirs,
        plan: prepared.planAtHead,
        ...(run.resumed ? { loopStartedAt: Date.parse(run.resumed.startedAt) || 0 } : {}),
      },
    );
    // The last push (after the locks go) puts back the runner's files and compares the pins first: it needs them.
    end.trust = trust;
    emit({
      type: 'start',
      loop: id,
      agent: options.agentCmd ? 'agent-cmd' : options.agent,
      command: run.command,
      prd: path.relative(paths.repoRoot, paths.prd),
      maxIterations: options.maxIterations,
      resumed: run.resumed !== null,
      firstIteration: state.iterationDone ? state.iteration + 1 : Math.max(1, state.iteration),
    });
    exit = await startIterations(run, state, budget, controller, trust, prepared.promptAtHead);
  } catch (err) {
    exit = await interruptedOr(run, err);
    if (!(err instanceof LoopExit) && exit.code !== LOOP_EXIT.interrupted) unexpected = { err };
  }
  // A loop done: your refs and the programs your npm and npx run put back before the end is recorded or delivered, so
  // that one which could not be makes this end no exit 0 in state.json and the exit event too. Any other end records
  // itself first, as it is (a full disk: what the put-back frees must not change what state.json keeps).
  const done = exit.code === LOOP_EXIT.complete && !unexpected;
  if (done) exit = await settleAtEnd(run, trust, exit);
  if (unexpected) {
    finish(
      run,
      state,
      new LoopExit(EXIT_FAILURE, `unexpected error: ${(unexpected.err as Error).message}`),
      'failed',
      end,
    );
    await settleAtEnd(run, trust, exit);
    throw unexpected.err;
  }
  // pr-merge waits for CI and merges before the end is recorded: the exit code says whether it merged.
  end.delivered = exit.code === LOOP_EXIT.complete && options.deliver === 'pr-merge';
  if (end.delivered) exit = await deliverOrNotMerged(run, trust, exit, controller.signal);
  const cancelled = exit.code === LOOP_EXIT.interrupted && isCancelRequested(paths.repoRoot, id);
  if (cancelled)
    exit = new LoopExit(
      LOOP_EXIT.interrupted,
      'cancelled by ralphkit cancel; state saved',
      'continue with: ./ralph/ralph.sh --resume-last',
    );
  const status = cancelled ? 'cancelled' : exit.status === 'usage' ? 'failed' : exit.status;
  // Only the wait for CI ends a pr-merge delivery with 130 (deliver-merge.ts), cancelled or not: the merge is pending.
  finish(run, state, exit, status, end, end.delivered && exit.code === LOOP_EXIT.interrupted);
  if (!done) await settleAtEnd(run, trust, exit);
  return exit.code;
}

/**
 * What the loop's end puts back outside its branch: your refs (run/ref-sweep.ts) and what your npm and npx run from
 * the tree (verify/tool-bins.ts). Returns `exit`, or exit 6 when it was 0 and something could not be put back.
 */
async function settleAtEnd(run: RunContext, trust: RunTrust | undefined, exit: LoopExit): Promise<LoopExit> {
  if (!trust) return exit;
  const refsSettled = trust.heldRefs ? await settleRefsAtEnd(run, trust) : true;
  let binsSettled = true;
  if (trust.toolBins) {
    // The index as last listed (after the last agent run): what a commit tracks is in the diff you review.
    const listed = trust.nested?.links.files;
    const tracked = listed ? new Set(listed.map((f) => f.raw.toString('latin1'))) : null;
    const bins = settleToolBins(trust.topLevel, trust.toolBins, loopDir(run.paths.repoRoot, run.id), (rel) =>
      tracked ? tracked.has(rel.split(path.sep).join('/')) : true,
    );
    for (const message of bins.said) run.emit({ type: 'warn', message });
    binsSettled = !bins.failed;
  }
  if (exit.code !== LOOP_EXIT.complete || (refsSettled && binsSettled)) return exit;
  return new LoopExit(
    LOOP_EXIT.protected,
    `the work passed, but ${refsSettled ? 'a program of the agent that your npm or npx would run in this tree could not be moved aside' : 'the runner could not put your branches, tags and other refs back as the loop found them'} (said above), so nothing takes this as done before you look`,
    `look at what the warnings above name${refsSettled ? '' : ` (git for-each-ref; what the agent made is kept under refs/ralphkit/loops/${run.id}/moved/)`}; the work itself is verified on ${run.branch}`,
  );
}

async function startIterations(
  run: RunContext,
  state: LoopState,
  budget: BudgetGate,
  controller: AbortController,
  trust: RunTrust,
  promptAtHead?: PromptCache['at'],
): Promise<LoopExit> {
  const prdAtStart = readPlanNow(run);
  const pipeline = pipelineOf(run, state, trust);
  const unchecked = renderUncheckedWarning(prdAtStart);
  if (unchecked) run.emit({ type: 'warn', message: unchecked });
  // Once per loop (its pins are taken now): checks that pass before any work are named, not refused.
  const probe = async (prd: Prd) => {
    // Sandboxed and guarded like every check: the plan commit's code may be an agent's (--repin, earlier work).
    const { sandbox, guardTrusted } = verifyInput(pipeline, 0, controller.signal);
    const weak = await probeWeakChecks({
      topLevel: trust.topLevel,
      repoRoot: run.paths.repoRoot,
      ledgerPath: ledgerPath(run.paths.repoRoot, state.id),
      loopId: state.id,
      checkTimeoutMs: run.options.checkTimeoutMs,
      inPlace: run.options.verifyInPlace,
      pins: trust.pins!,
      prd,
      signal: controller.signal,
      log: (level, message) => run.emit({ type: level, message }),
      sandbox,
      guardTrusted,
      checkBase: trust.checkBase,
    });
    for (const id of weak) trust.weak.add(id);
  };
  const probing = run.options.weakCheck && trust.pins;
  if (probing && (!run.resumed || run.options.repin)) await probe(prdAtStart);
  else if (run.resumed) {
    // The probe ran when the loop started: its ledger lines say which stories it named.
    const ledger = ledgerPath(run.paths.repoRoot, state.id);
    for (const id of readWeakStories(ledger)) trust.weak.add(id);
    // A probe stopped before it was done (Ctrl-C at start) goes on with the stories it had not reached, in a fresh
    // checkout of the plan commit: in place, the tree now holds the agents' work, not the plan commit.
    const unprobed =
      probing && !run.options.verifyInPlace ? unprobedStories(prdAtStart, ledger, trust.pins!.commit) : [];
    if (unprobed.length) {
      run.emit({
        type: 'info',
        message: `the weak-check probe has no result for ${unprobed.map((s) => s.id).join(', ')} (stopped before it got to them, or the setup failed there); probing them now`,
      });
      await probe({ ...prdAtStart, checks: [], userStories: unprobed });
    }
  }
  // SPEC §4: exit 0 only under the runner's own verification, so stories the plan already marks done are claims.
  const finished = await finishResumedIteration(run, state, controller.signal, trust);
  const outcome = (await verifyStartClaims(pipeline, controller.signal)) ?? finished;
  if (controller.signal.aborted)
    return new LoopExit(
      LOOP_EXIT.interrupted,
      'interrupted; state saved',
      'continue with: ./ralph/ralph.sh --resume-last',
    );
  if (trust.baseline === null) await settleBaseline(run.paths, state.id, trust, run.emit, outcome?.prd ?? prdAtStart);
  const prdNow = outcome?.prd ?? prdAtStart;
  if (prdNow.userStories.every(isSettled)) {
    // The plan says it is done: only the final gate on this commit can make that exit 0.
    const gate = await finalGate(pipeline, 0, controller.signal);
    if (gate.interrupted)
      return new LoopExit(
        LOOP_EXIT.interrupted,
        'interrupted during the final gate; state saved',
        'continue with: ./ralph/ralph.sh --resume-last',
      );
    if (gate.passed)
      return new LoopExit(LOOP_EXIT.complete, `${renderAllPass(prdNow, gate.weak)}; nothing for the agent to do`);
  }
  const config = {
    ...loopConfig(run.options, run.io.env),
    ...(run.deadline === undefined ? {} : { deadline: run.deadline, maxDurationMs: run.options.maxDurationMs }),
  };
  if (run.options.parallel) return runParallel({ run, state, trust, budget, controller, config, clock: realClock });
  return runLoop(state, config, buildDeps(run, state, budget, controller, trust, promptAtHead));
}

// prepareBranch has just read and written the plan, so failing here means someone removed or broke it since.
function readPlanNow(run: RunContext): Prd {
  const rel = showPath(run.paths.repoRoot, run.paths.prd);
  try {
    return JSON.parse(readFileNoWait(run.paths.prd).toString('utf8')) as Prd;
  } catch (err) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not read ${rel} (${describeError(err as Error)}) after checking out its branch`,
      `restore it (git checkout -- ${shellQuote(rel)}), check it with: ${loopCommand(`validate ${shellQuote(rel)}`)}, then continue with: ./ralph/ralph.sh --resume-last`,
    );
  }
}

// The dry run is the check before leaving a loop running, so it says what the real start would refuse.
function warnExamplePlan(prd: Prd, paths: RunPaths, emit: Emit): void {
  try {
    refuseExamplePlan(prd, paths);
  } catch (err) {
    if (!(err instanceof LoopExit)) throw err;
    emit({ type: 'warn', message: `the run would refuse to start: ${err.message}; ${err.hint}` });
  }
}

/**
 * holdPathEnv; when its link folder cannot be made, the loop start's PATH folders as they are now (the repository's
 * still left out), with a warning.
 */
function tryHoldPathEnv(
  base: RunTrust['checkBase'],
  env: NodeJS.ProcessEnv,
  emit: RunContext['emit'],
): ReturnType<typeof holdPathEnv> {
  try {
    return holdPathEnv(base, env);
  } catch (err) {
    emit({
      type: 'warn',
      message: `could not hold PATH for --on-exit (${(err as Error).message}); it runs with the loop start's PATH folders as they are now`,
    });
    const held = withRepoVars({ ...env, PATH: base.path.map((p) => p.dir).join(path.delimiter) }, base);
    return { env: held, changed: [], remove: () => {} };
  }
}
