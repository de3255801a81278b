import { describe, expect, it } from 'vitest';
import { parseUsageResponse, renderUsage } from '../../../../src/engine/budget/usage.js';
import { credentialsFile, keychainServices, parseCredentials } from '../../../../src/engine/budget/credentials.js';
import { planOverCeiling, planResetTime } from '../../../../src/engine/budget/gate.js';
import type { UsageReading } from '../../../../src/engine/budget/types.js';

const NOW = new Date('2026-11-29T18:00:00Z');

describe('parseUsageResponse', () => {
  it.each([
    [
      'the endpoint as observed',
      {
        five_hour: { utilization: 61.0, resets_at: '2026-11-29T19:59:59.571404+00:00' },
        seven_day: { utilization: 22.0, resets_at: '2026-12-03T09:59:59.571468+00:00' },
        seven_day_opus: null,
        extra_usage: { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null },
      },
      { fiveHour: [61, '2026-11-29T19:59:59.571Z'], sevenDay: [22, '2026-12-03T09:59:59.571Z'] },
    ],
    [
      'a window without usage yet',
      { five_hour: null, seven_day: { utilization: 5, resets_at: null } },
      { fiveHour: [0, null], sevenDay: [5, null] },
    ],
    [
      'only the 5-hour window',
      { five_hour: { utilization: 100, resets_at: '2026-11-29T20:00:00Z' } },
      { fiveHour: [100, '2026-11-29T20:00:00.000Z'], sevenDay: [0, null] },
    ],
  ])('%s', (_name, json, expected) => {
    const r = parseUsageResponse(json);
    expect({
      fiveHour: [r.fiveHour.utilization, r.fiveHour.resetsAt?.toISOString() ?? null],
      sevenDay: [r.sevenDay.utilization, r.sevenDay.resetsAt?.toISOString() ?? null],
    }).toEqual(expected);
  });

  it.each([
    ['not an object', [1, 2], /not a JSON object/],
    ['null', null, /not a JSON object/],
    ['an error body', { type: 'error', error: { type: 'authentication_error' } }, /neither five_hour nor seven_day/],
    [
      'utilization as text',
      { five_hour: { utilization: '61%', resets_at: null } },
      /five_hour.utilization is not a number/,
    ],
    ['a bad date', { seven_day: { utilization: 1, resets_at: 'tomorrow' } }, /seven_day.resets_at is not a date/],
    ['a window that is a number', { five_hour: 3 }, /five_hour is not an object/],
  ])('rejects %s', (_name, json, message) => {
    expect(() => parseUsageResponse(json)).toThrow(message);
  });
});

describe('renderUsage', () => {
  it('shows both windows with the time left', () => {
    const reading: UsageReading = {
      fiveHour: { utilization: 42.25, resetsAt: new Date('2026-11-29T20:10:00Z') },
      sevenDay: { utilization: 13, resetsAt: null },
    };
    expect(renderUsage(reading, NOW)).toBe('5-hour 42.3% (resets in 2h10m), 7-day 13%');
  });
});

describe('parseCredentials', () => {
  it.each([
    [
      'the Claude Code file',
      '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-abc","refreshToken":"r","expiresAt":1795982400000,"scopes":["user:inference","user:profile"]}}',
      { accessToken: 'sk-ant-oat01-abc', expiresAt: 1795982400000 },
    ],
    ['no expiry', '{"claudeAiOauth":{"accessToken":" tok "}}', { accessToken: 'tok', expiresAt: undefined }],
    [
      'with MCP tokens beside it',
      '{"mcpOAuth":{},"claudeAiOauth":{"accessToken":"t2"}}',
      { accessToken: 't2', expiresAt: undefined },
    ],
    ['not JSON', 'claudeAiOauth=1', null],
    ['no OAuth entry', '{"apiKey":"sk-ant-api03"}', null],
    ['an empty token', '{"claudeAiOauth":{"accessToken":""}}', null],
    ['a token that is not text', '{"claudeAiOauth":{"accessToken":42}}', null],
  ])('%s', (_name, text, expected) => {
    expect(parseCredentials(text)).toEqual(expected);
  });
});

describe('where the token is looked for', () => {
  it.each([
    [{}, '/home/u', '/home/u/.claude/.credentials.json'],
    [{ CLAUDE_CONFIG_DIR: '/cfg/claude-work' }, '/home/u', '/cfg/claude-work/.credentials.json'],
  ])('credentials file for %j', (env, home, expected) => {
    expect(credentialsFile(env, home)).toBe(expected);
  });

  it.each([
    [{}, ['Claude Code-credentials']],
    [
      { CLAUDE_CONFIG_DIR: '/Users/you/.claude-work' },
      [expect.stringMatching(/^Claude Code-credentials-[0-9a-f]{8}$/), 'Claude Code-credentials'],
    ],
  ])('keychain items for %j', (env, expected) => {
    expect(keychainServices(env)).toEqual(expected);
  });
});

describe('planOverCeiling / planResetTime', () => {
  const at = (iso: string | null) => (iso ? new Date(iso) : null);
  const reading = (five: number, fiveReset: string | null, seven: number, sevenReset: string | null): UsageReading => ({
    fiveHour: { utilization: five, resetsAt: at(fiveReset) },
    sevenDay: { utilization: seven, resetsAt: at(sevenReset) },
  });

  it.each([
    ['both under', reading(79.9, '2026-11-29T20:00:00Z', 10, '2026-12-03T00:00:00Z'), [], null],
    [
      '5-hour exactly at the ceiling',
      reading(80, '2026-11-29T20:00:00Z', 10, '2026-12-03T00:00:00Z'),
      ['5-hour'],
      '2026-11-29T20:00:00.000Z',
    ],
    [
      '7-day over',
      reading(10, '2026-11-29T20:00:00Z', 95, '2026-12-03T00:00:00Z'),
      ['7-day'],
      '2026-12-03T00:00:00.000Z',
    ],
    [
      'both over: the later reset',
      reading(90, '2026-11-29T20:00:00Z', 85, '2026-12-03T00:00:00Z'),
      ['5-hour', '7-day'],
      '2026-12-03T00:00:00.000Z',
    ],
    ['over without a reset time', reading(90, null, 10, null), ['5-hour'], null],
  ])('%s', (_name, r, names, resetAt) => {
    const over = planOverCeiling(r, 80);
    expect(over.map((o) => o.name)).toEqual(names);
    expect(planResetTime(over)?.toISOString() ?? null).toBe(resetAt);
  });
});
