import { describe, expect, it } from 'vitest';
import { detectRateLimit, transientReason } from '../../../../src/engine/budget/ratelimit.js';
import type { AgentResult } from '../../../../src/engine/types.js';

// Sunday 2026-11-29 18:00 UTC = 19:00 in Paris = 10:00 in Los Angeles.
const NOW = new Date('2026-11-29T18:00:00Z');
const detect = (text: string) => detectRateLimit(text, NOW, { timeZone: 'UTC' });

const rateLimitEvent = (info: object) =>
  JSON.stringify({ type: 'rate_limit_event', rate_limit_info: info, uuid: 'u', session_id: 's' });

describe('detectRateLimit: messages agents print when a limit is hit', () => {
  it.each([
    // Claude Code (the first two captured from the real CLI 2.1.332 in print mode against a fake API answering 429)
    ["You've hit your 5-hour limit · resets 1:10am (UTC)", '2026-11-30T01:10:00.000Z'],
    [
      "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
      null,
    ],
    ['Claude AI usage limit reached|1795982400', '2026-11-29T20:00:00.000Z'],
    ['Claude AI usage limit reached|1795994100000', '2026-11-29T23:15:00.000Z'],
    ['Claude AI usage limit reached|1795867200', null],
    ['Claude usage limit reached. Your limit will reset at 8pm (Europe/Paris).', '2026-11-29T19:00:00.000Z'],
    ['Claude usage limit reached.', null],
    ['5-hour limit reached ∙ resets 9pm', '2026-11-29T21:00:00.000Z'],
    ['Opus weekly limit reached ∙ resets Dec 3, 10am', '2026-12-03T10:00:00.000Z'],
    ["You've hit your session limit · resets 12:50am (America/Los_Angeles)", '2026-11-30T08:50:00.000Z'],
    ["You've hit your limit · resets 3am (Europe/Paris)", '2026-11-30T02:00:00.000Z'],
    [
      "You've hit your weekly limit · resets Dec 3, 7pm (Europe/Paris) · /upgrade to increase your usage limit.",
      '2026-12-03T18:00:00.000Z',
    ],
    ["You've hit your org's monthly usage limit · resets Dec 1, 12am", '2026-12-01T00:00:00.000Z'],
    ['You’ve hit your session limit', null],
    ["  ⎿  You've hit your limit · resets 11pm", '2026-11-29T23:00:00.000Z'],
    ["\u001b[31mError: You've hit your limit · resets 11pm\u001b[0m", '2026-11-29T23:00:00.000Z'],
    ["You're out of extra usage · resets 9:15pm", '2026-11-29T21:15:00.000Z'],
    [
      'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."}}',
      null,
    ],
    ['Request rejected (429) · this may be a temporary capacity issue.', null],
    ['Server is temporarily limiting requests (not your usage limit) · Rate limited', null],
    [
      rateLimitEvent({ status: 'rejected', resetsAt: 1795982400, rateLimitType: 'five_hour' }),
      '2026-11-29T20:00:00.000Z',
    ],
    [rateLimitEvent({ status: 'rejected', rateLimitType: 'seven_day' }), null],
    // Codex
    [
      "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11 minutes.",
      '2026-12-05T16:11:00.000Z',
    ],
    [
      "ERROR: You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Jul 5th, 2027 8:19 PM.",
      '2027-07-05T20:19:00.000Z',
    ],
    ["[2026-11-29T18:00:00] ERROR: You've hit your usage limit. Try again at 8:19 PM.", '2026-11-29T20:19:00.000Z'],
    [
      "You've hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again later.",
      null,
    ],
    [
      '{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":1795982400,"resets_in_seconds":7200}}',
      '2026-11-29T20:00:00.000Z',
    ],
    ['{"type":"error","error":{"type":"usage_limit_reached","resets_in_seconds":600}}', '2026-11-29T18:10:00.000Z'],
    ['stream error: exceeded retry limit, last status: 429 Too Many Requests', null],
    // Gemini CLI
    [
      '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]',
      null,
    ],
  ])('%s → reset %s', (text, resetAt) => {
    const hit = detect(text);
    expect(hit).not.toBeNull();
    expect(hit!.resetAt?.toISOString() ?? null).toBe(resetAt);
  });

  it('reports the matching line, the last one when several match', () => {
    const text = [
      'Working on US-002…',
      "You've hit your limit · resets 9pm",
      'some noise',
      "You've hit your limit · resets 11pm",
      '',
    ].join('\n');
    expect(detect(text)).toEqual({
      resetAt: new Date('2026-11-29T23:00:00Z'),
      message: "You've hit your limit · resets 11pm",
    });
  });
});

describe('detectRateLimit: prose and code that only mention limits', () => {
  it.each([
    ['Implemented rate limit handling: the API now returns 429 when the rate limit is reached.'],
    ['US-003: show "You\'ve hit your limit" banner when the quota is exhausted'],
    ["The story says: You've hit your limit · resets 3am"],
    ['When the 5-hour limit is reached the UI shows a countdown.'],
    ["You've used 90% of your session limit · resets 7pm"],
    ['Approaching usage limit · resets 7pm'],
    ['Context limit reached · /compact or /clear to continue'],
    ["You've hit your org's monthly spend limit · raise it at claude.ai/settings/usage"],
    ["You've reached your workspace credit limit"],
    ['console.log("Claude AI usage limit reached|1795982400")'],
    ['  expect(detect("5-hour limit reached ∙ resets 9pm")).toBe(true)'],
    ['rate_limit_error is now mapped to a retry with back-off'],
    [`["You've hit your limit · resets 3am (Europe/Paris)", '2026-11-30T02:00:00.000Z'],`],
    ["[x] You've hit your limit · resets 3am"],
    ['HTTP 429 responses are retried three times'],
    ['Added `{"type":"rate_limit_error"}` fixtures for the client tests'],
    [rateLimitEvent({ status: 'allowed_warning', resetsAt: 1795982400, utilization: 0.9 })],
    [rateLimitEvent({ status: 'rejected', resetsAt: 1795982400, isUsingOverage: true, overageStatus: 'allowed' })],
    ['<promise>COMPLETE</promise>'],
    [''],
  ])('%j → no hit', (text) => {
    expect(detect(text)).toBeNull();
  });
});

function result(over: Partial<AgentResult>): AgentResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    stdout: 'out',
    stderr: '',
    finalMessage: 'done',
    durationMs: 10,
    ...over,
  };
}

// The one rule book for "repeat this run" (the loop has no rules of its own): every rule, both ways.
describe('transientReason', () => {
  it.each([
    [
      '"No messages returned" in the final message',
      result({ exitCode: 1, finalMessage: 'Error: No messages returned' }),
      /No messages returned/,
    ],
    [
      '"No messages returned" on stderr',
      result({ exitCode: 1, stderr: 'Error: No messages returned from query\n' }),
      /No messages returned/,
    ],
    [
      '"No messages returned" after a bullet and colour codes',
      result({ exitCode: 1, stderr: '\u001b[31m● No messages returned\u001b[0m' }),
      /No messages returned/,
    ],
    [
      'an API error 529 with its JSON',
      result({ exitCode: 1, finalMessage: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}' }),
      /overloaded \(529\)/,
    ],
    [
      'an overloaded_error event on stderr',
      result({ exitCode: 1, stderr: '{"type":"overloaded_error","message":"Overloaded"}' }),
      /overloaded \(529\)/,
    ],
    [
      'an API error with a failing exit',
      result({ exitCode: 1, finalMessage: 'API Error: Unable to connect to API (ConnectionRefused)' }),
      /API call failed: API Error: Unable to connect/,
    ],
    [
      'repeated 529s, said as an API error',
      result({ exitCode: 1, finalMessage: 'API Error: Repeated 529 Overloaded errors' }),
      /529/,
    ],
    [
      'non-zero exit and no output at all',
      result({ exitCode: 1, stdout: '', stderr: '', finalMessage: '' }),
      /exited 1 with no output/,
    ],
    [
      'non-zero exit without a final message',
      result({ exitCode: 3, stdout: '', stderr: 'connection reset', finalMessage: '' }),
      /exited 3 without a final message/,
    ],
    [
      'a program that could not be started',
      result({ exitCode: null, stdout: '', stderr: 'spawn claude ENOENT\n', finalMessage: '' }),
      /^the agent could not be started$/,
    ],
  ])('%s → retry', (_name, r, reason) => {
    expect(transientReason(r)).toMatch(reason);
  });

  it.each([
    ['a normal run', result({})],
    ['a silent agent that exits 0', result({ stdout: '', finalMessage: '' })],
    [
      'a failure that explains itself',
      result({ exitCode: 2, stdout: '', stderr: 'tsc: 3 errors', finalMessage: 'tests fail' }),
    ],
    [
      'an API error quoted by an agent that exited 0',
      result({ finalMessage: 'API Error: the fixture I added returns this on purpose' }),
    ],
    [
      'an API error that is not the start of the final message',
      result({ exitCode: 1, finalMessage: 'Saw "API Error: x" in the logs; tests fail' }),
    ],
    ['a timed-out run', result({ exitCode: null, timedOut: true, stdout: '', finalMessage: '' })],
    ['a killed run', result({ exitCode: null, signal: 'SIGKILL', stdout: '', finalMessage: '' })],
    [
      'a killed run that said "No messages returned"',
      result({ exitCode: null, signal: 'SIGKILL', stderr: 'No messages returned' }),
    ],
    [
      'prose about "No messages returned", failing exit',
      result({ exitCode: 1, finalMessage: 'Handled the case where the API says No messages returned.' }),
    ],
    ['prose about a 529', result({ exitCode: 1, finalMessage: 'Retry on HTTP 529 now works; tests fail' })],
  ])('%s → no retry', (_name, r) => {
    expect(transientReason(r)).toBeNull();
  });
});
