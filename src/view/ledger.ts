// The verification ledger (SPEC §6): ralph/.runs/<loop>/ledger.jsonl, written by src/engine/verify.ts:
// `kind: "check"` lines (one command run) and `kind: "verdict"` lines (what was decided about a claim).
// The dashboard only reads it; lines it cannot understand are skipped, never fatal, because the
// engine may be appending to the file while we read it. Fields are normalised for display.

export type Verdict = 'verified' | 'unverified' | 'rejected';

export interface LedgerEntry {
  /** check: a command ran · verdict: the decision about one claim (command null) · null: an older or foreign line */
  kind: 'check' | 'verdict' | null;
  /** prd, story or setup: where a check's command came from. */
  scope: string | null;
  time: string;
  loop: string;
  iteration: number | null;
  story: string;
  commit: string | null;
  command: string | null;
  exitCode: number | null;
  durationMs: number | null;
  outputSha256: string | null;
  signal: string | null;
  timedOut: boolean;
  /** The same check run recorded for another story claimed in the same iteration. */
  shared: boolean;
  /** The runner was interrupted while this check ran and decided nothing; the claim is judged on resume. */
  aborted: boolean;
  /** The verdict the runner recorded, when the line carries one. */
  status: Verdict | null;
  reason: string | null;
}

const VERDICTS: readonly string[] = ['verified', 'unverified', 'rejected'];

export function parseLedger(text: string, fallbackLoop = ''): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      continue; // a half-written last line, or a foreign line: skip it
    }
    const entry = toEntry(raw, fallbackLoop);
    if (entry) entries.push(entry);
  }
  return entries;
}

function toEntry(raw: unknown, fallbackLoop: string): LedgerEntry | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const story = str(r.story) ?? str(r.storyId);
  if (!story) return null;
  return {
    kind: r.kind === 'check' || r.kind === 'verdict' ? r.kind : null,
    scope: str(r.scope),
    time: str(r.time) ?? '',
    loop: str(r.loop) ?? str(r.loopId) ?? fallbackLoop,
    iteration: num(r.iteration),
    story,
    commit: str(r.commit),
    command: str(r.command),
    exitCode: num(r.exitCode),
    durationMs: num(r.durationMs),
    outputSha256: str(r.outputSha256),
    signal: str(r.signal),
    timedOut: r.timedOut === true,
    shared: r.shared === true,
    aborted: r.aborted === true,
    status: typeof r.status === 'string' && VERDICTS.includes(r.status) ? (r.status as Verdict) : null,
    reason: str(r.reason),
  };
}

/**
 * A story's current verdict from its ledger entries (oldest first): the latest verdict line, as
 * `ralphkit status` reads it. A ledger without verdict lines (hand-written, or older) is judged from
 * the check lines of its last (loop, iteration): a failing command rejects, no command at all is unverified.
 */
export function planVerdict(entries: readonly LedgerEntry[]): { verdict: Verdict; reason: string | null } | null {
  const decided = entries.filter((e) => e.status !== null).at(-1);
  if (decided) return { verdict: decided.status!, reason: decided.reason };
  // A check cut short by Ctrl-C decided nothing, so it cannot reject the story either.
  const settled = entries.filter((e) => !e.aborted);
  const last = settled.at(-1);
  if (!last) return null;
  const attempt = settled.filter((e) => e.loop === last.loop && e.iteration === last.iteration);
  const failed = attempt.find(isFailedCheck);
  if (failed) return { verdict: 'rejected', reason: failureReason(failed) };
  return { verdict: attempt.some((e) => e.command !== null) ? 'verified' : 'unverified', reason: null };
}

export function isFailedCheck(e: LedgerEntry): boolean {
  return e.command !== null && (e.timedOut || e.signal !== null || (e.exitCode !== null && e.exitCode !== 0));
}

function failureReason(e: LedgerEntry): string {
  if (e.timedOut) return `\`${e.command}\` timed out`;
  if (e.exitCode === null) return `\`${e.command}\` was killed by ${e.signal}`;
  return `\`${e.command}\` exited with ${e.exitCode}`;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
