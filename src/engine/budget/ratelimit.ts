// Rate- and usage-limit messages in an agent's output (SPEC §7). Only the exact shapes the agents print count,
// each at the start of a line (after a bullet, a timestamp or an "Error:" prefix): a story or a summary that
// merely talks about rate limits in a sentence must not pause the loop. Shapes, verified against
// @anthropic-ai/claude-code 2.1.x and @openai/codex 0.171 binaries and their issue trackers:
//   Claude Code  "You've hit your session limit · resets 7pm (Europe/Paris)", "You've hit your limit · resets 3am",
//                "5-hour limit reached ∙ resets 12pm", "Claude AI usage limit reached|1755615600",
//                "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
//                "API Error: 429 {...rate_limit_error...}", "Request rejected (429)",
//                stream-json {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":<s>}}
//   Codex        "You've hit your usage limit. Upgrade to Pro (...), or try again at Jul 5th, 2026 8:19 PM.",
//                "... or try again in 4 days 20 hours 9 minutes.", {"type":"usage_limit_reached","resets_at":<s>},
//                "exceeded retry limit, last status: 429 Too Many Requests"
//   Gemini       {"error":{"code":429,...,"status":"RESOURCE_EXHAUSTED"}}
import type { AgentResult } from '../types.js';
import type { RateLimitHit } from './types.js';
import { epochToDate, parseResetTime } from './reset-time.js';
import { stripAnsi } from '../../util/ansi.js';
import { parseClaudeLine } from '../agents/claude.js';

export interface DetectRateLimitOptions {
  /** Zone for wall-clock times that name none; default: this machine's zone. */
  timeZone?: string;
}

type Shape = (line: string, now: Date, zone: string | undefined) => Date | null | undefined;

// Bullets, tree glyphs, "[timestamp]" and "Error:" prefixes the CLIs put before their messages.
const PREFIX = /^(?:\s|[■⎿●✗✘×⚠>*•\-–]|\[\d[^\]]{0,39}\])*(?:(?:API\s+)?error\s*:\s*)?/i;
const SEPARATOR = /\s+[·∙•|]\s+/;

/** The last line of `text` that says a rate or usage limit was hit, with the reset it names (after `now`). */
export function detectRateLimit(text: string, now: Date, options: DetectRateLimitOptions = {}): RateLimitHit | null {
  const lines = stripAnsi(text).split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].replace(PREFIX, '').trim();
    if (!line) continue;
    for (const shape of SHAPES) {
      const resetAt = shape(line, now, options.timeZone);
      if (resetAt !== undefined) return { resetAt, message: line.length > 240 ? `${line.slice(0, 240)}…` : line };
    }
  }
  return null;
}

// Each shape returns undefined for "not this shape", else the reset instant or null when none is named.
const SHAPES: Shape[] = [
  claudeEpoch,
  claudeLegacy,
  limitReachedResets,
  youHitYourLimit,
  outOfUsage,
  jsonError,
  streamJsonEvent,
  http429,
];

function claudeEpoch(line: string, now: Date): Date | null | undefined {
  const m = /^Claude AI usage limit reached\|(\d{10,13})\b/i.exec(line);
  if (!m) return undefined;
  const at = epochToDate(m[1]);
  return at.getTime() > now.getTime() ? at : null;
}

function claudeLegacy(line: string, now: Date, zone?: string): Date | null | undefined {
  const m = /^Claude (?:AI )?usage limit reached\b[.!]?\s*(?:Your limit will reset at\s+(.+))?$/i.exec(line);
  if (!m) return undefined;
  return m[1] ? parseResetTime(m[1].split(SEPARATOR)[0], now, zone) : null;
}

function limitReachedResets(line: string, now: Date, zone?: string): Date | null | undefined {
  const m = /^(?:[\w-]+\s+){0,3}limit reached\s*[·∙•|-]\s*resets\s+(.+)$/i.exec(line);
  if (!m || /\bcontext\b/i.test(line)) return undefined;
  return parseResetTime(m[1].split(SEPARATOR)[0], now, zone);
}

function youHitYourLimit(line: string, now: Date, zone?: string): Date | null | undefined {
  const m = /^You(?:'|’|)ve (?:hit|reached) your\s+(.{0,40}?)\blimit\b(.*)$/i.exec(line);
  // Spend caps and credit limits do not reset on a clock: waiting would not help, so they are not limits here.
  if (!m || /\b(spend|credit|context)\b/i.test(m[1])) return undefined;
  return resetIn(m[2], now, zone);
}

function outOfUsage(line: string, now: Date, zone?: string): Date | null | undefined {
  const m = /^You(?:'|’|)re out of (?:extra usage|usage credits)\b(.*)$/i.exec(line);
  return m ? resetIn(m[1], now, zone) : undefined;
}

// The reset named in the rest of a message: "· resets X", "try again at X", "try again in X", "reset at X".
function resetIn(rest: string, now: Date, zone?: string): Date | null {
  const m = /(?:\bresets\s+|\btry again (?=in\b)|\btry again at\s+|\breset at\s+)(.+)$/i.exec(rest);
  if (!m) return null;
  const phrase = m[1].split(SEPARATOR)[0].replace(/\s*\(https?:[^)]*\)/g, '');
  return parseResetTime(phrase, now, zone);
}

function jsonError(line: string, now: Date): Date | null | undefined {
  if (!/^(?:\d{3}\s+)?[[{]/.test(line)) return undefined;
  const limited =
    /"type"\s*:\s*"(?:rate_limit_error|usage_limit_reached)"/.test(line) ||
    /"status"\s*:\s*"RESOURCE_EXHAUSTED"/.test(line);
  if (!limited) return undefined;
  const at = /"resets_at"\s*:\s*(\d{10,13})/.exec(line);
  if (at) return epochToDate(at[1]).getTime() > now.getTime() ? epochToDate(at[1]) : null;
  const inSeconds = /"resets_in_seconds"\s*:\s*(\d+)/.exec(line);
  return inSeconds ? new Date(now.getTime() + Number(inSeconds[1]) * 1000) : null;
}

// Claude Code --output-format stream-json: the limit as data. "rejected" while extra usage is allowed is not a stop.
function streamJsonEvent(line: string, now: Date): Date | null | undefined {
  if (!/^\{\s*"type"\s*:\s*"rate_limit_event"/.test(line)) return undefined;
  // The same reading the Claude Code adapter makes of the event (agents/claude.ts), so the two never disagree.
  const hit = parseClaudeLine(line).find((e) => e.rateLimit)?.rateLimit;
  if (!hit) return undefined;
  return hit.resetAt && hit.resetAt.getTime() > now.getTime() ? hit.resetAt : null;
}

function http429(line: string): null | undefined {
  const shapes = [
    /^Request rejected \(429\)/i,
    /^Server is temporarily limiting requests\b/i,
    /^(?:stream error:\s*)?exceeded retry limit, last status: 429\b/i,
    /^429\s+(?:Too Many Requests|\{)/i,
  ];
  return shapes.some((re) => re.test(line)) ? null : undefined;
}

/**
 * Why a failed agent run is worth repeating (at most 3 times, loop.ts), or null. The one place that decides it:
 * the agent said its API returned nothing or was overloaded (529), its final message is an API error and it
 * exited non-zero, or it exited non-zero without a final message. Phrases count only as the start of a line, so
 * a summary that mentions "No messages returned" in a sentence is not a failure. Timeouts and kills are real failures.
 */
export function transientReason(result: AgentResult): string | null {
  if (result.timedOut || result.signal) return null;
  const lines = stripAnsi(`${result.finalMessage}\n${result.stderr}`)
    .split(/\r?\n/)
    .map((l) => l.replace(PREFIX, '').trim());
  if (lines.some((l) => /^No messages returned\b/i.test(l))) return 'the agent reported "No messages returned"';
  if (lines.some((l) => /^(?:529\b|\{.*"type"\s*:\s*"overloaded_error")/.test(l)))
    return 'the API was overloaded (529)';
  if (result.exitCode === 0) return null;
  const final = result.finalMessage.trim();
  if (/^API Error\b/.test(final)) return `the agent's API call failed: ${final.split('\n')[0].slice(0, 120)}`;
  if (final) return null;
  // No exit code and no signal: the program never started (spawn failed); its error is on stderr.
  if (result.exitCode === null) return 'the agent could not be started';
  return result.stderr.trim()
    ? `the agent exited ${result.exitCode} without a final message`
    : `the agent exited ${result.exitCode} with no output`;
}
