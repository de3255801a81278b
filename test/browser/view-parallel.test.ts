// The dashboard with a --parallel run, in headless Chromium, from hand-written state.json files: the run's card lists
// each worker (story, phase, iteration, agent, time on its story), the merge queue in order, the stories merged and
// those given up, follows the run as its state changes, and shows state.json's strings as text only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { testdir } from '../support/repo.js';
import { launchChromium, openDashboard } from '../support/browser.js';
import { plan, writeLoop, writePlan } from '../support/view-fixtures.js';
import type { ParallelState } from '../../src/engine/store/state-types.js';

const PATIENCE = 15_000;
const XSS = '<img src=x onerror="window.__pwned=1">';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const open = (repo: string): Promise<Page> => openDashboard(browser, repo);

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

function parallel(extra: Partial<ParallelState> = {}): ParallelState {
  return {
    workers: 3,
    states: [
      // This test process stands in for worker 1's agent, so its pid is one that runs.
      {
        worker: 1,
        path: '/r.ralph-worktrees/p--w1',
        phase: 'agent',
        story: 'US-003',
        branch: 'ralph/fixture--US-003',
        iteration: 7,
        startedAt: ago(2),
        agentPid: process.pid,
      },
      {
        worker: 2,
        path: '/r.ralph-worktrees/p--w2',
        phase: 'queued',
        story: 'US-002',
        branch: 'ralph/fixture--US-002',
        iteration: 6,
        startedAt: ago(5),
      },
      { worker: 3, path: '/r.ralph-worktrees/p--w3', phase: 'idle', iteration: 5 },
    ],
    queue: [
      { story: 'US-002', head: 'a'.repeat(40), worker: 2 },
      { story: 'US-004', head: 'b'.repeat(40), worker: 3 },
    ],
    merged: ['US-001'],
    attempts: { 'US-006': 3 },
    givenUp: { 'US-006': `no progress after 3 attempts ${XSS}` },
    ...extra,
  };
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).allTextContents()).map((t) => t.trim());

describe('ralphkit view with a --parallel run', () => {
  it('lists each worker, the merge queue, merged and given-up stories, and follows the run', async () => {
    const repo = testdir();
    writePlan(repo, plan(6));
    writeLoop(repo, {
      id: 'p',
      agent: 'claude',
      iteration: 7,
      maxIterations: 20,
      startedAt: ago(10),
      parallel: parallel(),
    });
    writeLoop(repo, { id: 'single', status: 'complete', pid: null, exitCode: 0, startedAt: ago(60) });
    const page = await open(repo);
    const run = '.loop[data-loop-id="p"]';
    await page.locator(`${run} .worker`).first().waitFor({ timeout: PATIENCE });

    expect(
      await page
        .locator(`${run} .worker`)
        .evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.worker, (e as HTMLElement).dataset.phase])),
    ).toEqual([
      ['1', 'agent'],
      ['2', 'queued'],
      ['3', 'idle'],
    ]);
    expect(await text(page, `${run} .worker-n`)).toEqual(['w1', 'w2', 'w3']);
    expect(await text(page, `${run} .worker-story`)).toEqual(['US-003', 'US-002', '—']);
    expect(await text(page, `${run} .worker-phase`)).toEqual(['agent working', 'in merge queue', 'idle']);
    expect(await text(page, `${run} .worker-iter`)).toEqual(['iteration 7', 'iteration 6', 'iteration 5']);
    // Only worker 1's agent runs now.
    expect(
      await page
        .locator(`${run} .worker`)
        .evaluateAll((els) => els.map((e) => e.querySelector('.worker-agent')?.textContent ?? null)),
    ).toEqual([`claude (pid ${process.pid})`, null, null]);
    // The time on its story, ticking like the loop's own; an idle worker has none.
    await expect
      .poll(() => text(page, `${run} .worker .elapsed`), { timeout: PATIENCE })
      .toEqual([expect.stringMatching(/^2m \d\ds elapsed$/), expect.stringMatching(/^5m \d\ds elapsed$/)]);
    expect(await page.locator(`${run} .worker-story`).first().getAttribute('title')).toBe('ralph/fixture--US-003');

    expect(await text(page, `${run} .merge-queue li`)).toEqual(['US-002 w2', 'US-004 w3']);
    expect(await text(page, `${run} .merged code`)).toEqual(['US-001']);
    expect(await text(page, `${run} .given-up li`)).toEqual([`US-006 no progress after 3 attempts ${XSS}`]);
    expect(await page.locator(`${run} .given-up img`).count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // A loop that is no --parallel run has no such panel.
    expect(await page.locator('.loop[data-loop-id="single"] .loop-workers').count()).toBe(0);

    // US-002 is merged: worker 2 goes idle, the queue moves up, the merged list grows.
    const next = parallel();
    next.states[1] = { worker: 2, path: '/r.ralph-worktrees/p--w2', phase: 'idle', iteration: 6 };
    writeLoop(repo, {
      id: 'p',
      agent: 'claude',
      iteration: 8,
      maxIterations: 20,
      startedAt: ago(10),
      parallel: { ...next, queue: next.queue.slice(1), merged: ['US-001', 'US-002'] },
    });
    await expect.poll(() => text(page, `${run} .merged code`), { timeout: PATIENCE }).toEqual(['US-001', 'US-002']);
    expect(await text(page, `${run} .merge-queue li`)).toEqual(['US-004 w3']);
    expect(await text(page, `${run} .worker-phase`)).toEqual(['agent working', 'idle', 'idle']);
  });

  it("a run whose runner is gone shows no agent as running, and its workers' times stop at its last update", async () => {
    const repo = testdir();
    writePlan(repo, plan(6));
    // The workers' start times are taken before the run's last update, never after: the other order makes a worker's
    // 1 minute read 59 s when a millisecond passes between the two (seen on a loaded CI machine).
    const workers = parallel();
    writeLoop(repo, {
      id: 'p',
      status: 'interrupted',
      pid: null,
      exitCode: 130,
      startedAt: ago(10),
      updatedAt: ago(1),
      parallel: workers,
    });
    const page = await open(repo);
    const run = '.loop[data-loop-id="p"]';
    await page.locator(`${run} .worker`).first().waitFor({ timeout: PATIENCE });
    expect(await page.locator(`${run} .worker-agent`).count()).toBe(0);
    await expect
      .poll(() => text(page, `${run} .worker .elapsed`), { timeout: PATIENCE })
      .toEqual([expect.stringMatching(/^ran 1m \d\ds$/), expect.stringMatching(/^ran 4m \d\ds$/)]);
  });
});
