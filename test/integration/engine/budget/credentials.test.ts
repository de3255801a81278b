// Where the usage token comes from: RALPH_USAGE_TOKEN, the macOS Keychain item, or Claude Code's credentials file.
import { describe, expect, it } from 'vitest';
import { readUsage } from '../../../../src/engine/budget/usage.js';
import { resolveUsageToken } from '../../../../src/engine/budget/credentials.js';
import { testdir, writeFiles } from '../../../support/repo.js';
import { startUsageServer, usageBody } from '../../../support/usage-server.js';

const FILE_TOKEN = 'sk-ant-oat01-from-file-1b2c';
const KEYCHAIN_TOKEN = 'sk-ant-oat01-from-keychain-9d8e';
const credentials = (token: string) =>
  JSON.stringify({
    claudeAiOauth: {
      accessToken: token,
      refreshToken: 'sk-ant-ort01-r',
      expiresAt: 1795982400000,
      scopes: ['user:inference', 'user:profile'],
    },
  });

describe('usage token', () => {
  it('Linux: reads ~/.claude/.credentials.json and sends it as a Bearer token', async () => {
    const home = testdir();
    writeFiles(home, { '.claude/.credentials.json': credentials(FILE_TOKEN) });
    const server = await startUsageServer([{ body: usageBody(12, 34) }]);
    const reading = await readUsage({ env: { RALPH_USAGE_URL: server.url }, home, platform: 'linux' });
    expect(reading.fiveHour.utilization).toBe(12);
    expect(reading.sevenDay.utilization).toBe(34);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${FILE_TOKEN}`);
  });

  it('CLAUDE_CONFIG_DIR moves the credentials file', async () => {
    const dir = testdir();
    writeFiles(dir, { 'cfg/.credentials.json': credentials(FILE_TOKEN) });
    expect(
      await resolveUsageToken({ env: { CLAUDE_CONFIG_DIR: `${dir}/cfg` }, home: '/nonexistent', platform: 'linux' }),
    ).toBe(FILE_TOKEN);
  });

  it('macOS: asks the Keychain for "Claude Code-credentials" first', async () => {
    const asked: string[] = [];
    const token = await resolveUsageToken({
      env: {},
      home: '/nonexistent',
      platform: 'darwin',
      readKeychain: async (service) => {
        asked.push(service);
        return `${credentials(KEYCHAIN_TOKEN)}\n`;
      },
    });
    expect(token).toBe(KEYCHAIN_TOKEN);
    expect(asked).toEqual(['Claude Code-credentials']);
  });

  it('macOS without a Keychain item falls back to the file', async () => {
    const home = testdir();
    writeFiles(home, { '.claude/.credentials.json': credentials(FILE_TOKEN) });
    const token = await resolveUsageToken({
      env: {},
      home,
      platform: 'darwin',
      readKeychain: async () => Promise.reject(new Error('not found')),
    });
    expect(token).toBe(FILE_TOKEN);
  });

  it('RALPH_USAGE_TOKEN wins over everything', async () => {
    const home = testdir();
    writeFiles(home, { '.claude/.credentials.json': credentials(FILE_TOKEN) });
    expect(await resolveUsageToken({ env: { RALPH_USAGE_TOKEN: 'override-token' }, home, platform: 'linux' })).toBe(
      'override-token',
    );
  });

  it.each([
    ['no file', {}],
    ['a file without an OAuth login', { '.claude/.credentials.json': '{"apiKey":"x"}' }],
    ['a corrupt file', { '.claude/.credentials.json': '{"claudeAiOauth":' }],
  ])('%s: a clear error that says where it looked and what to do', async (_name, files) => {
    const home = testdir();
    writeFiles(home, files);
    const server = await startUsageServer([{ body: usageBody(1, 1) }]);
    const err = await readUsage({ env: { RALPH_USAGE_URL: server.url }, home, platform: 'linux' }).catch(
      (e: Error) => e,
    );
    expect((err as Error).message).toBe(
      `no Claude Code login found (looked in ${home}/.claude/.credentials.json); log in once with \`claude\`, or set RALPH_USAGE_TOKEN`,
    );
    expect(server.requests).toHaveLength(0);
  });
});
