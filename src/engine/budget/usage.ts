// The Claude subscription's usage (SPEC §7): the endpoint Claude Code's own /usage screen reads. It is not a
// documented public API, so every surprise (no token, HTTP error, odd JSON, timeout) is a thrown Error and the
// budget gate decides, failing closed.
import type { UsageReading, UsageWindow } from './types.js';
import { formatDuration } from '../core/duration.js';
import { resolveUsageToken, type ResolveTokenOptions } from './credentials.js';

export const DEFAULT_USAGE_URL = 'https://api.anthropic.com/api/oauth/usage';
export const USAGE_BETA_HEADER = 'oauth-2025-04-20';
export const USAGE_TIMEOUT_MS = 15_000;

export interface ReadUsageOptions extends ResolveTokenOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** GET the usage endpoint (RALPH_USAGE_URL overrides it) with the stored token. */
export async function readUsage(options: ReadUsageOptions = {}): Promise<UsageReading> {
  const env = options.env ?? process.env;
  const url = env.RALPH_USAGE_URL?.trim() || DEFAULT_USAGE_URL;
  const token = await resolveUsageToken(options);
  const body = await fetchUsage(url, token, options);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`usage endpoint ${url} did not return JSON: ${snippet(body, token)}`);
  }
  return parseUsageResponse(json);
}

async function fetchUsage(url: string, token: string, options: ReadUsageOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? USAGE_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  // AbortSignal.any arrived in Node 20.3; on older 20.x only the timeout applies.
  const signal =
    options.signal && typeof AbortSignal.any === 'function' ? AbortSignal.any([timeout, options.signal]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, 'anthropic-beta': USAGE_BETA_HEADER, accept: 'application/json' },
      signal,
    });
  } catch (err) {
    const reason =
      (err as Error).name === 'TimeoutError' ? `no answer within ${formatDuration(timeoutMs)}` : causeOf(err);
    throw new Error(`usage endpoint ${url} unreachable: ${snippet(reason, token)}`);
  }
  const text = await res.text().catch(() => '');
  if (res.status === 401 || res.status === 403) {
    throw new Error(
      `usage endpoint ${url} refused the token (HTTP ${res.status}); run \`claude\` once to refresh the login, or set RALPH_USAGE_TOKEN`,
    );
  }
  if (!res.ok) throw new Error(`usage endpoint ${url} answered HTTP ${res.status}: ${snippet(text, token)}`);
  return text;
}

/** `{five_hour: {utilization, resets_at}, seven_day: {...}}` → UsageReading; throws on any other shape. */
export function parseUsageResponse(json: unknown): UsageReading {
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('usage response is not a JSON object');
  const o = json as Record<string, unknown>;
  if (!('five_hour' in o) && !('seven_day' in o)) throw new Error('usage response has neither five_hour nor seven_day');
  return { fiveHour: parseWindow(o.five_hour, 'five_hour'), sevenDay: parseWindow(o.seven_day, 'seven_day') };
}

// A window is null (or absent) when nothing was used in it yet: 0%, no reset pending.
function parseWindow(value: unknown, name: string): UsageWindow {
  if (value === null || value === undefined) return { utilization: 0, resetsAt: null };
  if (typeof value !== 'object') throw new Error(`usage response: ${name} is not an object`);
  const w = value as Record<string, unknown>;
  const utilization = w.utilization ?? 0;
  if (typeof utilization !== 'number' || !Number.isFinite(utilization))
    throw new Error(`usage response: ${name}.utilization is not a number`);
  const raw = w.resets_at;
  if (raw !== null && raw !== undefined && typeof raw !== 'string')
    throw new Error(`usage response: ${name}.resets_at is not a string`);
  const resetsAt = raw ? new Date(raw) : null;
  if (resetsAt && Number.isNaN(resetsAt.getTime())) throw new Error(`usage response: ${name}.resets_at is not a date`);
  return { utilization, resetsAt };
}

/** "5-hour 42% (resets in 2h10m), 7-day 13% (resets in 76h02m)" */
export function renderUsage(reading: UsageReading, now: Date): string {
  return `5-hour ${renderWindow(reading.fiveHour, now)}, 7-day ${renderWindow(reading.sevenDay, now)}`;
}

export function renderWindow(w: UsageWindow, now: Date): string {
  const pct = `${Math.round(w.utilization * 10) / 10}%`;
  if (!w.resetsAt) return pct;
  return `${pct} (resets in ${formatDuration(Math.max(0, w.resetsAt.getTime() - now.getTime()))})`;
}

function causeOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

// Response bodies and error texts are echoed for diagnosis; cut them short and scrub the token in case a proxy
// reflects the request back.
function snippet(text: string, token: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const cut = flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
  return (token ? cut.split(token).join('<token>') : cut) || '(empty)';
}
