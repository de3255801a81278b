// The dashboard at the widths people use: a phone, half a laptop screen, a desktop. Nothing may
// scroll sideways and no card may be cut off; when the dependency columns do not fit, the depths
// stack as bands and each card names what it depends on instead of drawing edges.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { testdir } from '../support/repo.js';
import { launchChromium } from '../support/browser.js';
import { writeDemoRepo } from '../support/view-demo.js';
import { plan, writePlan } from '../support/view-fixtures.js';
import { startViewServer } from '../../src/view/server.js';
import type { Prd } from '../../src/prd/types.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium({ scrollbars: true });
});
afterAll(async () => {
  await browser?.close();
});

const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 3,
};
const SPLIT: BrowserContextOptions = { viewport: { width: 800, height: 800 } };
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const XSS = '<img src=x onerror="window.__pwned=1">';
/** expect.poll waits 1 s by default; a redraw after a resize or a new plan can take longer on a loaded CI machine. */
const PATIENCE = 15_000;

async function open(repo: string, options: BrowserContextOptions): Promise<Page> {
  const server = await startViewServer({ cwd: repo, port: 0 });
  onTestFinished(() => server.close());
  const context = await browser.newContext({ ...options, reducedMotion: 'reduce' });
  onTestFinished(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  onTestFinished(() => expect(errors, 'errors thrown by the page').toEqual([]));
  await page.goto(server.url);
  await page.locator('.card').first().waitFor();
  return page;
}

async function openDemo(options: BrowserContextOptions): Promise<Page> {
  const repo = testdir('ralphkit-view-narrow-');
  writeDemoRepo(repo, process.pid);
  const page = await open(repo, options);
  await page.locator('.card').nth(7).waitFor();
  await page.locator('.loop.tone-running').waitFor();
  return page;
}

function chain(n: number): Prd {
  const prd = plan(n);
  prd.userStories.forEach((s, i) => (s.dependsOn = i ? [prd.userStories[i - 1].id] : []));
  return prd;
}

/** Everything a reader could miss: sideways scroll anywhere, cards or header parts outside the window, cut card text. */
function measure(page: Page) {
  return page.evaluate(() => {
    const doc = document.documentElement;
    const board = document.getElementById('board')!;
    const width = doc.clientWidth;
    const outside = (sel: string) =>
      [...document.querySelectorAll<HTMLElement>(sel)]
        .filter((el) => el.getClientRects().length > 0)
        .filter((el) => {
          const r = el.getBoundingClientRect();
          return r.left < -0.5 || r.right > width + 0.5;
        })
        .map((el) => el.dataset.storyId ?? el.id ?? el.className);
    // Blockified elements (flex items, blocks) report their own scroll size; inline text runs do not.
    const clipped = [...document.querySelectorAll<HTMLElement>('.card, .card *')]
      .filter((el) => getComputedStyle(el).display !== 'inline' && el.getClientRects().length > 0)
      .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
      .map((el) => `${el.closest<HTMLElement>('.card')!.dataset.storyId} ${el.className}: ${el.textContent}`);
    return {
      layout: board.dataset.layout,
      viewport: width,
      pageOverflow: doc.scrollWidth - doc.clientWidth,
      boardOverflow: board.scrollWidth - board.clientWidth,
      cardsOutside: outside('.card'),
      headerOutside: outside('.top, .top *, .loop, .loop *, .pane-head, .pane-head *'),
      clipped,
      edges: document.querySelectorAll('#edges path.edge').length,
    };
  });
}

describe('dashboard in narrow windows', () => {
  it.each([
    { name: 'phone, 390 px', options: PHONE, layout: 'bands', edges: 0 },
    { name: 'split screen, 800 px', options: SPLIT, layout: 'graph', edges: 7 },
    { name: 'desktop, 1280 px', options: DESKTOP, layout: 'graph', edges: 7 },
  ])('$name: no sideways scroll, every card whole and inside the window', async ({ options, layout, edges }) => {
    const page = await openDemo(options);
    await expect.poll(() => measure(page).then((m) => m.edges), { timeout: PATIENCE }).toBe(edges);
    const m = await measure(page);
    expect(m).toEqual({
      layout,
      viewport: m.viewport,
      pageOverflow: 0,
      boardOverflow: 0,
      cardsOutside: [],
      headerOutside: [],
      clipped: [],
      edges,
    });
    expect(m.viewport).toBeGreaterThan(options.viewport!.width - 20); // a wider layout viewport would hide overflow
  });

  it('stacked as bands, each card names its dependencies, coloured by their state; side by side it does not', async () => {
    const page = await openDemo(PHONE);
    const deps = page.locator('.card[data-story-id="US-004"] .card-deps');
    await expect.poll(() => deps.isVisible(), { timeout: PATIENCE }).toBe(true);
    expect(await deps.textContent()).toBe('depends onUS-002');
    expect(await deps.locator('.dep').getAttribute('data-state')).toBe('passed'); // reported by the running loop, not sealed
    expect(await page.locator('.card[data-story-id="US-001"] .card-deps').count()).toBe(0);
    expect(await page.locator('.column-head').allInnerTexts()).toEqual([
      'NO DEPENDENCIES\n1',
      'STAGE 2\n1',
      'STAGE 3\n4',
      'STAGE 4\n2',
    ]);

    await page.setViewportSize({ width: 1280, height: 800 });
    await expect
      .poll(() => measure(page).then((m) => [m.layout, m.edges]), { timeout: PATIENCE })
      .toEqual(['graph', 7]);
    expect(await deps.isVisible()).toBe(false);
  });

  it('resizing switches between graph and bands both ways, with no sideways scroll at any step', async () => {
    const page = await openDemo(DESKTOP);
    for (const [width, layout, edges] of [
      [390, 'bands', 0],
      [800, 'graph', 7],
      [600, 'bands', 0],
      [1101, 'graph', 7],
      [1280, 'graph', 7],
    ] as const) {
      await page.setViewportSize({ width, height: 800 });
      await expect
        .poll(() => measure(page).then((m) => [m.layout, m.edges]), { timeout: PATIENCE })
        .toEqual([layout, edges]);
      const m = await measure(page);
      expect([width, m.pageOverflow, m.boardOverflow, m.cardsOutside, m.clipped]).toEqual([width, 0, 0, [], []]);
    }
  });

  it('a plan too deep for the desktop board stacks as bands instead of scrolling sideways', async () => {
    const repo = testdir('ralphkit-view-deep-');
    writePlan(repo, chain(7));
    const page = await open(repo, DESKTOP);
    await page.locator('.card').nth(6).waitFor();
    await expect.poll(() => measure(page).then((m) => m.layout), { timeout: PATIENCE }).toBe('bands');
    const m = await measure(page);
    expect([m.boardOverflow, m.pageOverflow, m.cardsOutside, m.clipped, m.edges]).toEqual([0, 0, [], [], 0]);
    expect(await page.locator('.card[data-story-id="US-007"] .card-deps').innerText()).toMatch(/depends on\s*US-006/);
  });

  it('a long title wraps in full on a phone instead of being cut', async () => {
    const repo = testdir('ralphkit-view-long-');
    const prd = chain(2);
    const title =
      'Let an administrator export every task with its priority, assignee, due date and full comment history as CSV, JSON or a spreadsheet';
    prd.userStories[1].title = title;
    prd.branchName = 'ralph/a-branch-name-long-enough-to-overflow-a-phone-header-unless-it-wraps';
    writePlan(repo, prd);
    const page = await open(repo, PHONE);
    expect(await page.locator('.card[data-story-id="US-002"] .card-title').innerText()).toBe(title);
    const m = await measure(page);
    expect([m.pageOverflow, m.cardsOutside, m.headerOutside, m.clipped]).toEqual([0, [], [], []]);
  });

  it('the story panel covers the phone screen, scrolls only downwards, and closes', async () => {
    const page = await openDemo(PHONE);
    await page.locator('.card[data-story-id="US-004"]').click();
    const panel = page.locator('#detail');
    await panel.waitFor();
    const box = await panel.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return {
        left: r.left,
        right: r.right,
        overflow: el.scrollWidth - el.clientWidth,
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        width: document.documentElement.clientWidth,
      };
    });
    expect(box).toEqual({ left: 0, right: box.width, overflow: 0, page: 0, width: box.width });
    expect(await page.locator('#detail-title').textContent()).toBe('Priority selector in the task editor');
    await page.locator('#detail-close').click();
    await expect.poll(() => panel.isHidden(), { timeout: PATIENCE }).toBe(true);
  });

  it('plan text in the stacked layout stays text: a payload in a dependency id and the header is shown, never run', async () => {
    const repo = testdir('ralphkit-view-narrow-xss-');
    const prd = chain(3);
    prd.project = XSS;
    prd.branchName = XSS;
    prd.description = XSS;
    prd.userStories[2].dependsOn = ['US-002', XSS];
    writePlan(repo, prd);
    const page = await open(repo, PHONE);
    const deps = page.locator('.card[data-story-id="US-003"] .card-deps .dep');
    await expect.poll(() => deps.allTextContents(), { timeout: PATIENCE }).toEqual(['US-002', XSS]);
    expect(await deps.nth(1).getAttribute('data-state')).toBe('missing');
    expect(await page.locator('#project').textContent()).toBe(XSS);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  });
});
