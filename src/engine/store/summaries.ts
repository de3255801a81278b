// `status`: the loops of a repository as read from ralph/.runs/, and the table that shows them. Shared by
// ralph.mjs and `ralphkit status` (and the dashboard's /api/loops). The agent can write ralph/.runs/, so a
// story counts as verified only from its loop's sealed verdict record (store/verdict-record.ts, SPEC §6).
import path from 'node:path';
import { isRunning, scanLoopStates, type UnreadableState } from './state-file.js';
import { ledgerPath, runsDir } from './layout.js';
import { readLedger, summariseLedger, type StoryLedgerState, type StoryReview } from './ledger.js';
import {
  planVerification,
  readStoryStatus,
  readVerdictRecordsSync,
  sealReviews,
  type VerdictRecord,
} from './verdict-record.js';
import type { LoopState, ParallelState } from './state-types.js';
import { LoopExit, describeError, LOOP_EXIT } from '../errors.js';
import { showPath } from '../../util/repo-path.js';
import { renderCostSplit } from '../../util/usd.js';
import { sanitizeForTerminal } from '../../util/ansi.js';
import { renderMaxIterations } from '../events.js';
import { activeStories, isSkipped } from '../../prd/skip.js';
import { renderParallelNotes } from './parallel-notes.js';
import { shellQuote } from '../../util/shell-quote.js';
import { matchSealedStories, readLoopPlan, type LoopPlan } from './loop-plan.js';

/** One loop as `status` and the dashboard show it; fields a hand-written or foreign state.json lacks are null or ''. */
export interface LoopSummary {
  id: string;
  status: string;
  iteration: number | null;
  maxIterations: number | null;
  agent: string;
  /** The runner's pid as recorded, and when it started (Linux), for callers that poll liveness themselves. */
  pid: number | null;
  pidStart?: number;
  alive: boolean;
  costUsd: number;
  /** The part of costUsd the reviewer's runs reported, when they reported one. */
  reviewCostUsd?: number;
  prd: string;
  /** Passing stories and all stories, leaving out those the plan sets aside (`skip`), which storiesSkipped counts. */
  storiesPassed: number | null;
  storiesTotal: number | null;
  storiesSkipped: number | null;
  /** Stories the loop's sealed verdict record says verified (and no rejection since in its ledger). */
  verified: number;
  /** Stories whose latest ledger verdict is verified but no valid record confirms: reported by a runner, not sealed. */
  reported: number;
  /** Stories whose check already passed on the plan commit, before any work (the start-of-run probe). */
  weak: string[];
  /** Stories the record accepted on the agent's word (no checks apply). */
  unverified: number;
  /** Stories whose latest ledger verdict is a rejection (a forged one only understates). */
  rejected: number;
  /**
   * Per reviewed story, the reviewer's newest answer and how often it asked for changes: the runner's report in its
   * ledger (read-only to the agent under --sandbox), never what makes a story count as verified.
   */
  reviews: Record<string, StoryReview>;
  startedAt: string;
  updatedAt: string;
  exitCode: number | null;
  message?: string;
  /** A loop inside a Claude Code session (/ralph-loop): its pid is Claude Code's, each stop one iteration. */
  inSession?: true;
  /** A --worktree loop: the tree it works in and its branch. */
  worktree?: { path: string; branch: string };
  /** A --parallel run: its workers, merge queue, merged and given-up stories, as its state.json has them. */
  parallel?: ParallelState;
  /** The commit the loop's sealed verdict record names, when it has one. */
  recordCommit?: string;
  /** Where the stories were read (store/loop-plan.ts): the loop's branch, and its tree, that branch's tip or the record's commit. */
  plan?: { branch: string | null; from: LoopPlan['from'] };
}

/** The loops as the dashboard shows them; a ralph/.runs/ that cannot be read shows as none (the page must go on). */
export function readLoopSummaries(repoRoot: string, env: NodeJS.ProcessEnv = process.env): LoopSummary[] {
  try {
    return readLoopSummariesOrRefuse(repoRoot, env);
  } catch (err) {
    if (err instanceof LoopExit) return [];
    throw err;
  }
}

/**
 * The loops for `status`, which must not answer "no loops yet" about a folder it could not read: a ralph/.runs/
 * that exists but cannot be listed refuses (exit 2), naming the folder and the OS error.
 */
export function readLoopSummariesOrRefuse(repoRoot: string, env: NodeJS.ProcessEnv = process.env): LoopSummary[] {
  let scan: ReturnType<typeof scanLoopStates>;
  try {
    scan = scanLoopStates(repoRoot);
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    const folder = showPath(repoRoot, runsDir(repoRoot));
    throw new LoopExit(
      LOOP_EXIT.refused,
      `could not read ${folder}/ (${describeError(err as Error)}), so the loops cannot be listed`,
      renderUnreadableRunsHint(folder, (err as NodeJS.ErrnoException).code!),
    );
  }
  // `env` decides where the record key is read from ($RALPH_KEY_DIR, as for the runner that sealed the records).
  const records = scan.states.length ? readVerdictRecordsSync(repoRoot, env) : new Map<string, VerdictRecord>();
  return [
    ...scan.states.map((s) => summarise(repoRoot, s, (typeof s.id === 'string' && records.get(s.id)) || null)),
    ...scan.unreadable.map((u) => summariseUnreadable(repoRoot, u)),
  ];
}

export type LoopCounts = Pick<LoopSummary, 'verified' | 'reported' | 'unverified' | 'rejected'>;

/**
 * A loop's counts: verified and unverified only from its sealed record, rejected from its ledger, and reported for
 * ledger verdicts of `verified` that the record does not confirm. The same rule (planVerification) as the dashboard.
 */
export function planLoopCounts(
  ledger: Readonly<Record<string, StoryLedgerState>>,
  record: Readonly<Record<string, unknown>> | null,
): LoopCounts {
  const counts: LoopCounts = { verified: 0, reported: 0, unverified: 0, rejected: 0 };
  const ids = new Set([...Object.keys(ledger), ...(record ? Object.keys(record) : [])]);
  for (const id of ids) {
    const verification = planVerification(
      readStoryStatus(record, id),
      Object.hasOwn(ledger, id) ? ledger[id].status : undefined,
    );
    if (verification) counts[verification]++;
  }
  return counts;
}

// A corrupt state.json must not make its loop vanish (a runner may still be going): it is listed under its folder's name.
function summariseUnreadable(repoRoot: string, u: UnreadableState): LoopSummary {
  return {
    id: u.id,
    status: 'unreadable',
    iteration: null,
    maxIterations: null,
    agent: '',
    pid: null,
    alive: false,
    costUsd: 0,
    prd: '',
    storiesPassed: null,
    storiesTotal: null,
    storiesSkipped: null,
    verified: 0,
    reported: 0,
    unverified: 0,
    rejected: 0,
    weak: [],
    reviews: {},
    startedAt: '',
    updatedAt: '',
    exitCode: null,
    message: `could not read ${showPath(repoRoot, u.file)} (${u.error})`,
  };
}

/** One warning per loop whose state.json could not be read, naming the file (stderr, beside the table). */
export function renderUnreadableWarnings(loops: LoopSummary[]): string[] {
  return loops
    .filter((l) => l.status === 'unreadable')
    .map(
      (l) =>
        `${l.message}; loop ${l.id} is listed as unreadable: fix or remove that file (a loop still running rewrites it at its next step)`,
    );
}

function renderUnreadableRunsHint(folder: string, code: string): string {
  if (code === 'ENOTDIR')
    return `${folder} (or a folder above it) is a file, not a folder: move the file away (the next loop creates the folder), then run status again`;
  return `run status as the user who started the loops, or make ${folder}/ readable for this user (chmod u+rx ${shellQuote(folder)}), then run it again`;
}

// state.json is read as written, possibly by hand or by an older runner: every field is checked before use.
function summarise(repoRoot: string, s: LoopState, record: VerdictRecord | null): LoopSummary {
  const alive = isRunning(s);
  const prd = typeof s.prd === 'string' ? s.prd : '';
  const plan = prd ? readLoopPlan(repoRoot, s, prd, record) : { stories: null, branch: null, from: null };
  const stories = plan.stories;
  const summary = summariseLedger(readLedger(ledgerPath(repoRoot, s.id)));
  // The record's verdicts of the loop's own stories only: a plan that reused an id since is not what it verified.
  const counts = planLoopCounts(
    summary.stories,
    record && stories ? matchSealedStories(repoRoot, record, prd, stories, plan.branch) : null,
  );
  const status = typeof s.status === 'string' ? s.status : 'unknown';
  return {
    id: s.id,
    // A runner killed with -9 never wrote its end: say so rather than "running".
    status: status === 'running' && !alive ? 'dead' : status,
    iteration: num(s.iteration),
    maxIterations: num(s.maxIterations),
    agent: typeof s.agent === 'string' ? s.agent : '',
    pid: num(s.pid),
    ...(num(s.pidStart) !== null ? { pidStart: s.pidStart } : {}),
    alive,
    costUsd: num(s.costUsd) ?? 0,
    ...(num(s.reviewCostUsd) !== null ? { reviewCostUsd: s.reviewCostUsd } : {}),
    prd,
    storiesPassed: stories ? activeStories(stories).filter((x) => x.passes === true).length : null,
    storiesTotal: stories ? activeStories(stories).length : null,
    storiesSkipped: stories ? stories.filter(isSkipped).length : null,
    ...counts,
    weak: summary.weak,
    reviews: sealReviews(summary.reviews, record),
    startedAt: typeof s.startedAt === 'string' ? s.startedAt : '',
    updatedAt: typeof s.updatedAt === 'string' ? s.updatedAt : '',
    exitCode: num(s.exitCode),
    ...(typeof s.message === 'string' && s.message ? { message: s.message } : {}),
    ...(s.inSession === true ? { inSession: true as const } : {}),
    ...(s.worktree && typeof s.worktree.path === 'string' && typeof s.worktree.branch === 'string'
      ? { worktree: { path: s.worktree.path, branch: s.worktree.branch } }
      : {}),
    ...(s.parallel && typeof s.parallel === 'object' && !Array.isArray(s.parallel) ? { parallel: s.parallel } : {}),
    plan: { branch: plan.branch, from: plan.from },
    ...(record ? { recordCommit: record.commit } : {}),
  };
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function renderStoriesCell(l: LoopSummary): string {
  if (l.storiesTotal === null) return '?';
  return `${l.storiesPassed}/${l.storiesTotal}${l.storiesSkipped ? ` +${l.storiesSkipped} skipped` : ''}`;
}

/** `now`: the clock a running --parallel run's workers are timed against. */
export function renderLoopTable(loops: LoopSummary[], now = Date.now()): string {
  if (!loops.length) return 'no loops yet in ralph/.runs/ (start one with ./ralph/ralph.sh)\n';
  const rows = [
    ['ID', 'STATUS', 'ITER', 'AGENT', 'ALIVE', 'COST', 'STORIES', 'VERIFIED', 'REPORTED', 'UNVERIFIED', 'REJECTED'],
  ];
  const notes = new Map<number, string>();
  for (const l of loops) {
    rows.push([
      l.id,
      l.status,
      `${l.iteration ?? '?'}/${l.maxIterations === null ? '?' : renderMaxIterations(l.maxIterations)}`,
      renderAgentCell(l.agent),
      l.alive ? 'yes' : 'no',
      renderCost(l),
      renderStoriesCell(l),
      String(l.verified),
      String(l.reported),
      String(l.unverified),
      String(l.rejected),
    ]);
    const where = l.worktree && l.alive ? `in the worktree ${l.worktree.path} on ${l.worktree.branch}` : '';
    const note = [
      where,
      renderPlanNote(l),
      renderLoopNote(l),
      ...renderParallelNotes(l.parallel, renderClockEnd(l, now)),
      ...renderReviewNotes(l),
    ]
      .filter(Boolean)
      .join('\n  └ ');
    if (note) notes.set(rows.length - 1, note);
  }
  // Ids, agents and messages come from state.json, which the agent can write: cells are made safe before they are padded.
  for (const row of rows) row.forEach((cell, i) => (row[i] = sanitizeForTerminal(cell)));
  for (const [n, note] of notes)
    notes.set(
      n,
      note
        .split('\n')
        .map((line) => sanitizeForTerminal(line))
        .join('\n'),
    );
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return (
    rows
      .map((r, n) => {
        const line = r
          .map((c, i) => c.padEnd(widths[i]))
          .join('  ')
          .trimEnd();
        return notes.has(n) ? `${line}\n  └ ${notes.get(n)}` : line;
      })
      .join('\n') + '\n'
  );
}

// A running run's workers are timed to now; a stopped one's to its last update (its clock stopped then).
function renderClockEnd(l: LoopSummary, now: number): number | null {
  if (l.alive) return now;
  const updated = Date.parse(l.updatedAt);
  return Number.isFinite(updated) ? updated : null;
}

const AGENT_WIDTH = 24;
const NOTE_WIDTH = 110;

/**
 * The agent as the table shows it: an `--agent-cmd` command with each path cut to its file name (the script is
 * what tells loops apart, not /tmp/...), then shortened in the middle so both ends stay readable.
 */
export function renderAgentCell(agent: string): string {
  const short = agent.startsWith('cmd: ')
    ? agent
        .split(' ')
        .map((w, i) => (i > 0 && w.includes('/') ? path.posix.basename(w) || w : w))
        .join(' ')
    : agent;
  return shortenMiddle(short, AGENT_WIDTH);
}

/** A --review-cmd command with each path cut to its file name (quotes around it dropped), shortened like the agent. */
function renderReviewer(reviewer: string): string {
  const words = reviewer.split(' ').map((w) => {
    const bare = w.replace(/^["']|["']$/g, '');
    return bare.includes('/') ? path.posix.basename(bare) || w : w;
  });
  return shortenMiddle(words.join(' '), AGENT_WIDTH);
}

function shortenMiddle(text: string, width: number): string {
  if (text.length <= width) return text;
  const head = Math.ceil((width - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
}

// Stories read anywhere but the loop's own tree (on its branch) say where they come from: the tree is elsewhere.
function renderPlanNote(l: LoopSummary): string | null {
  if (l.plan?.from === 'branch')
    return `stories as committed on ${l.plan.branch} (the working tree is on another branch)`;
  if (l.plan?.from === 'record')
    return `stories as at ${l.recordCommit?.slice(0, 7)}, the commit its verdict record names (the branch ${l.plan.branch} is gone)`;
  if (l.plan?.branch && l.plan.from === null) return `its plan could not be read on ${l.plan.branch}`;
  return null;
}

// Why a loop stopped is what its owner needs next; a finished or running loop needs no note.
function renderLoopNote(l: LoopSummary): string | null {
  const weak = l.weak?.length ? `weak checks (pass before any work): ${l.weak.join(', ')}` : null;
  const stopped =
    l.status === 'running' || l.status === 'complete' ? null : l.status === 'dead' ? renderDeadNote(l) : l.message;
  const text = [stopped?.split('\n')[0], weak].filter(Boolean).join('; ');
  if (!text) return null;
  return text.length > NOTE_WIDTH ? `${text.slice(0, NOTE_WIDTH - 1)}…` : text;
}

function renderDeadNote(l: LoopSummary): string {
  if (l.inSession) return 'its Claude Code session is gone; start a new loop there with /ralph-loop';
  return `runner gone (killed?); continue with: ./ralph/ralph.sh --resume ${l.id}`;
}

// An --agent-cmd agent (or an in-session loop's hook) reports no cost, so $0.00 would claim a figure nobody
// measured. Otherwise the figure the loop printed (renderUsd), not one rounded to cents: $0.0025 is not $0.00.
function renderCost(l: LoopSummary): string {
  return l.costUsd === 0 && (l.agent.startsWith('cmd: ') || l.inSession)
    ? 'n/a'
    : renderCostSplit(l.costUsd, l.reviewCostUsd);
}

/** One line per reviewed story: `review US-1: shipped by claude (opus) at 1a2b3c4, after 1 revise`. */
function renderReviewNotes(l: LoopSummary): string[] {
  return Object.entries(l.reviews ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, r]) => {
      const who = `${renderReviewer(r.reviewer)}${r.model ? ` (${r.model})` : ''}`;
      const at = r.commit ? ` at ${r.commit.slice(0, 7)}` : '';
      const answer =
        r.verdict === 'ship'
          ? `shipped by ${who}${at}${r.sealed ? '' : ' (reported)'}`
          : r.verdict === 'revise'
            ? `changes asked by ${who}${at}`
            : `not shipped (${who}${at})`;
      const history = [r.revised && `revised ${r.revised}×`, r.invalid && `${r.invalid} not shipped`]
        .filter(Boolean)
        .join(', ');
      const line = `review ${id}: ${answer}${history ? `; ${history}` : ''}`;
      return line.length > NOTE_WIDTH ? `${line.slice(0, NOTE_WIDTH - 1)}…` : line;
    });
}
