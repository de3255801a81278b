// The verification ledger (SPEC §6): ralph/.runs/<loop>/ledger.jsonl, one line per check run.
// The dashboard only reads it; lines it cannot understand are skipped, never fatal, because the
// engine may be appending to the file while we read it.

export type Verdict = 'verified' | 'unverified' | 'rejected';

export interface LedgerEntry {
  time: string;
  loop: string;
  iteration: number | null;
  story: string;
  commit: string | null;
  command: string | null;
  exitCode: number | null;
  durationMs: number | null;
  outputSha256: string | null;
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
    time: str(r.time) ?? '',
    loop: str(r.loop) ?? str(r.loopId) ?? fallbackLoop,
    iteration: num(r.iteration),
    story,
    commit: str(r.commit),
    command: str(r.command),
    exitCode: num(r.exitCode),
    durationMs: num(r.durationMs),
    outputSha256: str(r.outputSha256),
    status: typeof r.status === 'string' && VERDICTS.includes(r.status) ? (r.status as Verdict) : null,
    reason: str(r.reason),
  };
}

/**
 * The verdict of a story's latest verification attempt: the entries of the last (loop, iteration)
 * that checked it. A failing command rejects the attempt; an attempt with no command ran no checks.
 */
export function planVerdict(entries: readonly LedgerEntry[]): { verdict: Verdict; reason: string | null } | null {
  const last = entries.at(-1);
  if (!last) return null;
  const attempt = entries.filter((e) => e.loop === last.loop && e.iteration === last.iteration);
  const failed = attempt.find((e) => e.status === 'rejected' || (e.status === null && e.exitCode !== null && e.exitCode !== 0));
  if (failed) return { verdict: 'rejected', reason: failed.reason ?? failureReason(failed) };
  const unchecked = attempt.every((e) => e.status === 'unverified' || (e.status === null && e.command === null));
  return { verdict: unchecked ? 'unverified' : 'verified', reason: null };
}

function failureReason(e: LedgerEntry): string | null {
  if (e.command === null) return null;
  return `\`${e.command}\` exited with ${e.exitCode}`;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
