// Headless Debian Chromium for the dashboard tests, driven by playwright-core (no bundled browser).
import { expect, onTestFinished } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startViewServer } from '../../src/view/server.js';

/** RALPHKIT_CHROMIUM points elsewhere when Chromium is not at Debian's path. */
export const CHROMIUM = process.env.RALPHKIT_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface LaunchOptions {
  /**
   * Show classic scrollbars that take room, as on most desktops. Playwright hides them by default,
   * which hides the bugs where one scrollbar's width forces another.
   */
  scrollbars?: boolean;
}

export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ARGS,
    ignoreDefaultArgs: options.scrollbars ? ['--hide-scrollbars'] : undefined,
  });
}

/**
 * The dashboard of `repo` served on a free port and opened in a new 1280×800 page; both closed when the test ends,
 * which also fails the test if the page threw.
 */
export async function openDashboard(browser: Browser, repo: string): Promise<Page> {
  const server = await startViewServer({ cwd: repo, port: 0 });
  onTestFinished(() => server.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  onTestFinished(() => page.close());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  onTestFinished(() => expect(errors, 'errors thrown by the page').toEqual([]));
  await page.goto(server.url);
  return page;
}
