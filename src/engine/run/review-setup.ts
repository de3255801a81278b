// The review gate at start (SPEC §11): a plan that asks for a review needs a reviewer, a reviewer needs its
// instructions (ralph/review.md) and its binary; and the reviewer's command line as --dry-run shows it.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import { activeStories } from '../../prd/skip.js';
import type { RunOptions } from '../loop-options.js';
import type { RunPaths } from '../types.js';
import type { Emit } from '../events.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { planAgent, quote, renderAgentCommand, renderMissingAgent } from '../agents/index.js';
import { findExecutable } from '../agents/check.js';
import { loopDir } from '../store/layout.js';
import { ralphkitCommand } from '../../util/invocation.js';
import { reviewInstructionsPath } from '../verify/review-prompt.js';

export function hasReviewer(options: Pick<RunOptions, 'reviewAgent' | 'reviewCmd'>): boolean {
  return Boolean(options.reviewAgent || options.reviewCmd);
}

/**
 * Refuses the start (exit 2) when the plan and the reviewer options do not fit together. Returns the --review-agent's
 * binary as an absolute path, found once here: looked up on PATH at each review, it could be one the agent planted
 * since (a `claude` in ~/.local/bin, writable even under --sandbox) and it runs outside any sandbox.
 */
export function refuseReviewSetup(
  prd: Prd,
  options: RunOptions,
  paths: RunPaths,
  env: NodeJS.ProcessEnv,
  emit: Emit,
): string | undefined {
  const stories = activeStories(prd.userStories);
  const plan = path.relative(paths.repoRoot, paths.prd).split(path.sep).join('/');
  if (!hasReviewer(options)) {
    const asking = stories.filter((s) => s.review === true).map((s) => s.id);
    if (!asking.length) return undefined;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${asking.slice(0, 10).join(', ')}${asking.length > 10 ? ` and ${asking.length - 10} more` : ''} ask${asking.length === 1 ? 's' : ''} for a review ("review": true in ${plan}) but no reviewer is configured`,
      `name one: ./ralph/ralph.sh --review-agent claude (any of claude, codex, amp, opencode, gemini) or --review-cmd '<command>'; or set "review": false on those stories and commit`,
    );
  }
  const instructions = reviewInstructionsPath(paths);
  if (!existsSync(instructions)) {
    throw new LoopExit(
      LOOP_EXIT.refused,
      `a reviewer is configured but ${path.relative(paths.repoRoot, instructions)} (its instructions) is missing`,
      `add it with: ${ralphkitCommand('install')} (it creates missing files and keeps yours), commit it, then start again`,
    );
  }
  const bin = options.reviewAgent && !options.reviewCmd ? findReviewerBin(options.reviewAgent, paths, env) : undefined;
  if (stories.every((s) => s.review === false))
    emit({
      type: 'warn',
      message: `a reviewer is configured but every story in ${plan} says "review": false: nothing will be reviewed`,
    });
  return bin;
}

function findReviewerBin(
  agent: NonNullable<RunOptions['reviewAgent']>,
  paths: RunPaths,
  env: NodeJS.ProcessEnv,
): string {
  const plan = planAgent({ agent, prompt: '', runDir: paths.repoRoot, iteration: 1, env });
  const found = findExecutable(plan.file, env);
  if (found) return path.resolve(found);
  const missing = renderMissingAgent(agent, env);
  throw new LoopExit(
    LOOP_EXIT.refused,
    `--review-agent: ${missing.message}`,
    missing.hint.replace('--agent-cmd', '--review-cmd'),
  );
}

/** The reviewer's command line for --dry-run (the review request goes on stdin), or null without a reviewer. */
export function renderReviewCommand(options: RunOptions, repoRoot: string, env: NodeJS.ProcessEnv): string | null {
  if (!hasReviewer(options)) return null;
  const plan = planAgent({
    agent: options.reviewAgent ?? options.agent,
    agentCmd: options.reviewCmd,
    prompt: '',
    runDir: loopDir(repoRoot, '<loop>'),
    iteration: 1,
    env,
    model: options.reviewModel,
  });
  // A --review-cmd gets its model only in its environment: shown, so a typo in it is seen before the run.
  const model = options.reviewCmd && options.reviewModel ? `RALPH_REVIEW_MODEL=${quote(options.reviewModel)} ` : '';
  // Under --sandbox it runs under bubblewrap, as the checks do, with its clone writable.
  const sandbox = options.sandbox ? ' (under bwrap, writing only its clone)' : '';
  return `${model}${renderAgentCommand({ ...plan, input: '' }, '')} < <review request>${sandbox}`;
}
