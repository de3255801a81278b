// How fast a change on disk reaches the page. Reported, not asserted (machines are noisy); the
// assertions only check that every flip arrived, with fs.watch and with the polling fallback alone.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser } from 'playwright-core';
import { testdir } from '../support/repo.js';
import { launchChromium } from '../support/browser.js';
import { plan, writePlan } from '../support/view-fixtures.js';
import { measureFlipLatency } from '../support/view-latency.js';
import { startViewServer } from '../../src/view/server.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('latency from a write to prd.json to the card changing', () => {
  it.each([
    ['fs.watch + poll (default)', true],
    ['poll alone (500 ms)', false],
  ])('%s', async (name, fsWatch) => {
    const repo = testdir();
    const prd = plan(4);
    writePlan(repo, prd);
    const server = await startViewServer({ cwd: repo, port: 0, fsWatch });
    onTestFinished(() => server.close());
    const page = await browser.newPage();
    onTestFinished(() => page.close());
    await page.goto(server.url);
    await page.locator('.card[data-story-id="US-002"]').waitFor();
    const result = await measureFlipLatency(page, repo, prd, 'US-002', 10);
    process.stderr.write(
      `view latency, ${name}: median ${result.median} ms, min ${result.min} ms, max ${result.max} ms over ${result.samples.length} flips\n`,
    );
    expect(result.samples).toHaveLength(10);
    expect(result.samples.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true);
  });
});
