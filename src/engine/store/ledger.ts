// ralph/.runs/<loop-id>/ledger.jsonl: the evidence behind every verdict (SPEC §6), one JSON object per line.
// `kind: "check"` lines record one command run; `kind: "verdict"` lines (command null) record what was
// decided about one claim, so a reader never has to re-derive verdicts from check lines.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type VerdictStatus = 'verified' | 'unverified' | 'rejected';

const VERDICT_STATUSES: readonly VerdictStatus[] = ['verified', 'unverified', 'rejected'];

/** Lines come from disk, so a status is only trusted once it is one of the three the runner writes. */
export function isVerdictStatus(value: unknown): value is VerdictStatus {
  return (VERDICT_STATUSES as readonly unknown[]).includes(value);
}

interface LedgerBase {
  time: string;
  loop: string;
  iteration: number;
  story: string;
  /** HEAD when the check ran (the commit under test), or null in a repository without commits. */
  commit: string | null;
  /** Run or decided by the final gate on the final commit (verify/final-gate.ts), not by a claim's own pass. */
  gate?: boolean;
}

export interface CheckLine extends LedgerBase {
  kind: 'check';
  /** prd: from the plan's `checks` · story: from the story's `checks` · setup: the plan's `setup` (worktree mode). */
  scope: 'prd' | 'story' | 'setup';
  command: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  outputSha256: string;
  /** True when this run's result was also recorded for another story claimed in the same iteration. */
  shared?: boolean;
  /**
   * True when the runner was interrupted (Ctrl-C, cancel) while this command ran and stopped it. Such a pass
   * decides nothing: no verdict line follows, and the claim is judged again when the loop resumes.
   */
  aborted?: boolean;
}

export interface VerdictLine extends LedgerBase {
  kind: 'verdict';
  command: null;
  exitCode: null;
  status: VerdictStatus;
  reason?: string;
  /** Total time spent verifying this claim. */
  durationMs: number;
  outputSha256: null;
}

/**
 * The start-of-run probe (verify/weak-checks.ts): a story check run on the plan commit, before any work. One that
 * passes there (`weak: true`) proves nothing about the story.
 */
export interface ProbeLine extends LedgerBase {
  kind: 'probe';
  command: string;
  exitCode: number | null;
  weak: boolean;
  durationMs: number;
  outputSha256: string;
}

/**
 * The reviewer's answer on a claim that passed its checks (verify/review.ts, SPEC §11): `ship` lets the claim count;
 * `revise` and `invalid` (no answer, both tags, a failure, a changed repository) reject it, and a verdict line follows.
 */
export interface ReviewLine extends LedgerBase {
  kind: 'review';
  command: null;
  exitCode: null;
  outputSha256: null;
  verdict: 'ship' | 'revise' | 'invalid';
  /** The agent's name (--review-agent) or the command (--review-cmd). */
  reviewer: string;
  model: string | null;
  /** Where the reviewed diff starts (the loop's last verified commit, or its plan commit). */
  base: string | null;
  reason?: string;
  costUsd?: number;
  durationMs: number;
}

export type LedgerLine = CheckLine | VerdictLine | ProbeLine | ReviewLine;

export function appendLedger(file: string, lines: LedgerLine[]): void {
  if (!lines.length) return;
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, lines.map((l) => JSON.stringify(l) + '\n').join(''));
}

/**
 * Every well-formed line of a ledger; a torn last line (a crash mid-append) is skipped, not fatal. A ledger that
 * cannot be read (missing, EACCES, a folder) has no lines: `status` and the dashboard then show no verdicts for that
 * loop instead of failing, and a resumed run verifies its stories again; the runner's next append (appendLedger)
 * still reports the file as unwritable.
 */
export function readLedger(file: string): LedgerLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return parseLedger(text);
}

export function parseLedger(text: string): LedgerLine[] {
  const out: LedgerLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const v = JSON.parse(raw) as LedgerLine;
      if (v && typeof v === 'object' && typeof v.story === 'string') out.push(v);
    } catch {
      // torn or foreign line
    }
  }
  return out;
}

export interface StoryLedgerState {
  status: VerdictStatus;
  commit: string | null;
  time: string;
  loop: string;
  iteration: number;
  reason?: string;
}

export interface LedgerSummary {
  /** The latest verdict per story id. */
  stories: Record<string, StoryLedgerState>;
  /** How many stories have each latest status. */
  counts: Record<VerdictStatus, number>;
  /** How many commands were run in total. */
  checkRuns: number;
  /** Stories whose check the start-of-run probe found passing before any work (newest probe per story). */
  weak: string[];
  /** Per reviewed story, the reviewer's newest answer and its counts (addReview). */
  reviews: Record<string, StoryReview>;
}

/**
 * The latest verdict per story: the one rule `ralphkit status` and the dashboard both use. Lines may come
 * from several loops' ledgers in any order; the newest `time` wins (ties: the later line). Only verdict
 * lines decide: check lines without a verdict after them are a pass that was interrupted or killed before
 * it decided, so the story keeps its previous verdict (or none).
 */
export function summariseLedger(lines: readonly LedgerLine[]): LedgerSummary {
  // No prototype: a story may be called "constructor" or "__proto__".
  const stories: Record<string, StoryLedgerState> = Object.create(null);
  let checkRuns = 0;
  const probes = new Map<string, { time: string; weak: boolean }>();
  const reviews: Record<string, StoryReview> = Object.create(null);
  for (const line of lines) {
    if (line.kind === 'check') checkRuns++;
    if (line.kind === 'review') addReview(reviews, line);
    if (line.kind === 'probe') {
      const prev = probes.get(line.story);
      if (!prev || prev.time <= line.time)
        probes.set(line.story, {
          time: line.time,
          weak: line.weak === true || (prev?.time === line.time && prev.weak),
        });
      continue;
    }
    if (line.kind !== 'verdict' || !isVerdictStatus(line.status)) continue;
    const prev = stories[line.story];
    if (prev && prev.time > line.time) continue;
    stories[line.story] = {
      status: line.status,
      commit: line.commit,
      time: line.time,
      loop: line.loop,
      iteration: line.iteration,
      ...(line.reason ? { reason: line.reason } : {}),
    };
  }
  const counts: Record<VerdictStatus, number> = { verified: 0, unverified: 0, rejected: 0 };
  for (const s of Object.values(stories)) counts[s.status]++;
  const weak = [...probes]
    .filter(([, p]) => p.weak)
    .map(([id]) => id)
    .sort();
  return { stories, counts, checkRuns, weak, reviews };
}

/** A story's reviews (SPEC §11) as `status` and the dashboard show them: the newest answer, and how often it was sent back. */
export interface StoryReview {
  /** The newest answer: ship, revise (changes asked for) or invalid (no answer, both tags, a failure: not a SHIP). */
  verdict: ReviewLine['verdict'];
  /** Who gave it: the agent's name (--review-agent) or the command (--review-cmd), and the model when known. */
  reviewer: string;
  model: string | null;
  /** The commit it reviewed. */
  commit: string | null;
  time: string;
  /** How many REVISE answers the story got, and how many answers were not a SHIP for another reason. */
  revised: number;
  invalid: number;
  /** A SHIP the loop's sealed verdict record names (same reviewer, model and commit): the runner's, not a line anyone could append. */
  sealed?: boolean;
}

/**
 * One review line into the per-story summary: the newest line (by `time`; ties: the later line) gives the answer, and
 * every line counts. Lines come from disk: fields are checked.
 */
function addReview(out: Record<string, StoryReview>, line: ReviewLine): void {
  if (!REVIEW_VERDICTS.includes(line.verdict) || typeof line.time !== 'string') return;
  const prev = out[line.story];
  const revised = (prev?.revised ?? 0) + (line.verdict === 'revise' ? 1 : 0);
  const invalid = (prev?.invalid ?? 0) + (line.verdict === 'invalid' ? 1 : 0);
  const newer = !prev || prev.time <= line.time;
  const from = newer
    ? {
        verdict: line.verdict,
        reviewer: String(line.reviewer ?? ''),
        model: typeof line.model === 'string' ? line.model : null,
        commit: typeof line.commit === 'string' ? line.commit : null,
        time: line.time,
      }
    : prev;
  out[line.story] = { ...from, revised, invalid };
}

const REVIEW_VERDICTS: readonly ReviewLine['verdict'][] = ['ship', 'revise', 'invalid'];
