// Headless Debian Chromium for the dashboard tests, driven by playwright-core (no bundled browser).
import { chromium, type Browser } from 'playwright-core';

/** RALPHKIT_CHROMIUM points elsewhere when Chromium is not at Debian's path. */
export const CHROMIUM = process.env.RALPHKIT_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface LaunchOptions {
  /**
   * Show classic scrollbars that take room, as on most desktops. Playwright hides them by default,
   * which hides the bugs where one scrollbar's width forces another.
   */
  scrollbars?: boolean;
}

export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, ignoreDefaultArgs: options.scrollbars ? ['--hide-scrollbars'] : undefined });
}
