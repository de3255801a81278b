// --dry-run: what a run would do, without taking the lock, touching git or starting the agent.
import path from 'node:path';
import type { Emit } from '../events.js';
import { formatDuration } from '../core/duration.js';
import { realClock } from '../clock.js';
import { readUsageNow } from '../budget/wire.js';
import { readStartDirty, renderStartDirtyHint } from './dirty-tree.js';
import { readAgentCheck, type AgentCheck } from '../agents/check.js';
import type { RunOptions } from '../loop-options.js';
import type { RunIo, RunPaths } from '../types.js';
import { renderTerminalJson } from '../../util/ansi.js';

export interface DryRunInput {
  options: RunOptions;
  paths: RunPaths;
  command: string;
  /** The reviewer's command line (run/review-setup.ts), or null without a reviewer. */
  reviewCommand: string | null;
  io: RunIo;
  emit: Emit;
  json: boolean;
}

export async function printDryRun(input: DryRunInput): Promise<number> {
  const { options, paths, io } = input;
  const usage = options.maxUsage === undefined ? null : await readUsageNow({ clock: realClock, env: io.env });
  // The pre-flight check before leaving a loop running should show what the real start would refuse.
  const dirty = await readStartDirty(paths);
  const uncommitted = dirty.map((e) => e.path);
  const agentCheck = readAgentCheck(options.agent, options.agentCmd, paths.repoRoot, io.env);
  const report = {
    command: input.command,
    agentCheck,
    reviewer: input.reviewCommand,
    cwd: paths.repoRoot,
    prd: path.relative(paths.repoRoot, paths.prd),
    prompt: path.relative(paths.repoRoot, paths.prompt),
    maxIterations: options.maxIterations,
    workers: options.parallel ?? null,
    worktree: options.worktree,
    completionPromise: options.completionPromise,
    iterationTimeout: formatDuration(options.iterationTimeoutMs),
    maxDuration: options.maxDurationMs === undefined ? null : formatDuration(options.maxDurationMs),
    pause: formatDuration(options.pauseMs),
    noProgressLimit: options.noProgressLimit,
    checkTimeout: formatDuration(options.checkTimeoutMs),
    maxCost: options.maxCost ?? null,
    maxUsage: options.maxUsage ?? null,
    usage: usage ?? null,
    uncommitted,
  };
  if (input.json) {
    io.stdout(`${renderTerminalJson({ type: 'dry-run', ...report })}\n`);
    return 0;
  }
  io.stdout(renderDryRun(report, dirty.length ? renderStartDirtyHint(paths, dirty) : ''));
  return 0;
}

function renderDryRun(r: Record<string, unknown>, hint: string): string {
  const usageText = r.usage === null ? 'not checked (no --max-usage)' : String(r.usage);
  return [
    `would run:        ${r.command}`,
    ...renderAgentCheck(r.agentCheck as AgentCheck),
    `reviewer:         ${r.reviewer ?? 'none (no --review-agent or --review-cmd)'}`,
    `in:               ${r.cwd}`,
    `plan / prompt:    ${r.prd} / ${r.prompt}`,
    `max iterations:   ${r.maxIterations === 0 ? 'no cap (0)' : r.maxIterations}${r.workers === null ? '' : ' (agent runs over all workers)'}`,
    `workers:          ${renderWorkers(r.workers as number | null, r.worktree as boolean)}`,
    `completion tag:   <promise>${r.completionPromise}</promise>`,
    `timeout / pause:  ${r.iterationTimeout} / ${r.pause}`,
    `max duration:     ${r.maxDuration ?? 'none'}`,
    `no-progress stop: ${r.noProgressLimit} iterations`,
    `check timeout:    ${r.checkTimeout}`,
    `max cost:         ${r.maxCost === null ? 'none' : `$${r.maxCost}`}`,
    `max usage:        ${r.maxUsage === null ? 'none' : `${r.maxUsage}%`}`,
    `usage now:        ${usageText}`,
    ...renderTreeLines(r.uncommitted as string[], hint),
    '',
  ].join('\n');
}

function renderWorkers(workers: number | null, worktree: boolean): string {
  if (workers === null)
    return `one loop${worktree ? ', in a worktree of its own beside the repository' : ' in this working tree'}`;
  return `${workers} (--parallel), each in a worktree of its own on a story branch; each story verified on its branch, then merged through the queue with the stories waiting with it and verified again once per batch`;
}

function renderTreeLines(dirty: string[], hint: string): string[] {
  if (!dirty.length) return ['working tree:     clean'];
  const shown = dirty.slice(0, 5).join(', ') + (dirty.length > 5 ? `, ... (${dirty.length} in all)` : '');
  return [`working tree:     the run would refuse to start: uncommitted ${shown}`, `                  ${hint}`];
}

function renderAgentCheck(check: AgentCheck): string[] {
  if (check.found) return [`agent found:      ${check.found}`];
  if (check.unchecked) return [`agent found:      not checked (${check.unchecked})`];
  return [`agent found:      WARNING: ${check.warning}`, `                  hint: ${check.hint}`];
}
