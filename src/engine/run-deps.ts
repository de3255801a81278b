// The real edges of one locked run, handed to the loop (loop.ts): the agent process, git, verification,
// the budget and state persistence, plus the runner's own commits.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { BudgetGate } from './contracts.js';
import type { RunOptions } from './args.js';
import type { Emit } from './events.js';
import type { RunIo } from './run.js';
import type { RunPaths } from './setup.js';
import type { LoopConfig, LoopDeps } from './loop.js';
import { atomicWriteFileSync } from '../util/atomic.js';
import { realClock } from './clock.js';
import { headSha } from './git.js';
import { isIgnored, readEditedPrompt, renderPromptCommitPart, renderPromptEditNote } from './run-branch.js';
import { loopDir, writeState, type LoopState } from './runs.js';
import { planAgent } from './agents/index.js';
import { applyCompaction } from './progress.js';
import { runAgentOnce } from './agent-run.js';
import { detectRateLimit, transientReason, verifyIteration } from './edges.js';
import { commitRunnerFiles, readChangedPaths } from './verify-git.js';
import { guardWrite } from './verify-write.js';

export interface LockedRun {
  id: string;
  options: RunOptions;
  paths: RunPaths;
  resumed: LoopState | null;
  io: RunIo;
  emit: Emit;
  command: string;
  branch: string;
  base?: string;
}


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

export function buildDeps(run: LockedRun, state: LoopState, budget: BudgetGate, controller: AbortController): LoopDeps {
  const { paths, options, io, emit } = run;
  const dir = loopDir(paths.repoRoot, state.id);
  const save = (s: LoopState) => writeState(paths.repoRoot, s);
  // repoRoot is git's --show-toplevel, resolved at start; a run cannot move it, so verification need not ask again.
  const topLevel = realpathSync(paths.repoRoot);
  return {
    clock: realClock,
    emit,
    signal: controller.signal,
    budget,
    saveState: save,
    prdBefore: (iteration) => snapshotPrd(path.join(dir, 'prd-before.json'), paths, iteration),
    headSha: () => headSha(paths.repoRoot),
    async committedWork(headBefore, headAfter) {
      // A first commit ever is work; otherwise work is any changed path besides the plan and its progress log.
      if (headBefore === null || headAfter === null) return headAfter !== null;
      const own = new Set([paths.prd, paths.progress].map((p) => path.relative(topLevel, realOrSelf(p)).split(path.sep).join('/')));
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
      const prompt = renderPathNote(paths) + readFileSync(paths.prompt, 'utf8');
      const plan = planAgent({ agent: options.agent, agentCmd: options.agentCmd, prompt, runDir: dir, iteration, env: io.env });
      const env = { ...io.env, RALPH_LOOP_ID: state.id, RALPH_ITERATION: String(iteration), RALPH_PRD: paths.prd, RALPH_PROGRESS: paths.progress, RALPH_RUN_DIR: dir };
      const result = await runAgentOnce({
        plan, cwd: paths.repoRoot, env, timeoutMs: options.iterationTimeoutMs, signal, logFile: path.join(dir, `iteration-${iteration}.log`),
        onTool: (text) => emit({ type: 'tool', iteration, text }),
        onStart: (pid) => save(Object.assign(state, { agentPid: pid })),
      });
      save(Object.assign(state, { agentPid: undefined }));
      return result;
    },
    async verify(iteration, prdBefore, headAfterAgent) {
      return verifyIteration({
        topLevel, headAfterAgent,
        repoRoot: paths.repoRoot, prdPath: paths.prd, progressPath: paths.progress, ledgerPath: path.join(dir, 'ledger.jsonl'),
        loopId: state.id, iteration, prdBefore, checkTimeoutMs: options.checkTimeoutMs, inWorktree: options.verifyInWorktree,
        log: (level, message) => emit({ type: level, iteration, message }),
        signal: controller.signal,
      });
    },
  };
}

// The installed prompt names ralph/prd.json and ralph/progress.txt; with --prd elsewhere, tell the agent where they are.
function renderPathNote(paths: RunPaths): string {
  const prd = path.relative(paths.repoRoot, paths.prd).split(path.sep).join('/');
  const progress = path.relative(paths.repoRoot, paths.progress).split(path.sep).join('/');
  if (prd === 'ralph/prd.json' && progress === 'ralph/progress.txt') return '';
  return `Note from the runner: in this loop the plan is \`${prd}\` and the progress log is \`${progress}\`. Wherever these instructions say ralph/prd.json or ralph/progress.txt, use those files.\n\n`;
}

function snapshotPrd(file: string, paths: RunPaths, iteration: number): string {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { iteration: number; text: string };
    if (saved.iteration === iteration && typeof saved.text === 'string') return saved.text;
  } catch {
    /* no snapshot yet */
  }
  const text = readFileSync(paths.prd, 'utf8');
  // Without the snapshot a resumed iteration could not tell the agent's claims from the plan: stop rather than guess.
  guardWrite(file, paths.repoRoot, () => atomicWriteFileSync(file, JSON.stringify({ iteration, text })), 'the plan could not be saved before the agent ran');
  return text;
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
async function commitPromptEdits(run: LockedRun, iteration: number): Promise<void> {
  const { paths } = run;
  if ((await readEditedPrompt(paths)) === null || (await isIgnored(paths.repoRoot, paths.prompt))) return;
  await commitOwn(run, [paths.prompt], `chore(ralph): ${renderPromptCommitPart(paths)}`, renderPromptEditNote(paths, `iteration ${iteration}`));
}

export async function commitOwn(run: LockedRun, files: string[], message: string, note?: string): Promise<void> {
  const rel = [...new Set(files.map((f) => path.relative(run.paths.repoRoot, f)))];
  try {
    const sha = await commitRunnerFiles(run.paths.repoRoot, rel, message);
    if (note) run.emit({ type: 'info', message: note });
    if (sha) run.emit({ type: 'info', message: `committed ${rel.join(', ')} as ${sha.slice(0, 7)}` });
  } catch (err) {
    run.emit({ type: 'warn', message: `could not commit ${rel.join(', ')}: ${(err as Error).message}` });
  }
}

