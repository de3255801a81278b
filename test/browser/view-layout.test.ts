// The board scrolls only when the cards do not fit, and only downwards. Playwright hides scrollbars in
// headless mode by default; here they are shown, as on a desktop with classic scrollbars, so a bar that
// takes room and forces the other one (the bug: both bars under three cards at 1280×800) shows up in the numbers.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { testdir } from '../support/repo.js';
import { launchChromium } from '../support/browser.js';
import { plan, writePlan } from '../support/view-fixtures.js';
import { startViewServer } from '../../src/view/server.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium({ scrollbars: true });
});
afterAll(async () => {
  await browser?.close();
});

/** expect.poll waits 1 s by default; a shared, loaded CI machine can take longer to lay out and redraw. */
const PATIENCE = 15_000;

/** How far the board's content reaches past its visible box, in pixels (0 and 0: no scrollbars). */
function overflow(page: Page): Promise<{ x: number; y: number }> {
  return page
    .locator('#board')
    .evaluate((b) => ({ x: b.scrollWidth - b.clientWidth, y: b.scrollHeight - b.clientHeight }));
}

async function openChain(stories: number): Promise<Page> {
  const repo = testdir('ralphkit-view-layout-');
  // One chain: US-001 ← US-002 ← US-003, one card per column, as a plan of three dependent steps.
  const prd = plan(stories);
  prd.userStories.forEach((s, i) => (s.dependsOn = i ? [prd.userStories[i - 1].id] : []));
  writePlan(repo, prd);
  const server = await startViewServer({ cwd: repo, port: 0 });
  onTestFinished(() => server.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
  onTestFinished(() => page.close());
  await page.goto(server.url);
  await page
    .locator('.card')
    .nth(stories - 1)
    .waitFor();
  await expect.poll(() => page.locator('#edges path.edge').count(), { timeout: PATIENCE }).toBe(stories - 1);
  return page;
}

describe('dashboard layout', () => {
  it('three cards at 1280×800: no scrollbar on the board, and none on the page', async () => {
    const page = await openChain(3);
    await page.waitForTimeout(200); // a redraw after the first one is where the old layout grew
    expect(await overflow(page)).toEqual({ x: 0, y: 0 });
    expect(
      await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]),
    ).toEqual([1280, 800]);
  });

  it('scrollbars that a small window needed go away when the window grows again', async () => {
    const page = await openChain(3);
    // A short window: the cards need a vertical scrollbar, whose width must not force a horizontal one.
    await page.setViewportSize({ width: 1280, height: 240 });
    await expect.poll(() => overflow(page).then((o) => o.y > 0), { timeout: PATIENCE }).toBe(true);
    expect((await overflow(page)).x).toBe(0);
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(() => overflow(page), { timeout: PATIENCE }).toEqual({ x: 0, y: 0 });
  });

  it('a narrow window scrolls the page downwards, never the board or the page sideways', async () => {
    const page = await openChain(3);
    await page.setViewportSize({ width: 900, height: 240 });
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight > document.documentElement.clientHeight), {
        timeout: PATIENCE,
      })
      .toBe(true);
    // The board is laid out again after the resize (a frame or more later on a loaded machine): wait for it.
    await expect.poll(() => overflow(page), { timeout: PATIENCE }).toEqual({ x: 0, y: 0 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    expect(await page.locator('#edges path.edge').count()).toBe(2); // three columns still fit side by side
  });
});
