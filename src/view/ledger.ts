// Ledger lines as the dashboard shows them. Reading ledger.jsonl and deciding a story's verdict are the
// engine's (src/engine/store/ledger.ts: `parseLedger`, `summariseLedger`), so the page and `ralphkit status`
// can never disagree; this module only turns each line into a display record with every field present
// (null when missing), because the file is on disk and anything may have written a line.
import { isVerdictStatus, type LedgerLine, type VerdictStatus } from '../engine/store/ledger.js';

export type Verdict = VerdictStatus;

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
  /** The verdict, on verdict lines only: the lines that decide are the lines the page shows as verdicts. */
  status: Verdict | null;
  reason: string | null;
}

export function toLedgerEntry(line: LedgerLine): LedgerEntry {
  const r = line as unknown as Record<string, unknown>;
  const kind = r.kind === 'check' || r.kind === 'verdict' ? r.kind : null;
  return {
    kind,
    scope: str(r.scope),
    time: str(r.time) ?? '',
    loop: str(r.loop) ?? '',
    iteration: num(r.iteration),
    story: line.story,
    commit: str(r.commit),
    command: str(r.command),
    exitCode: num(r.exitCode),
    durationMs: num(r.durationMs),
    outputSha256: str(r.outputSha256),
    signal: str(r.signal),
    timedOut: r.timedOut === true,
    shared: r.shared === true,
    aborted: r.aborted === true,
    status: kind === 'verdict' && isVerdictStatus(r.status) ? r.status : null,
    reason: str(r.reason),
  };
}

// A value of the wrong type reads as missing. `str` also turns the empty strings of `ralphkit status` into null (snapshot.ts).
export function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
