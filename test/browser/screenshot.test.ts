// Renders a realistic repository state and checks the page shows it; with RALPHKIT_SCREENSHOT=1 it
// also regenerates docs/dashboard.png (the picture in README.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { ROOT, testdir } from '../support/repo.js';
import { launchChromium } from '../support/browser.js';
import { writeDemoRepo } from '../support/view-demo.js';
import { startViewServer } from '../../src/view/server.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('dashboard with a realistic plan', () => {
  it('shows every state, the running loop and the pinned patterns, and can be photographed', async () => {
    const repo = testdir('ralphkit-view-demo-');
    writeDemoRepo(repo, process.pid);
    const server = await startViewServer({ cwd: repo, port: 0 });
    try {
      const page = await browser.newPage({
        viewport: { width: 1280, height: 800 },
        deviceScaleFactor: 2,
        colorScheme: 'light',
        reducedMotion: 'reduce',
      });
      await page.goto(server.url);
      await page.locator('.card').nth(7).waitFor();
      await page.locator('.loop.tone-running').waitFor();
      const states = await page
        .locator('.card')
        .evaluateAll((cards) =>
          Object.fromEntries(cards.map((c) => [(c as HTMLElement).dataset.storyId, (c as HTMLElement).dataset.state])),
        );
      // The loop is still running: what its ledger says verified is reported, and verified only once its record is sealed.
      expect(states).toEqual({
        'US-001': 'passed',
        'US-002': 'passed',
        'US-003': 'passed',
        'US-004': 'rejected',
        'US-005': 'open',
        'US-006': 'open',
        'US-007': 'open',
        'US-008': 'open',
      });
      expect(
        await page
          .locator('.card[data-verification="reported"]')
          .evaluateAll((cards) => cards.map((c) => (c as HTMLElement).dataset.storyId)),
      ).toEqual(['US-001', 'US-002']);
      expect(await page.locator('.card.next').getAttribute('data-story-id')).toBe('US-004');
      expect(await page.locator('#passed-count').textContent()).toBe('3');
      expect(await page.locator('.log-section').first().textContent()).toContain('Codebase Patterns');
      // Edges are drawn in the animation frame after the cards are laid out, not with them.
      await expect.poll(() => page.locator('.edges path.edge').count(), { timeout: 15_000 }).toBe(7);
      await page.waitForTimeout(400); // let the entrance animations finish before the picture
      if (process.env.RALPHKIT_SCREENSHOT === '1')
        await page.screenshot({ path: path.join(ROOT, 'docs/dashboard.png') });
      if (process.env.RALPHKIT_SCREENSHOT_DIR) await saveReviewShots(page, process.env.RALPHKIT_SCREENSHOT_DIR);
      await page.close();
    } finally {
      await server.close();
    }
  });
});

// Extra pictures for reviewing the design (narrow windows, the detail panel, the dark theme); not committed.
async function saveReviewShots(page: import('playwright-core').Page, dir: string): Promise<void> {
  await page.screenshot({ path: path.join(dir, 'main.png') });
  await page.setViewportSize({ width: 1280, height: 1500 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'tall.png') });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'narrow.png') });
  await page.setViewportSize({ width: 800, height: 800 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'split.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator('.card[data-story-id="US-004"]').click();
  await page.locator('#detail:not([hidden])').waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'detail.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, 'dark.png') });
}
