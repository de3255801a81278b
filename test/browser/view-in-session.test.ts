// The dashboard's loop list with in-session loops (/ralph-loop) started by the real engine command Claude Code runs:
// the agent named for what it is, each iteration a stop, no cost figure nobody measured, and a session that is gone
// said so, with the way to start again.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { run } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { TWO_STORY_PLAN } from '../support/model-loop.js';
import { launchChromium, openDashboard } from '../support/browser.js';

const LIVE = '49b42a3f-ea60-4259-acfe-8858545d9d7a';
const GONE = '7c1d2e3f-0000-4a4a-8b8b-123456789abc';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

function engine(repo: string, args: string[], env: NodeJS.ProcessEnv, input = '') {
  return run(process.execPath, [path.join(repo, 'ralph/ralph.mjs'), ...args], { cwd: repo, env, input });
}

const open = (repo: string): Promise<Page> => openDashboard(browser, repo);

describe('ralphkit view with in-session loops', () => {
  it('names the agent "in-session (Claude Code)", counts stops, shows cost n/a, and says when the session is gone', async () => {
    const repo = installedRepo({ plan: TWO_STORY_PLAN });
    // A session whose Claude Code has exited (its pid is gone), then a live one (this process stands in for Claude Code).
    const gone = spawnSync('true').pid as number;
    expect((await engine(repo, ['hook', 'start', '--session-id', GONE], { CLAUDE_PID: String(gone) })).code).toBe(0);
    expect(
      (
        await engine(repo, ['hook', 'start', '--session-id', LIVE, '--max-iterations', '4'], {
          CLAUDE_PID: String(process.pid),
        })
      ).code,
    ).toBe(0);
    const input = JSON.stringify({
      session_id: LIVE,
      hook_event_name: 'Stop',
      stop_hook_active: false,
      last_assistant_message: 'working',
    });
    expect(JSON.parse((await engine(repo, ['hook', 'stop'], {}, input)).stdout).decision).toBe('block');

    const page = await open(repo);
    const live = page.locator(`.loop[data-loop-id="${LIVE}"]`);
    await live.waitFor();
    expect(await live.getAttribute('data-alive')).toBe('true');
    expect(await live.locator('.loop-status').textContent()).toBe('running');
    expect(await live.locator('.loop-agent').textContent()).toBe('in-session (Claude Code)');
    expect(await live.locator('.loop-iter').textContent()).toBe('stop 1 of 4');
    expect(await live.locator('.loop-facts .cost').textContent()).toBe('cost n/a');
    expect(await live.locator('.loop-facts').textContent()).not.toContain('$');

    const dead = page.locator(`.loop[data-loop-id="${GONE}"]`);
    expect(await dead.getAttribute('data-status')).toBe('dead');
    expect(await dead.locator('.loop-status').textContent()).toBe('dead · session gone');
    expect(await dead.locator('.loop-message').textContent()).toBe(
      'its Claude Code session is gone; start a new loop there with /ralph-loop',
    );
    expect(await dead.locator('.loop-facts .cost').textContent()).toBe('cost n/a');
  });
});
