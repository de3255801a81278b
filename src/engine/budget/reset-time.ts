// Reset times as agents print them, turned into instants: "7pm", "3:30am (Europe/Paris)", "Dec 3, 7pm",
// "Jul 5th, 2026 8:19 PM", "in 4 days 20 hours 9 minutes", an epoch. Wall-clock times are read in the time zone
// the message names, else in the local zone (the agent runs on this machine and prints local times).
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
// Claude Code prints the reset minute without seconds, so a time up to this far in the past means "just now".
const JUST_PASSED_MS = 10 * 60_000;
const JUST_PASSED_WAIT_MS = 60_000;

const ABSOLUTE = new RegExp(
  String.raw`^(?:(?<mon>[a-z]{3})[a-z]*\.?\s+(?<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(?<year>\d{4}),?\s+)?(?:at\s+)?)?` +
    String.raw`(?<h>\d{1,2})(?::(?<min>\d{2}))?(?:\s*(?<ampm>[ap])\.?m\.?)?$`,
  'i',
);
const RELATIVE = /^in\s+((?:\d+\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)$/i;
const ZONE = /\s*\(([A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*)\)\s*$/;

/** The instant a reset phrase names, strictly after `now`; null when it names none we can read. */
export function parseResetTime(phrase: string, now: Date, localZone?: string): Date | null {
  let text = phrase
    .trim()
    .replace(/[.!]+$/, '')
    .trim();
  let zone = localZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const z = ZONE.exec(text);
  if (z) {
    if (isZone(z[1])) zone = z[1];
    text = text.slice(0, z.index).trim();
  }
  if (/^\d{10,13}$/.test(text)) return future(epochToDate(text), now);
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) return future(new Date(text), now);
  const rel = RELATIVE.exec(text);
  if (rel) return new Date(now.getTime() + relativeMs(rel[1]));
  const abs = ABSOLUTE.exec(text);
  return abs?.groups ? absolute(abs.groups, now, zone) : null;
}

/** Seconds (10 digits) or milliseconds (13 digits) since the epoch. */
export function epochToDate(digits: string): Date {
  const n = Number(digits);
  return new Date(digits.length >= 13 ? n : n * 1000);
}

function future(d: Date, now: Date): Date | null {
  return Number.isNaN(d.getTime()) || d.getTime() <= now.getTime() ? null : d;
}

function relativeMs(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/(\d+)\s*([a-z]+)/gi)) total += Number(m[1]) * UNIT_MS[m[2][0].toLowerCase()];
  return total;
}

function absolute(g: Record<string, string | undefined>, now: Date, zone: string): Date | null {
  let hour = Number(g.h);
  const minute = g.min ? Number(g.min) : 0;
  if (g.ampm) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (g.ampm.toLowerCase() === 'p' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  const today = wallClock(now, zone);
  if (g.mon) {
    const month = MONTHS.indexOf(g.mon.toLowerCase());
    if (month < 0) return null;
    const day = Number(g.day);
    const at = (year: number) => zonedTime(year, month, day, hour, minute, zone);
    const first = at(g.year ? Number(g.year) : today.year);
    if (first.getTime() > now.getTime() || g.year) return settle(first, now);
    return at(today.year + 1);
  }
  const first = zonedTime(today.year, today.month, today.day, hour, minute, zone);
  if (first.getTime() > now.getTime()) return first;
  if (now.getTime() - first.getTime() < JUST_PASSED_MS) return new Date(now.getTime() + JUST_PASSED_WAIT_MS);
  return zonedTime(today.year, today.month, today.day + 1, hour, minute, zone);
}

function settle(d: Date, now: Date): Date | null {
  if (d.getTime() > now.getTime()) return d;
  return now.getTime() - d.getTime() < JUST_PASSED_MS ? new Date(now.getTime() + JUST_PASSED_WAIT_MS) : null;
}

function isZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

interface WallClock {
  year: number;
  month: number;
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function partsIn(instant: Date, zone: string): Record<string, number> {
  let f = formatters.get(zone);
  if (!f) {
    const opts = {
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    } as const;
    f = new Intl.DateTimeFormat('en-US', { ...opts, timeZone: zone, hourCycle: 'h23' });
    formatters.set(zone, f);
  }
  const out: Record<string, number> = {};
  for (const p of f.formatToParts(instant)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

function wallClock(instant: Date, zone: string): WallClock {
  const p = partsIn(instant, zone);
  return { year: p.year, month: p.month - 1, day: p.day };
}

// How far the zone's wall clock is ahead of UTC at an instant.
function offsetMs(instant: Date, zone: string): number {
  const p = partsIn(instant, zone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

/** The instant at which the zone's wall clock shows this time (month 0-based; day may overflow). */
export function zonedTime(year: number, month: number, day: number, hour: number, minute: number, zone: string): Date {
  const wall = Date.UTC(year, month, day, hour, minute);
  const guess = wall - offsetMs(new Date(wall), zone);
  return new Date(wall - offsetMs(new Date(guess), zone));
}
