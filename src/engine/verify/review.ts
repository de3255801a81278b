// The review gate (SPEC §11): once a claim has passed its checks, a reviewer with a fresh context reads the story,
// the diff of the work and the check results, in a throwaway clone of the claimed commit, and answers SHIP or
// REVISE. Anything but exactly one SHIP rejects the claim; the repository is put back whatever the reviewer did.
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Story } from '../../prd/types.js';
import type { CheckSandbox, ReviewSetup, ShippedReview, VerifyOptions } from './types.js';
import { planHeldPath } from './check-env.js';
import { withRepoVars } from './repo-env.js';
import { planAgent, type AgentPlan } from '../agents/index.js';
import { planSandboxCommand } from '../agents/sandbox.js';
import { planHomeLayer } from '../agents/sandbox-home.js';
import { readHomeListing, realHome } from '../agents/home-listing.js';
import { planAgentEnv } from '../agents/env.js';
import { runAgentOnce } from '../agents/run.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { runGit } from '../git/git.js';
import { isAncestor } from '../git/head.js';
import { readFileAt } from '../git/read.js';
import { createCheckout, readTreeFiles, removeCheckout } from './checkout.js';
import { makeTempFolder } from '../store/temp-folders.js';
import {
  planInstructionPaths,
  prepareReviewerHome,
  removeInstructionFiles,
  reviewerLoginProblem,
} from './review-home.js';
import {
  readReviewAnswer,
  renderReasonsLine,
  renderReviewPrompt,
  REVIEW_DIFF_MAX,
  type ReviewedCheck,
} from './review-prompt.js';
import { restoreRepo, snapshotRepo } from './review-guard.js';
import type { CheckSession, StoryRun } from './session.js';
import { formatDuration } from '../core/duration.js';
import type { AgentResult } from '../types.js';
import { LoopExit, EXIT_FAILURE } from '../errors.js';
import { transientReason } from '../budget/ratelimit.js';
import { MAX_TRANSIENT_RETRIES } from '../core/retries.js';
import { realClock } from '../clock.js';
import { ralphkitCommand } from '../../util/invocation.js';

/** Why the claim is not shipped: `reason` for notes and the ledger, `reasons` (the reviewer's own words) for progress.txt. */
export interface ReviewRejection {
  reason: string;
  reasons?: string;
}

/** null: not reviewed; `shipped`: its SHIP; 'interrupted': the runner is stopping, nothing decided; else why it is rejected. */
export async function reviewClaim(
  s: CheckSession,
  story: Story,
  run: StoryRun,
  input: VerifyOptions,
): Promise<ReviewRejection | { shipped: ShippedReview } | null | 'interrupted'> {
  const setup = input.review;
  // Every story is reviewed once a reviewer is configured, but one that says "review": false.
  if (!setup || story.review === false) return null;
  const commit = s.commit;
  if (commit === null)
    return { reason: 'the reviewer has nothing to read: no commit yet; commit the work, then claim the story again' };
  // A story a new loop's plan commit already marked done was the owner's word, not this loop's work. Not a resumed
  // loop's claim, even at the commit `--repin` made the plan commit: that flip was the agent's.
  if (input.ownersWord === true && input.iteration === 0 && commit === input.pins?.commit) return null;
  const started = Date.now();
  // The story's checks ran just before: what they left running is stopped (it could forge the reviewer's answer), and
  // what they planted in git's configuration goes before the reviewer's git calls.
  await s.guardBeforeRunnerGit({ stopLeftovers: true });
  const outcome = await runReviewer(s, setup, story, commit, run.outcome === 'passed' ? run.ran : [], input);
  if (outcome === 'interrupted') return outcome;
  const line = {
    ...s.base(story.id),
    kind: 'review' as const,
    command: null,
    exitCode: null,
    outputSha256: null,
    reviewer: setup.agentCmd ?? setup.agent,
    model: setup.model ?? null,
    base: outcome.base,
    durationMs: Date.now() - started,
  };
  if (outcome.verdict === 'ship') {
    s.record({ ...line, verdict: 'ship', ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}) });
    input.log(
      'info',
      `${story.id} shipped by the reviewer (${line.reviewer}${line.model ? `, model ${line.model}` : ''}) at ${commit.slice(0, 7)}`,
    );
    return { shipped: { reviewer: line.reviewer, model: line.model, commit, base: outcome.base } };
  }
  s.record({ ...line, verdict: outcome.verdict, reason: outcome.reason });
  return outcome.verdict === 'revise'
    ? { reason: `the reviewer asked for changes: ${renderReasonsLine(outcome.reasons)}`, reasons: outcome.reasons }
    : { reason: `not shipped: ${outcome.reason}` };
}

type ReviewerOutcome =
  | { verdict: 'ship'; base: string | null; costUsd?: number }
  | { verdict: 'revise'; base: string | null; reason: string; reasons: string }
  | { verdict: 'invalid'; base: string | null; reason: string };

async function runReviewer(
  s: CheckSession,
  setup: ReviewSetup,
  story: Story,
  commit: string,
  checks: ReviewedCheck[],
  input: VerifyOptions,
): Promise<ReviewerOutcome | 'interrupted'> {
  const instructions = await readFileAt(s.top, input.pins?.commit ?? commit, setup.instructionsPath);
  const base =
    setup.base && setup.base !== commit && (await isAncestor(s.top, setup.base, commit))
      ? setup.base
      : (input.pins?.commit ?? null);
  if (instructions === null)
    return {
      verdict: 'invalid',
      base,
      reason: `${setup.instructionsPath} is not in the plan commit; add it (${ralphkitCommand('install')}), commit it, and start a new loop`,
    };
  const login = setup.login && !setup.agentCmd ? reviewerLoginProblem(setup.login) : null;
  if (login) return { verdict: 'invalid', base, reason: login };
  // The agent's instruction files are not the reviewer's: removed from its clone, and named to it (the diff shows them).
  const removed = planInstructionPaths(await readTreeFiles(s.top, commit));
  const prompt = renderReviewPrompt({
    instructions,
    story,
    base,
    commit,
    checks,
    removed,
    ...(await readDiff(s.top, base, commit)),
  });
  input.log(
    'info',
    `${story.id}: asking the reviewer (${setup.agentCmd ?? setup.agent}) about ${base ? `${base.slice(0, 7)}..` : ''}${commit.slice(0, 7)}`,
  );
  const result = await runWithRetries(s.top, setup, story, { commit, removed }, prompt, input);
  if (result === 'interrupted') return result;
  if ('changed' in result)
    return {
      verdict: 'invalid',
      base,
      reason: `the reviewer changed the repository (${result.changed.slice(0, 10).join(', ')}); put back as it was`,
    };
  const failed = renderReviewerFailure(result, setup.timeoutMs);
  if (failed) return { verdict: 'invalid', base, reason: failed };
  // One run prints one result: a second one was written into the reviewer's output by something else.
  if ((result.resultEvents ?? 0) > 1)
    return {
      verdict: 'invalid',
      base,
      reason: `the reviewer's output holds ${result.resultEvents} result events instead of one`,
    };
  const answer = readReviewAnswer(result.finalMessage);
  if (answer.verdict === 'invalid') return { verdict: 'invalid', base, reason: answer.problem };
  if (answer.verdict === 'revise')
    return { verdict: 'revise', base, reason: renderReasonsLine(answer.reasons), reasons: answer.reasons };
  return { verdict: 'ship', base, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) };
}

/** The loop's rule for transient failures (core/retries.ts): up to 3 more runs, each in a fresh clone, waiting 10s, 20s, 40s. */
async function runWithRetries(
  top: string,
  setup: ReviewSetup,
  story: Story,
  clone: CloneSpec,
  prompt: string,
  input: VerifyOptions,
): Promise<Awaited<ReturnType<typeof runIsolated>>> {
  for (let retry = 0; ; retry++) {
    const result = await runIsolated(top, setup, story, clone, prompt, input);
    const reason = result !== 'interrupted' && !('changed' in result) ? transientReason(result) : null;
    if (!reason || retry >= MAX_TRANSIENT_RETRIES) {
      // Only the run whose answer is used counts for the unpriced rule, as the agent's last attempt does.
      if (result !== 'interrupted' && result.costUsd === undefined) setup.spend(undefined);
      return result;
    }
    const waitMs = setup.retryBaseMs * 2 ** retry;
    input.log(
      'warn',
      `${story.id}: the reviewer failed transiently (${reason}); retrying in ${formatDuration(waitMs)} (${retry + 1} of ${MAX_TRANSIENT_RETRIES})`,
    );
    await realClock.sleep(waitMs, input.signal);
    if (input.signal?.aborted) return 'interrupted';
  }
}

/** The claimed commit, and the instruction files its clone loses. */
interface CloneSpec {
  commit: string;
  removed: string[];
}

/**
 * The reviewer in a fresh clone of `commit` without the agent's instruction files, with the agent's environment and
 * (a --review-agent) a configuration folder of its own; the repository put back afterwards.
 */
async function runIsolated(
  top: string,
  setup: ReviewSetup,
  story: Story,
  { commit, removed }: CloneSpec,
  prompt: string,
  input: VerifyOptions,
): Promise<AgentResult | { changed: string[]; costUsd?: number } | 'interrupted'> {
  const checkout = await createCheckout(top, commit, null);
  removeInstructionFiles(checkout.dir, removed);
  // A --review-cmd is the user's own command: the runner cannot know where its login is, so what it reads is theirs
  // to set (its command line, its environment); docs/verification.md says so.
  const home = setup.login && !setup.agentCmd ? prepareReviewerHome(setup.login) : null;
  const snap = await snapshotRepo(top, [input.prdPath, input.progressPath]);
  const name = `iteration-${input.iteration}.review-${story.id.replace(/[^\w.-]/g, '_')}`;
  const extra: Record<string, string> = {
    ...home?.env,
    RALPH_REVIEW: '1',
    RALPH_LOOP_ID: input.loopId,
    RALPH_ITERATION: String(input.iteration),
    RALPH_STORY_ID: story.id,
    ...(setup.model ? { RALPH_REVIEW_MODEL: setup.model } : {}),
  };
  // Variables naming the repository (NODE_OPTIONS's `--require <repo>/.pnp.cjs`) name the clone, or go: the working
  // tree's ignored files are the agent's to rewrite, and a reviewer CLI run on node would load them.
  const { env, token } = planAgentEnv(withRepoVars(setup.env, input.checkBase, checkout.dir), extra);
  // Codex's answer file in a fresh private folder, not at a name under ralph/.runs/ anything could write to first.
  const answerDir = makeTempFolder('ralph-review');
  // PATH as the loop started with it, as the checks have it: a program the agent put into a PATH folder since (a
  // `node` in node_modules/.bin that a reviewer CLI's `#!/usr/bin/env node` would find) is not the reviewer's.
  if (input.checkBase) {
    const held = planHeldPath(input.checkBase, path.join(answerDir, 'path'));
    env.PATH = held.dirs.join(path.delimiter);
    if (held.changed.length)
      input.log(
        'warn',
        `${story.id} review: PATH folders changed since the loop started, their new entries left out of the reviewer's PATH: ${held.changed.join('; ')}`,
      );
  }
  // Under the sandbox, what the reviewer writes to HOME goes to a layer of its own, dropped with the review.
  const layer = input.sandbox ? makeTempFolder('ralph-review') : null;
  const planned = planAgent({
    agent: setup.agent,
    agentCmd: setup.agentCmd,
    prompt,
    runDir: answerDir,
    iteration: input.iteration,
    env,
    model: setup.model,
    lastMessageName: 'last-message.txt',
  });
  const plan = setup.bin && !setup.agentCmd ? { ...planned, file: setup.bin } : planned;
  let result: AgentResult;
  let changed: string[] = [];
  try {
    result = await runAgentOnce({
      plan: sandboxed(plan, input.sandbox, checkout.dir, [answerDir, ...(home ? [home.dir] : [])], layer, env),
      cwd: checkout.dir,
      env,
      timeoutMs: setup.timeoutMs,
      signal: input.signal ?? new AbortController().signal,
      logFile: path.join(setup.runDir, `${name}.log`),
      onTool: (text) => input.log('info', `${story.id} review: ${text}`),
    });
    // Every priced run counts against --max-cost, whatever it answered: it was paid for.
    if (result.costUsd !== undefined) setup.spend(result.costUsd);
  } catch (err) {
    throw renderReviewerExit(err);
  } finally {
    const { stopped } = await stopMarkedProcesses(token);
    if (stopped.length)
      input.log(
        'warn',
        `stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} the reviewer left running`,
      );
    removeCheckout(checkout.dir);
    rmSync(answerDir, { recursive: true, force: true });
    if (layer) rmSync(layer, { recursive: true, force: true });
    home?.remove();
    // Only once nothing the reviewer started is left to write again; git's configuration and hooks before any git
    // command of the restore reads them.
    const violation = input.guardTrusted?.('the reviewer');
    changed = [...(violation ? [violation] : []), ...(await restoreRepo(top, snap))];
  }
  if (input.signal?.aborted) return 'interrupted';
  return changed.length ? { changed, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) } : result;
}

/**
 * With --sandbox the reviewer runs under bubblewrap as the checks do: only its clone, its private answer and
 * configuration folders writable; HOME a fresh layer (`layer`) with the user's entries read-only on it, so nothing it
 * writes there (a hook, a shell profile, a tool on PATH) outlives the review; the repository and the global git
 * configuration read-only; the verdict key hidden; --no-network applies.
 */
function sandboxed(
  plan: AgentPlan,
  sb: CheckSandbox | undefined,
  clone: string,
  scratch: string[],
  layer: string | null,
  env: NodeJS.ProcessEnv,
): AgentPlan {
  if (!sb) return plan;
  const home = realHome(sb.home);
  return {
    ...plan,
    ...planSandboxCommand({
      bwrap: sb.bwrap,
      file: plan.file,
      args: plan.args,
      repoRoot: clone,
      gitDir: path.join(clone, '.git'),
      readOnly: sb.readOnly,
      scratch,
      network: sb.network,
      home,
      ...(home && layer
        ? { homeLayer: { dir: layer, readOnly: planHomeLayer(readHomeListing(home, env)).readOnly } }
        : {}),
      hidden: sb.hidden,
    }),
  };
}

/** A --review-cmd the shell cannot run ends the loop (agents/failure.ts), in the reviewer's words. */
function renderReviewerExit(err: unknown): unknown {
  if (!(err instanceof LoopExit) || !err.message.startsWith('the agent command')) return err;
  const message = err.message.replace(/^the agent command could not run/, 'the reviewer command could not run');
  // Exit 1, not 2: the agent has already worked in this iteration.
  return new LoopExit(
    EXIT_FAILURE,
    message,
    "check the command given to --review-cmd (a typo? installed? on PATH? executable?); ./ralph/ralph.sh --dry-run shows the reviewer's command line",
  );
}

async function readDiff(
  top: string,
  base: string | null,
  commit: string,
): Promise<{ diff: string; diffCutFrom?: number }> {
  const from = base ?? (await runGit(top, ['hash-object', '-t', 'tree', '/dev/null'])).stdout.trim();
  const r = await runGit(top, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', from, commit, '--']);
  if (r.code !== 0) return { diff: `(the diff could not be read: ${r.stderr.trim().slice(0, 300)})` };
  // A file git calls binary shows as "Binary files differ" and nothing more: a NUL in a comment, or a `-diff`
  // attribute the commit sets, would hide the agent's code that way. Each such file is shown again as text when it
  // is small, and named with its size (to read in the clone) when it is not.
  const binary = /^Binary files .* differ$/m.test(r.stdout) ? await readBinaryFiles(top, from, commit) : null;
  const diff = escapeControls(r.stdout + (binary ?? ''));
  return diff.length > REVIEW_DIFF_MAX ? { diff: diff.slice(0, REVIEW_DIFF_MAX), diffCutFrom: diff.length } : { diff };
}

// A file git calls binary is shown to the reviewer as text up to this size (its new version).
const BINARY_AS_TEXT_MAX = 64 * 1024;

/** The files of the diff git calls binary: the small ones as text (`--text`), the others named with their size. */
async function readBinaryFiles(top: string, from: string, commit: string): Promise<string> {
  const numstat = await runGit(top, ['diff', '--numstat', '--no-renames', '-z', from, commit, '--']);
  const files = numstat.stdout
    .split('\0')
    .filter((entry) => entry.startsWith('-\t-\t'))
    .map((entry) => entry.slice(4));
  if (!files.length) return '';
  const sizes = new Map<string, number>();
  const listed = await runGit(top, ['ls-tree', '-l', '-z', commit, '--', ...files]);
  for (const entry of listed.stdout.split('\0')) {
    const m = /^\d+ blob [0-9a-f]+ +(\d+)\t(.*)$/s.exec(entry);
    if (m) sizes.set(m[2], Number(m[1]));
  }
  const small = files.filter((f) => (sizes.get(f) ?? 0) <= BINARY_AS_TEXT_MAX);
  const large = files.filter((f) => (sizes.get(f) ?? 0) > BINARY_AS_TEXT_MAX);
  const parts = ['\n# Files git calls binary, shown as text\n'];
  if (small.length) {
    const text = await runGit(top, [
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--text',
      from,
      commit,
      '--',
      ...small,
    ]);
    parts.push(text.code === 0 ? text.stdout : `(could not be read: ${text.stderr.trim().slice(0, 300)})\n`);
  }
  for (const f of large)
    parts.push(`${f}: ${sizes.get(f)} bytes, git calls it binary: too large to show here; read it in your folder\n`);
  return parts.join('');
}

/** Control characters (but tab, line feed, carriage return) written as their code points: `<U+0000>`. */
function escapeControls(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g,
    (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`,
  );
}

function renderReviewerFailure(r: AgentResult, timeoutMs: number): string | null {
  if (r.timedOut) return `the reviewer timed out after ${formatDuration(timeoutMs)} and was stopped`;
  if (r.exitCode === 0) return null;
  return r.exitCode === null
    ? `the reviewer was killed by ${r.signal ?? 'a signal'}`
    : `the reviewer exited ${r.exitCode}`;
}
