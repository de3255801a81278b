// The real edges of one locked run, handed to the loop (loop.ts): the agent process, git, verification,
// the budget and state persistence, plus the runner's own commits.
import type { RunContext, BudgetGate, CheckSandbox, GateOutcome, Violation, VerifyResult, RunOptions, RunPaths, AgentGitOutcome, LoopState } from '../types.js';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import type { LoopConfig, LoopDeps } from '../core/loop.js';
import { realClock } from '../clock.js';
import { currentBranch, headSha, isAncestor, readBranchTips, readCommitsSince, switchToBranch, tryCommitRunnerFiles, readChangedPaths, readDirtyPaths } from '../git/git.js';
import { formatDuration } from '../core/duration.js';
import { renderGuardBlock, renderOffBranchBlock, renderOffBranchReason, renderTimeoutBlock } from '../verify/report.js';
import { isIgnored, readEditedPrompt, readOrNull, renderPromptCommitPart, renderPromptEditNote } from './branch.js';
import { iterationLogPath, ledgerPath, loopDir, runsDir } from '../store/layout.js';
import { writeState } from '../store/state-file.js';
import { planAgent } from '../agents/index.js';
import { applyCompaction } from '../store/progress.js';
import { runAgentOnce } from '../agents/run.js';
import { detectRateLimit, transientReason } from '../budget/ratelimit.js';
import { verifyIteration } from '../verify/verify.js';
import { settleBaseline, type RunTrust } from './trust.js';
import { runFinalGate } from '../verify/final-gate.js';
import { ENGINE_FILES, restoreRunnerFiles } from '../verify/runner-guard.js';
import { planAgentEnv } from '../agents/env.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { planSandboxCommand, probeSandbox } from '../agents/sandbox.js';
import { keyDir } from '../store/verdict-record.js';
import { describeError, guardWrite, LoopFailure } from '../errors.js';

export function loopConfig(options: RunOptions, env: NodeJS.ProcessEnv): LoopConfig {
  // RALPH_RETRY_MS scales every back-off, so tests of rate limits and retries run in milliseconds.
  const scale = Number(env.RALPH_RETRY_MS) >= 0 && env.RALPH_RETRY_MS ? Number(env.RALPH_RETRY_MS) : undefined;
  return {
    maxIterations: options.maxIterations,
    pauseMs: options.pauseMs,
    noProgressLimit: options.noProgressLimit,
    maxCost: options.maxCost,
    retryBaseMs: scale ?? 10_000,
    rateLimitBackoffMs: scale ?? 60_000,
  };
}

export function buildDeps(run: RunContext, state: LoopState, budget: BudgetGate, controller: AbortController, trust: RunTrust): LoopDeps {
  const { paths, options, io, emit } = run;
  const dir = loopDir(paths.repoRoot, state.id);
  const save = (s: LoopState) => writeState(paths.repoRoot, s);
  // repoRoot is git's --show-toplevel, resolved at start; a run cannot move it, so verification need not ask again.
  const topLevel = trust.topLevel;
  return {
    clock: realClock,
    emit,
    signal: controller.signal,
    budget,
    saveState: save,
    // The runner's own record, never a file in ralph/.runs/: the agent can write those (SPEC §6).
    prdBefore: () => trust.baseline ?? readFileSync(paths.prd, 'utf8'),
    headSha: () => headSha(paths.repoRoot),
    async committedWork(headBefore, headAfter) {
      // A first commit ever is work; otherwise work is any changed path besides the plan and its progress log.
      if (headBefore === null || headAfter === null) return headAfter !== null;
      // The prompt too: an agent that only rewrites its own instructions has done no work (and is warned about).
      const own = new Set([paths.prd, paths.progress, paths.prompt].map((p) => relToTop(topLevel, p)));
      return (await readChangedPaths(topLevel, headBefore, headAfter)).some((p) => !own.has(p));
    },
    detectRateLimit,
    transientReason,
    async beforeAgent(iteration) {
      const moved = guardWrite(paths.progress, paths.repoRoot, () => applyCompaction(paths.progress, new Date()), 'progress.txt could not be compacted');
      if (moved) await commitOwn(run, [moved, paths.progress], 'chore(ralph): compact progress.txt', `progress.txt compacted; older entries moved to ${path.relative(paths.repoRoot, moved)}`);
      await commitPromptEdits(run, iteration);
    },
    async runAgent(iteration, signal) {
      const prompt = renderPathNote(paths) + readPrompt(run, iteration);
      const scratch = options.sandbox ? ensureScratch(dir) : dir;
      const agent = planAgent({ agent: options.agent, agentCmd: options.agentCmd, prompt, runDir: scratch, iteration, env: io.env });
      // The runner's secrets stay with the runner, and a mark in the environment finds what the agent leaves behind.
      const { env, token } = planAgentEnv(io.env, { RALPH_LOOP_ID: state.id, RALPH_ITERATION: String(iteration), RALPH_PRD: paths.prd, RALPH_PROGRESS: paths.progress, RALPH_RUN_DIR: scratch });
      const plan = options.sandbox ? { ...agent, ...sandboxCommand(run, trust, agent, scratch) } : agent;
      const result = await runAgentOnce({
        plan, cwd: paths.repoRoot, env, timeoutMs: options.iterationTimeoutMs, signal, logFile: iterationLogPath(paths.repoRoot, state.id, iteration),
        onTool: (text) => emit({ type: 'tool', iteration, text }),
        onStart: (pid) => save(Object.assign(state, { agentPid: pid })),
      });
      save(Object.assign(state, { agentPid: undefined }));
      await stopLeftovers(run, token, iteration);
      return result;
    },
    readBranchTips: () => readBranchTips(paths.repoRoot),
    async inspectAgentGit(iteration, headBefore, tips) {
      // First, before any git command reads a configuration or runs a hook the agent may have planted.
      const violation = guardRunnerFiles(run, trust, iteration);
      return { ...(await inspectAgentGit(run, topLevel, iteration, headBefore, tips)), ...(violation ? { violation } : {}) };
    },
    recordTimeout(iteration, result) {
      const log = iterationLogPath(paths.repoRoot, state.id, iteration);
      const output = readTail(log) ?? `${result.stdout}\n${result.stderr}`;
      const timeout = formatDuration(options.iterationTimeoutMs);
      const block = renderTimeoutBlock(new Date(), iteration, timeout, output);
      guardWrite(paths.progress, paths.repoRoot, () => appendFileSync(paths.progress, block), 'the timeout note for the next iteration could not be written');
      try {
        appendFileSync(log, `\n[ralph] iteration ${iteration} timed out after ${timeout}; the agent and everything it started were killed\n`);
      } catch {
        /* the log is a record; progress.txt already carries the note */
      }
    },
    async verify(iteration, prdBefore, headAfterAgent, offBranch, violation) {
      const result = await verifyIteration({
        topLevel, headAfterAgent, offBranch,
        repoRoot: paths.repoRoot, prdPath: paths.prd, progressPath: paths.progress, ledgerPath: ledgerPath(paths.repoRoot, state.id),
        loopId: state.id, iteration, prdBefore, checkTimeoutMs: options.checkTimeoutMs, inPlace: options.verifyInPlace, pins: trust.pins, sandbox: checkSandbox(run, trust),
        ...(violation ? { violation: violation.reason, extraOwnFiles: violation.files } : {}),
        log: (level, message) => emit({ type: level, iteration, message }),
        signal: controller.signal,
      });
      await afterVerification(run, state.id, trust, result, headAfterAgent);
      return result;
    },
    finalGate: (iteration) => finalGate(run, state.id, trust, iteration, controller.signal),
  };
}

/**
 * SPEC §6: nothing of the agent outlives its iteration. Its process group is already gone (agent-process.ts); this
 * finds the processes that left the group (setsid, double forks) by the mark in their environment.
 */
async function stopLeftovers(run: RunContext, token: string, iteration: number): Promise<void> {
  const { stopped } = await stopMarkedProcesses(token);
  if (!stopped.length) return;
  const list = stopped.slice(0, 5).map((p) => `${p.pid} ${p.command}`).join('; ');
  run.emit({ type: 'warn', iteration, message: `stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} the agent left running outside its process group (${list})` });
}

/** A writable folder for files the agent writes itself (Codex's last message): the rest of ralph/.runs/ is read-only in the sandbox. */
function ensureScratch(dir: string): string {
  const scratch = path.join(dir, 'scratch');
  mkdirSync(scratch, { recursive: true });
  return scratch;
}

const PROBES = new WeakMap<RunContext, ReturnType<typeof probeSandbox>>();

/** The agent's command under bubblewrap: the runner's files, git's hooks and config and the pinned tests read-only. */
function sandboxCommand(run: RunContext, trust: RunTrust, agent: { file: string; args: string[] }, scratch: string): { file: string; args: string[] } {
  const base = checkSandbox(run, trust) as CheckSandbox;
  const userConfig = base.readOnly.filter((p) => p !== trust.topLevel);
  const readOnly = [...ENGINE_FILES, path.relative(run.paths.repoRoot, runsDir(run.paths.repoRoot)), ...(trust.pins?.paths ?? []), ...userConfig];
  return planSandboxCommand({ ...base, file: agent.file, args: agent.args, repoRoot: trust.topLevel, gitDir: trust.gitDir, readOnly, scratch: [realpathSync(scratch)] });
}

/**
 * With --sandbox, checks run under bubblewrap too: they execute the agent's code. Writable: the checkout and HOME
 * (package managers keep caches there); read-only: the repository itself and the global git configuration; hidden:
 * the key that seals the verdict record (created by the first final gate, so looked for each time).
 */
export function checkSandbox(run: RunContext, trust: RunTrust): CheckSandbox | undefined {
  if (!run.options.sandbox) return undefined;
  // The start already proved bubblewrap works; once per run is enough (each probe starts a sandbox).
  const probe = PROBES.get(run) ?? probeSandbox(run.io.env);
  PROBES.set(run, probe);
  if (!probe.ok) throw new LoopFailure(probe.message, probe.hint);
  const home = run.io.env.HOME;
  const hidden = existsSync(keyDir(run.io.env)) ? [realpathSync(keyDir(run.io.env))] : [];
  return { bwrap: probe.bwrap, home, readOnly: [trust.topLevel, ...(home ? [path.join(home, '.gitconfig'), path.join(home, '.config', 'git')] : [])], hidden, network: run.options.network };
}

/** After a verification pass: the new baseline, and where each accepted claim was verified. */
export async function afterVerification(run: RunContext, loopId: string, trust: RunTrust, result: VerifyResult, head: string | null): Promise<void> {
  for (const v of result.verdicts) if (v.status === 'verified' && head) trust.verifiedAt.set(v.id, head);
  await settleBaseline(run.paths, loopId, trust, run.emit, result.prd);
}

/** The final gate of the run (verify/final-gate.ts), then its verdicts as the new baseline. */
export async function finalGate(run: RunContext, loopId: string, trust: RunTrust, iteration: number, signal: AbortSignal): Promise<GateOutcome> {
  const { paths, options, emit } = run;
  const gate = await runFinalGate({
    prd: JSON.parse(trust.baseline ?? readFileSync(paths.prd, 'utf8')) as Prd,
    topLevel: trust.topLevel, repoRoot: paths.repoRoot, prdPath: paths.prd, progressPath: paths.progress, ledgerPath: ledgerPath(paths.repoRoot, loopId),
    loopId, iteration, checkTimeoutMs: options.checkTimeoutMs, inPlace: options.verifyInPlace, pins: trust.pins, verifiedAt: trust.verifiedAt, sandbox: checkSandbox(run, trust),
    log: (level, message) => emit({ type: level, iteration, message }),
    signal,
  });
  if (!gate.interrupted) await settleBaseline(paths, loopId, trust, emit, gate.prd);
  return gate;
}

/**
 * The engine, its launcher, the manifest, .git/config and the hooks as they were when the loop started: anything the
 * agent changed there is put back now, and the iteration's claims are rejected for it.
 */
function guardRunnerFiles(run: RunContext, trust: RunTrust, iteration: number): Violation | undefined {
  const { changed, rejecting, kept, inRepo } = restoreRunnerFiles(trust.guard);
  const shown = (items: string[]) => items.slice(0, 10).join(', ') + (items.length > 10 ? `, and ${items.length - 10} more` : '');
  if (kept.length) run.emit({ type: 'info', iteration, message: `kept the git settings the agent's git commands recorded (${shown(kept)})` });
  if (!changed.length) return undefined;
  const consequence = rejecting.length ? ', and this iteration\'s claims are rejected' : ' (they never run in the runner\'s own git calls or checks, so the claims are judged as usual)';
  run.emit({ type: 'warn', iteration, message: `the agent changed files the runner trusts (${shown(changed)}); put them back as they were when the loop started${consequence}` });
  const block = renderGuardBlock(new Date(), iteration, changed, rejecting.length > 0);
  guardWrite(run.paths.progress, run.paths.repoRoot, () => appendFileSync(run.paths.progress, block), 'the note about the restored runner files could not be written');
  return rejecting.length ? { reason: `the agent changed files the runner trusts (${shown(rejecting)}); they were put back`, files: inRepo } : undefined;
}

// The installed prompt names ralph/prd.json and ralph/progress.txt; with --prd elsewhere, tell the agent where they are.
function renderPathNote(paths: RunPaths): string {
  const prd = path.relative(paths.repoRoot, paths.prd).split(path.sep).join('/');
  const progress = path.relative(paths.repoRoot, paths.progress).split(path.sep).join('/');
  if (prd === 'ralph/prd.json' && progress === 'ralph/progress.txt') return '';
  return `Note from the runner: in this loop the plan is \`${prd}\` and the progress log is \`${progress}\`. Wherever these instructions say ralph/prd.json or ralph/progress.txt, use those files.\n\n`;
}

/** A path relative to the repository's top level, with forward slashes ("../x" when outside it). */
function relToTop(topLevel: string, p: string): string {
  return path.relative(topLevel, realOrSelf(p)).split(path.sep).join('/');
}

// An agent (or a reset it ran) can remove the prompt; that ends the loop with a message, not a Node stack.
function readPrompt(run: RunContext, iteration: number): string {
  try {
    return readFileSync(run.paths.prompt, 'utf8');
  } catch (err) {
    const rel = path.relative(run.paths.repoRoot, run.paths.prompt).split(path.sep).join('/');
    throw new LoopFailure(
      `could not read the prompt ${rel} (${describeError(err as Error)}) before iteration ${iteration}`,
      `restore it (git checkout ${run.branch} -- ${rel}, or find it with git log --all -- ${rel}), commit it, then continue with: ./ralph/ralph.sh --resume-last`,
    );
  }
}

/** The last `bytes` of a file (an agent's log can be large), or null when it cannot be read. */
function readTail(file: string, bytes = 64 * 1024): string | null {
  try {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, bytes));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/**
 * Git after an agent run, before its claims are judged (docs/engine.md): back to the loop's branch if the agent left
 * it, a stop if it rewrote the history the loop had verified, a warning if its commits changed the prompt.
 */
async function inspectAgentGit(run: RunContext, topLevel: string, iteration: number, headBefore: string | null, tips: string[]): Promise<AgentGitOutcome> {
  const offBranch = await returnToBranch(run, topLevel, iteration, tips);
  if (!offBranch && tips.length) await warnCommitsElsewhere(run, iteration, tips);
  const headAfter = await headSha(run.paths.repoRoot);
  await refuseRewrittenHistory(run, iteration, headBefore, headAfter);
  await warnPromptCommits(run, topLevel, iteration, headBefore, headAfter);
  return { headAfter, ...(offBranch ? { offBranch } : {}) };
}

/**
 * An agent that checks out another branch would get its commits verified and accepted there, off the loop's
 * branch. The runner switches back (never moving or deleting those commits) and rejects the iteration's claims,
 * reading them from the plan as the agent left it. A tree git cannot switch over safely stops the loop instead.
 */
async function returnToBranch(run: RunContext, topLevel: string, iteration: number, tips: string[]): Promise<AgentGitOutcome['offBranch']> {
  const { repoRoot, prd, progress } = run.paths;
  const now = await currentBranch(repoRoot);
  if (now === run.branch) return undefined;
  const head = await headSha(repoRoot);
  const where = now ?? `a detached HEAD (${head?.slice(0, 7) ?? 'no commit'})`;
  const commits = head ? await readCommitsSince(repoRoot, head, tips) : [];
  const inspect = now ? `git log ${run.branch}..${now}` : `git log ${head}, and keep them with: git branch <name> ${head}`;
  const made = commits.length ? `, and made ${commits.length} commit${commits.length === 1 ? '' : 's'} there: ${commits.join('; ')}` : ', and made no commit there';
  run.emit({ type: 'warn', iteration, message: `the agent left the loop's branch: it switched from ${run.branch} to ${where}${made}` });
  const prdAfter = readOrNull(prd) ?? '';
  const dirty = (await readDirtyPaths(topLevel)).filter((p) => !/(^|\/)\.runs(\/|$)/.test(p));
  const stuck = (why: string) => new LoopFailure(
    `iteration ${iteration}: the agent left ${run.branch} for ${where} and the runner cannot switch back: ${why}`,
    `look at the work (git status; ${inspect}), commit or stash it, then git checkout ${run.branch} and continue with: ./ralph/ralph.sh --resume-last`,
  );
  if (dirty.length) throw stuck(`the working tree has uncommitted changes (${dirty.slice(0, 10).join(', ')})`);
  const r = await switchToBranch(repoRoot, run.branch);
  if (r.code !== 0) throw stuck(r.stderr.trim() || `git checkout exited ${r.code}`);
  run.emit({ type: 'warn', iteration, message: `switched back to ${run.branch} and rejected this iteration's claims; the commits on ${where} were left as they are: inspect them with ${inspect}` });
  const block = renderOffBranchBlock({ time: new Date(), iteration, branch: run.branch, where, commits });
  guardWrite(progress, repoRoot, () => appendFileSync(progress, block), 'the note about the other branch could not be written');
  return { prdAfter, reason: renderOffBranchReason(run.branch, where) };
}

/**
 * A reset or rebase that drops the commit the iteration started from may delete verified work, and the ledger would
 * then vouch for code that is gone. The runner never rewrites history back itself: it stops and says how.
 */
async function refuseRewrittenHistory(run: RunContext, iteration: number, headBefore: string | null, headAfter: string | null): Promise<void> {
  if (headBefore === null || headAfter === headBefore) return;
  if (headAfter !== null && (await isAncestor(run.paths.repoRoot, headBefore, headAfter))) return;
  const old = headBefore.slice(0, 7);
  throw new LoopFailure(
    `iteration ${iteration}: the agent rewrote the history of ${run.branch}: ${old} (HEAD before it ran) is no longer in it (HEAD is now ${headAfter?.slice(0, 7) ?? 'gone'}), so commits this loop verified may be gone; the loop stops rather than build on that`,
    `compare: git log --oneline ${headAfter ? `${headAfter.slice(0, 7)}...${old}` : old} (or git reflog); to undo the rewrite: git reset --hard ${headBefore} (drops uncommitted changes); then continue with: ./ralph/ralph.sh --resume-last`,
  );
}

/** An agent that committed on another branch and came back: nothing of it is on the loop's branch, but say so. */
async function warnCommitsElsewhere(run: RunContext, iteration: number, tips: string[]): Promise<void> {
  const commits = await readCommitsSince(run.paths.repoRoot, '--branches', [...tips, `refs/heads/${run.branch}`]);
  if (!commits.length) return;
  run.emit({ type: 'warn', iteration, message: `the agent committed on other branches than ${run.branch} (left as they are; they are not this loop's work): ${commits.join('; ')}; find them with: git log --branches --not ${run.branch}` });
}

async function warnPromptCommits(run: RunContext, topLevel: string, iteration: number, headBefore: string | null, headAfter: string | null): Promise<void> {
  const rel = relToTop(topLevel, run.paths.prompt);
  if (!headBefore || !headAfter || headBefore === headAfter || rel.startsWith('../')) return;
  const changed = await readChangedPaths(topLevel, headBefore, headAfter).catch(() => [] as string[]);
  if (!changed.includes(rel)) return;
  run.emit({ type: 'warn', iteration, message: `the agent's commits changed ${rel}, the instructions every iteration gets (such commits alone are not progress); review: git diff ${headBefore.slice(0, 7)} ${headAfter.slice(0, 7)} -- ${rel}` });
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Owners steer a running loop by editing the prompt; left uncommitted, that edit would reject the next claim as
 * uncommitted work, or be swept into the agent's own commit. Committed here, before HEAD is read for the
 * iteration, so it never counts as the agent's progress. A prompt git ignores has nothing to commit.
 */
async function commitPromptEdits(run: RunContext, iteration: number): Promise<void> {
  const { paths } = run;
  if ((await readEditedPrompt(paths)) === null || (await isIgnored(paths.repoRoot, paths.prompt))) return;
  await commitOwn(run, [paths.prompt], `chore(ralph): ${renderPromptCommitPart(paths)}`, renderPromptEditNote(paths, `iteration ${iteration}`));
}

export async function commitOwn(run: RunContext, files: string[], message: string, note?: string): Promise<void> {
  const rel = [...new Set(files.map((f) => path.relative(run.paths.repoRoot, f)))];
  let failed = false;
  const sha = await tryCommitRunnerFiles(run.paths.repoRoot, rel, message, (reason) => {
    failed = true;
    run.emit({ type: 'warn', message: `could not commit ${rel.join(', ')}: ${reason}` });
  });
  if (failed) return;
  if (note) run.emit({ type: 'info', message: note });
  if (sha) run.emit({ type: 'info', message: `committed ${rel.join(', ')} as ${sha.slice(0, 7)}` });
}

