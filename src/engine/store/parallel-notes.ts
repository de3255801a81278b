// `status` under a --parallel run's row: one line per worker, then the merge queue, the stories merged and those given
// up. The state is read as written (the agents can write ralph/.runs/), so every field is checked before it is shown.
import { formatDuration } from '../core/duration.js';

/**
 * The lines under a --parallel run, or none when `parallel` is not a parallel state. `end` is when its clock stops:
 * now for a run that is running, its last update for one that stopped (null: elapsed times are left out).
 */
export function renderParallelNotes(parallel: unknown, end: number | null): string[] {
  if (!isObject(parallel)) return [];
  const workers = Array.isArray(parallel.states) ? parallel.states.filter(isObject) : [];
  const rows = workers.map((w) => renderWorkerCells(w, end));
  const widths = rows.reduce((acc: number[], row) => row.map((cell, i) => Math.max(acc[i] ?? 0, cell.length)), []);
  // A column empty for every worker (no clock, no branches yet) takes no room.
  const shown = widths.flatMap((width, i) => (width > 0 ? [i] : []));
  const lines = rows.map((row) =>
    shown
      .map((i) => row[i].padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
  const queue = Array.isArray(parallel.queue)
    ? parallel.queue.filter(isObject).map((q) => `${text(q.story)}${whole(q.worker) ? ` (w${q.worker})` : ''}`)
    : [];
  if (queue.length) lines.push(`merge queue: ${queue.join(', ')}`);
  const merged = Array.isArray(parallel.merged) ? parallel.merged.map(text) : [];
  if (merged.length) lines.push(`merged: ${merged.join(', ')}`);
  const givenUp = isObject(parallel.givenUp)
    ? Object.entries(parallel.givenUp).map(([id, why]) => `${id} (${text(why).split('\n')[0]})`)
    : [];
  if (givenUp.length) lines.push(`given up: ${givenUp.join('; ')}`);
  return lines;
}

// `w2  agent  US-3  iteration 7  2m05s  ralph/x--US-3`; an idle worker has no story, so `-` and nothing after it.
function renderWorkerCells(w: Record<string, unknown>, end: number | null): string[] {
  const started = typeof w.startedAt === 'string' ? Date.parse(w.startedAt) : NaN;
  // NaN (no start, or not a date) compares false, as does a start after the clock (another machine's clock).
  const elapsed = end !== null && end >= started ? formatDuration(end - started) : '';
  return [
    whole(w.worker) ? `w${w.worker}` : 'w?',
    text(w.phase) || '?',
    text(w.story) || '-',
    whole(w.iteration) ? `iteration ${w.iteration}` : '',
    elapsed,
    text(w.branch),
  ];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function whole(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
}
