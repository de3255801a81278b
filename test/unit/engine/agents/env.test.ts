import { describe, expect, it } from 'vitest';
import { planAgentEnv } from '../../../../src/engine/agents/env.js';

describe('planAgentEnv', () => {
  it.each<[string, 'kept' | 'removed']>([
    ['GH_TOKEN', 'removed'],
    ['GITHUB_TOKEN', 'removed'],
    ['GH_ENTERPRISE_TOKEN', 'removed'],
    ['GITHUB_ENTERPRISE_TOKEN', 'removed'],
    ['RALPH_USAGE_TOKEN', 'removed'],
    ['RALPH_WEBHOOK_URL', 'removed'],
    ['RALPH_DELIVER_TOKEN', 'removed'],
    ['RALPH_SLACK_WEBHOOK', 'removed'],
    ['RALPH_NOTIFY_SECRET_FILE', 'removed'],
    // Windows matches variable names in any case, so a mixed-case copy is the same secret there.
    ['Gh_Token', 'removed'],
    ['github_token', 'removed'],
    // The agent's own credentials: it cannot work without them.
    ['ANTHROPIC_API_KEY', 'kept'],
    ['OPENAI_API_KEY', 'kept'],
    ['CLAUDE_CODE_OAUTH_TOKEN', 'kept'],
    ['GEMINI_API_KEY', 'kept'],
    ['PATH', 'kept'],
    ['HOME', 'kept'],
    ['RALPH_USAGE_URL', 'kept'],
    ['RALPH_RETRY_MS', 'kept'],
    // Only the runner's prefix is matched by pattern; a name that merely contains TOKEN elsewhere is the user's.
    ['NPM_TOKEN_FOR_TESTS', 'kept'],
    ['MY_RALPH_TOKEN', 'kept'],
  ])('%s is %s', (name, fate) => {
    const { env, removed } = planAgentEnv({ [name]: 'value-of-' + name, PATH: '/usr/bin' }, {});
    expect(name in env).toBe(fate === 'kept');
    expect(removed).toEqual(fate === 'removed' ? [name] : []);
  });

  it('adds the extra variables, RALPH_RUNNER=1 and a marker that is also the returned token', () => {
    const { env, token } = planAgentEnv(
      { PATH: '/usr/bin', RALPH_RUNNER: '0' },
      { RALPH_ITERATION: '3', RALPH_PRD: '/r/prd.json' },
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      RALPH_RUNNER: '1',
      RALPH_ITERATION: '3',
      RALPH_PRD: '/r/prd.json',
      RALPH_AGENT_MARK: token,
    });
    expect(token).toMatch(/^[0-9a-f]{32}$/);
  });

  it('gives every call a new token, replacing a marker inherited from an outer loop', () => {
    const tokens = new Set(Array.from({ length: 20 }, () => planAgentEnv({}, {}).token));
    expect(tokens.size).toBe(20);
    const outer = planAgentEnv({}, {});
    const inner = planAgentEnv(outer.env, {});
    expect(inner.env.RALPH_AGENT_MARK).toBe(inner.token);
    expect(inner.token).not.toBe(outer.token);
  });

  it('lists removed names sorted and never their values; leaves base untouched', () => {
    const base = { GITHUB_TOKEN: 'ghp_secret1', RALPH_USAGE_TOKEN: 'secret2', GH_TOKEN: 'secret3', TERM: 'xterm' };
    const { env, removed } = planAgentEnv(base, {});
    expect(removed).toEqual(['GH_TOKEN', 'GITHUB_TOKEN', 'RALPH_USAGE_TOKEN']);
    expect(JSON.stringify(removed)).not.toMatch(/secret/);
    expect(JSON.stringify(env)).not.toMatch(/secret/);
    expect(base).toEqual({
      GITHUB_TOKEN: 'ghp_secret1',
      RALPH_USAGE_TOKEN: 'secret2',
      GH_TOKEN: 'secret3',
      TERM: 'xterm',
    });
  });
});
