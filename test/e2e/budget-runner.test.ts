// SPEC §7 through the real runner: the installed ./ralph/ralph.sh in temp git repos, the usage endpoint faked on
// 127.0.0.1 (RALPH_USAGE_URL) with a known token (RALPH_USAGE_TOKEN), fake agents from test/fixtures/budget/.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, testdir, type RunResult } from '../support/repo.js';
import { jsonEvents, loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { startUsageServer, unreachableUsageUrl, usageBody } from '../support/usage-server.js';

const TOKEN = 'sk-ant-oat01-E2E-NEVER-PRINT-4c1d0b';
const FAST = ['--pause', '0'];
const fixture = (name: string) => path.join(FIXTURES, 'budget', `${name}.mjs`);

function env(url: string, log: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { RALPH_USAGE_URL: url, RALPH_USAGE_TOKEN: TOKEN, BUDGET_AGENT_LOG: log, RALPH_RETRY_MS: '10', ...extra };
}

function agentRuns(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
}

/** Everything the runner printed or wrote: stdout, stderr, and every file under ralph/.runs and ralph/. */
function everything(dir: string, r: RunResult): string {
  const texts = [r.stdout, r.stderr];
  const walk = (p: string) => {
    for (const name of readdirSync(p)) {
      const file = path.join(p, name);
      if (statSync(file).isDirectory()) walk(file);
      else texts.push(readFileSync(file, 'utf8'));
    }
  };
  walk(path.join(dir, 'ralph'));
  return texts.join('\n');
}

describe('--max-usage through ralph.sh', () => {
  it('over the ceiling at start: exit 2 before any agent run; the token appears nowhere', async () => {
    const dir = loopRepo();
    const log = path.join(testdir(), 'agent.log');
    const server = await startUsageServer([{ body: usageBody(93, 20) }]);
    const r = await ralph(
      dir,
      ['--agent-cmd', fixture('idle'), ...FAST, '--max-usage', '80', '3'],
      env(server.url, log),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(agentRuns(log)).toEqual([]);
    expect(r.stderr).toMatch(/Claude usage at or over the 80% ceiling: 5-hour 93%/);
    expect(r.stderr).toMatch(/--wait/);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(everything(dir, r)).not.toContain(TOKEN);
  });

  it('crossing the ceiling mid-run: exit 5 after the first iteration; --json events carry no token', async () => {
    const dir = loopRepo();
    const log = path.join(testdir(), 'agent.log');
    const server = await startUsageServer([{ body: usageBody(40, 20) }, { body: usageBody(81, 20) }]);
    const r = await ralph(
      dir,
      ['--agent-cmd', fixture('idle'), ...FAST, '--max-usage', '80', '--json', '3'],
      env(server.url, log),
    );
    expect(r.code, r.stderr).toBe(5);
    expect(agentRuns(log)).toEqual(['iteration 1']);
    expect(onlyState(dir)).toMatchObject({ status: 'budget', exitCode: 5, iteration: 1 });
    const events = jsonEvents(r.stdout);
    expect(events.some((e) => e.type === 'warn' && /5-hour 81%/.test(String(e.message)))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'exit', code: 5 });
    expect(everything(dir, r)).not.toContain(TOKEN);
  });

  it('usage that cannot be read: exit 2 without running the agent; with --allow-unknown-usage the loop runs', async () => {
    const dir = loopRepo();
    const log = path.join(testdir(), 'agent.log');
    const url = await unreachableUsageUrl();
    const refused = await ralph(
      dir,
      ['--agent-cmd', fixture('idle'), ...FAST, '--max-usage', '80', '1'],
      env(url, log),
    );
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/cannot read Claude usage/);
    expect(refused.stderr).toMatch(/--allow-unknown-usage/);
    expect(agentRuns(log)).toEqual([]);

    const allowed = await ralph(
      dir,
      ['--agent-cmd', fixture('idle'), ...FAST, '--max-usage', '80', '--allow-unknown-usage', '1'],
      env(url, log),
    );
    expect(allowed.code, allowed.stderr).toBe(1);
    expect(agentRuns(log)).toEqual(['iteration 1']);
    expect(everything(dir, allowed)).not.toContain(TOKEN);
  });

  it('--dry-run shows usage now and exits 0 without the token', async () => {
    const dir = loopRepo();
    const log = path.join(testdir(), 'agent.log');
    const server = await startUsageServer([{ body: usageBody(42, 7) }]);
    const r = await ralph(
      dir,
      ['--agent-cmd', fixture('idle'), '--max-usage', '80', '--dry-run'],
      env(server.url, log),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/5-hour 42%.*7-day 7%/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN);
    expect(agentRuns(log)).toEqual([]);
  });
});

describe('rate-limit messages from the agent', () => {
  it.each([
    ['claude-epoch', /Claude AI usage limit reached\|\d+/],
    ['codex-json', /usage_limit_reached/],
    ['api-429', /rate_limit_error/],
  ])('%s: the loop waits, repeats the iteration, and does not spend it', async (style, shown) => {
    const dir = loopRepo({ stories: 1 });
    const log = path.join(testdir(), 'agent.log');
    // One iteration allowed: if the limited run counted, the loop would end at max iterations (exit 1).
    const r = await ralph(
      dir,
      ['--agent-cmd', fixture('limit-once'), ...FAST, '--json', '1'],
      env('http://127.0.0.1:9/unused', log, { BUDGET_LIMIT_STYLE: style }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(agentRuns(log)).toEqual(['iteration 1', 'iteration 1']);
    const events = jsonEvents(r.stdout);
    const limit = events.find((e) => e.type === 'rate-limit');
    expect(limit).toMatchObject({ iteration: 1 });
    expect(String(limit!.message)).toMatch(shown);
    if (style !== 'api-429') expect(limit!.resetAt).not.toBeNull();
    expect(events.filter((e) => e.type === 'iteration-start').map((e) => e.iteration)).toEqual([1]);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', iteration: 1, exitCode: 0 });
  });
});
