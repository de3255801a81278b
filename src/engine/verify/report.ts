// The words verification leaves for the next agent: the note on a rejected story and the block in
// progress.txt. Pure functions, so their exact shape is tested without a repository.
import type { CheckResult } from './checks.js';
import { activeStories } from '../../prd/skip.js';
import type { Prd } from '../../prd/types.js';
import { formatDuration } from '../core/duration.js';
import { renderResumeCommand } from '../core/exits.js';
import { stripAnsi } from '../../util/ansi.js';

/** Runner-written lines in a story's notes start with this; the agent's own lines are kept as they are. */
export const RUNNER_NOTE_PREFIX = '[ralph] ';
export const TAIL_LINES = 40;
const TIMEOUT_TAIL_LINES = 20;
const TAIL_MAX_CHARS = 8000;

/** The story's notes with any earlier runner line replaced by `note` (or just removed when note is null). */
export function applyRunnerNote(notes: string | undefined, note: string | null): string {
  const own = (notes ?? '')
    .split('\n')
    .filter((l) => !l.startsWith(RUNNER_NOTE_PREFIX))
    .join('\n')
    .trimEnd();
  if (note === null) return own;
  return own ? `${own}\n${RUNNER_NOTE_PREFIX}${note}` : `${RUNNER_NOTE_PREFIX}${note}`;
}

export function hasRunnerNote(notes: string | undefined): boolean {
  return (notes ?? '').split('\n').some((l) => l.startsWith(RUNNER_NOTE_PREFIX));
}

/**
 * The warning the runner gives at start (SPEC §6) when some or all stories have no check that applies to
 * them, so their claims will be taken on the agent's word; null when every story is covered.
 */
export function renderUncheckedWarning(prd: Prd): string | null {
  if (prd.checks?.length) return null;
  const stories = activeStories(prd.userStories);
  const bare = stories.filter((s) => !s.checks?.length).map((s) => s.id);
  if (!bare.length) return null;
  if (bare.length === stories.length) {
    return 'the plan has no checks: stories will be accepted on the agent\'s word and marked unverified (add "checks" to prd.json, e.g. ["npm test"])';
  }
  return `${bare.join(', ')} ha${bare.length === 1 ? 's' : 've'} no checks: ${bare.length === 1 ? 'it' : 'they'} will be accepted on the agent's word and marked unverified`;
}

/** Why a check failed, in one line: the words used in notes, verdicts and the log. */
export function renderCheckFailure(r: CheckResult, timeoutMs: number, what = 'check'): string {
  if (r.error) return `${what} \`${r.command}\` could not start: ${r.error}`;
  if (r.aborted) return `${what} \`${r.command}\` was stopped because the runner was interrupted`;
  if (r.timedOut) return `${what} \`${r.command}\` timed out after ${formatDuration(timeoutMs)} and was killed`;
  if (r.exitCode === null) return `${what} \`${r.command}\` was killed by ${r.signal ?? 'a signal'}`;
  return `${what} \`${r.command}\` exited ${r.exitCode}`;
}

export function renderUncommitted(paths: string[]): string {
  const shown = paths.slice(0, 10).join(', ') + (paths.length > 10 ? `, and ${paths.length - 10} more` : '');
  return `uncommitted changes in the working tree (${shown}); commit your work before setting passes to true`;
}

/** Why a claim made before its dependencies pass is rejected (docs/verification.md: claims follow `dependsOn`). */
export function renderOutOfOrder(unmet: string[]): string {
  const list = unmet.length === 1 ? unmet[0] : `${unmet.slice(0, -1).join(', ')} and ${unmet.at(-1)}`;
  return `out of order: it depends on ${list}, which ${unmet.length === 1 ? 'does' : 'do'} not pass yet; finish ${unmet.length === 1 ? 'that story' : 'those stories'} first, then claim this one again`;
}

/** Who may allow a story to change pinned files, and how: the story, the plan's path, the command that resumes. */
export interface PinOwnerHint {
  story: string;
  plan: string;
  resume: string;
}

/** The hint for a claim judged in `iteration` of loop `loop`: the resume takes the edited plan and has iterations left. */
export function planPinOwnerHint(story: string, plan: string, loop: string, iteration: number): PinOwnerHint {
  return { story, plan, resume: `${renderResumeCommand(loop, Math.max(1, iteration))} --accept-plan-edits` };
}

/**
 * The words for pinned files a commit changed: the check used the plan commit's versions instead. A story meant to
 * change them needs them in its `mayChange`, which only the plan's owner can add (the agent's edit of it is undone),
 * so the words say what to edit and the command that continues the loop with the edited plan.
 */
export function renderPinnedChanges(changed: readonly string[], pinCommit: string, owner?: PinOwnerHint): string {
  const one = changed.length === 1;
  const shown = changed.slice(0, 10).join(', ') + (changed.length > 10 ? `, and ${changed.length - 10} more` : '');
  const them = one ? 'it' : 'them';
  const allow = owner
    ? `if ${owner.story} is meant to change ${them}, that is the owner's to allow (the agent's own edit of "mayChange" is undone): add ${one ? JSON.stringify(changed[0]) : them} to ${owner.story}'s "mayChange" in ${owner.plan}, commit, and continue with ${owner.resume}`
    : `a story meant to change ${them} lists ${them} in its "mayChange", which the plan's owner adds`;
  return `the agent changed pinned test input${one ? '' : 's'} ${shown}: the checks ran with the version${one ? '' : 's'} from the plan commit ${pinCommit.slice(0, 7)} (${allow})`;
}

/** progress.txt block for a claim verified while the agent had changed pinned files, so the owner reviews them. */
export function renderPinnedBlock(b: {
  time: Date;
  iteration: number;
  storyId: string;
  commit: string | null;
  note: string;
}): string {
  return [
    '',
    `## ${stamp(b.time)} - ralph: ${b.storyId} verified with pinned tests (${renderWhen(b.iteration)})`,
    `Commit: ${b.commit ?? '(none)'}`,
    `Note: ${b.note}`,
    '---',
    '',
  ].join('\n');
}

export interface RejectionBlock {
  time: Date;
  iteration: number;
  storyId: string;
  title?: string;
  commit: string | null;
  reason: string;
  check?: CheckResult;
  /** The reviewer's reasons in its own words (a REVISE), shown whole. */
  review?: string;
}

/** The block appended to progress.txt, so the next fresh agent starts from the failure itself. */
export function renderRejectionBlock(b: RejectionBlock): string {
  const lines = [
    '',
    `## ${stamp(b.time)} - ralph: ${b.storyId} rejected (${renderWhen(b.iteration)})`,
    ...(b.title ? [`Story: ${b.storyId} ${b.title}`] : []),
    `Commit: ${b.commit ?? '(none)'}`,
    `Reason: ${b.reason}`,
  ];
  if (b.check) {
    const tail = tailLines(b.check.outputTail, TAIL_LINES);
    const fence = fenceFor(tail);
    lines.push(
      `Command: ${b.check.command}`,
      `Exit code: ${b.check.exitCode ?? `none (${b.check.timedOut ? 'timed out' : (b.check.signal ?? 'killed')})`}`,
    );
    lines.push(`Output (last ${TAIL_LINES} lines):`, fence, tail, fence);
  }
  if (b.review) lines.push("The reviewer's reasons:", fenceFor(b.review), b.review, fenceFor(b.review));
  lines.push('The runner set passes back to false. Fix the cause, commit, then claim the story again.', '---', '');
  return lines.join('\n');
}

export function renderRestoreBlock(time: Date, iteration: number, restored: string[]): string {
  return [
    '',
    `## ${stamp(time)} - ralph: prd.json restored (${renderWhen(iteration)})`,
    'Only `passes` and `notes` in prd.json are yours to change; the runner undid these edits:',
    ...restored.map((r) => `- ${r}`),
    '---',
    '',
  ].join('\n');
}

/** Iteration 0 is the runner's own pass over stories the plan already marks done, before iteration 1. */
export function renderWhen(iteration: number): string {
  return iteration === 0 ? 'at start' : `iteration ${iteration}`;
}

/** The last `n` lines of `text`, colour codes removed, at most ~8 KB so one noisy line cannot flood the log. */
export function tailLines(text: string, n: number): string {
  const lines = stripAnsi(text).replace(/\r\n?/g, '\n').replace(/\n+$/, '').split('\n');
  let tail = lines.slice(-n).join('\n');
  if (tail.length > TAIL_MAX_CHARS) tail = '…' + tail.slice(tail.length - TAIL_MAX_CHARS);
  return tail;
}

/** A code fence longer than any backtick run in the text, so output cannot close it early. */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  return '`'.repeat(Math.max(3, longest + 1));
}

function stamp(d: Date): string {
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** The progress.txt block for an iteration killed at --iteration-timeout, so the next agent knows where it stopped. */
export function renderTimeoutBlock(time: Date, iteration: number, timeout: string, output: string): string {
  const tail = tailLines(output, TIMEOUT_TAIL_LINES);
  const fence = fenceFor(tail);
  return [
    '',
    `## ${stamp(time)} - ralph: iteration ${iteration} timed out`,
    `ralph: iteration ${iteration} timed out after ${timeout}; the agent and everything it started were killed.`,
    ...(tail ? [`Its output (last ${TIMEOUT_TAIL_LINES} lines):`, fence, tail, fence] : ['It printed nothing.']),
    'Whatever it left uncommitted is still in the working tree: commit it or discard it before claiming a story. Take smaller steps and commit as you go.',
    '---',
    '',
  ].join('\n');
}

/** The progress.txt block after the runner put back its own files or git's configuration (run/after-agent.ts). */
export function renderGuardBlock(time: Date, iteration: number, changed: string[], rejected: boolean): string {
  return [
    '',
    `## ${stamp(time)} - ralph: iteration ${iteration} changed the runner's files`,
    `The runner put these back as they were when the loop started${rejected ? " and rejected the iteration's claims" : ''}:`,
    ...changed.map((c) => `- ${c}`),
    'The engine (ralph/ralph.mjs, ralph.sh), ralph/.ralphkit.json, .git/config and .git/hooks are not yours to change.',
    '---',
    '',
  ].join('\n');
}

/** Why the claims of an iteration whose agent moved to another branch are rejected. */
export function renderOffBranchReason(branch: string, where: string): string {
  return `the work is not on ${branch}: the agent committed it on ${where}`;
}

export interface OffBranchBlock {
  time: Date;
  iteration: number;
  branch: string;
  /** The other branch's name, or "a detached HEAD (<sha>)". */
  where: string;
  commits: string[];
}

/** The progress.txt block after the runner brought the work tree back to the loop's branch. */
export function renderOffBranchBlock(b: OffBranchBlock): string {
  return [
    '',
    `## ${stamp(b.time)} - ralph: iteration ${b.iteration} worked on the wrong branch`,
    `The agent switched from ${b.branch} to ${b.where}${b.commits.length ? ' and committed there:' : '.'}`,
    ...b.commits.map((c) => `- ${c}`),
    `The runner switched back to ${b.branch} and rejected the iteration's claims; those commits are not part of this loop.`,
    `Stay on ${b.branch}: never run git checkout, git switch or git branch -f. Redo the work here, commit, then claim the story.`,
    '---',
    '',
  ].join('\n');
}
