// The page when its event stream is cut (the server drops a client that stopped reading; EventSource reconnects
// by itself) and when the progress log is longer than the server sends: what it shows must still be the whole
// current state.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { testdir } from '../support/repo.js';
import { launchChromium } from '../support/browser.js';
import { getJson } from '../support/view-http.js';
import { plan, writeLoop, writePlan, writeProgress } from '../support/view-fixtures.js';
import { startViewServer } from '../../src/view/server.js';
import { PROGRESS_HEAD_BYTES, PROGRESS_TAIL_BYTES } from '../../src/view/snapshot.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const PATIENCE = 15_000;

/** A TCP relay in front of the server that can cut every connection and hold new ones back until released. */
async function relay(target: number): Promise<{ port: number; cutAndHold(): void; release(): void }> {
  const open = new Set<net.Socket>();
  let held: net.Socket[] | null = null;
  const forward = (down: net.Socket) => {
    const up = net.connect(target, '127.0.0.1');
    for (const s of [down, up]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
    }
    down.pipe(up).pipe(down);
    down.on('close', () => up.destroy());
    up.on('close', () => down.destroy());
  };
  const server = net.createServer((down) => (held ? held.push(down) : forward(down)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => {
    for (const s of [...open, ...(held ?? [])]) s.destroy();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    cutAndHold() {
      held = [];
      for (const s of open) s.destroy();
    },
    release() {
      const waiting = held ?? [];
      held = null;
      waiting.forEach(forward);
    },
  };
}

async function newPage(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  onTestFinished(() => page.close());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  onTestFinished(() => expect(errors, 'errors thrown by the page').toEqual([]));
  await page.goto(url);
  return page;
}

const connection = (page: Page) => page.locator('#connection').getAttribute('data-state');

describe('the dashboard page recovers', () => {
  it('shows everything that changed while its stream was cut, once it reconnects', async () => {
    const repo = testdir();
    writePlan(repo, plan(2));
    writeProgress(repo, '# Progress log\n## 2026-11-29 - US-001\n- first entry\n');
    const server = await startViewServer({ cwd: repo, port: 0 });
    onTestFinished(() => server.close());
    const proxy = await relay(server.port);
    const page = await newPage(`http://127.0.0.1:${proxy.port}/`);
    await expect.poll(() => connection(page), { timeout: PATIENCE }).toBe('live');
    expect(await page.locator('.card').count()).toBe(2);

    proxy.cutAndHold();
    await expect.poll(() => connection(page), { timeout: PATIENCE }).not.toBe('live');
    writePlan(repo, plan(3));
    writeProgress(
      repo,
      '# Progress log\n## 2026-11-29 - US-001\n- first entry\n## 2026-11-30 - US-003\n- written while the page was away\n',
    );
    writeLoop(repo, { id: 'loop-while-away', iteration: 2 });
    // The server has the new state (it keeps reading without any client); the page has not got it.
    await expect.poll(async () => (await getJson(server.url, '/api/prd')).summary.total, { timeout: PATIENCE }).toBe(3);
    expect(await page.locator('.card').count()).toBe(2);

    proxy.release();
    await expect.poll(() => connection(page), { timeout: PATIENCE }).toBe('live');
    await expect.poll(() => page.locator('.card').count(), { timeout: PATIENCE }).toBe(3);
    await expect
      .poll(() => page.locator('.log-section h3').first().textContent(), { timeout: PATIENCE })
      .toContain('US-003');
    await page.locator('.loop[data-loop-id="loop-while-away"]').waitFor({ timeout: PATIENCE });
  });

  it('shows the head and newest entries of a log too long to send, and says the rest is in the file', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const entries = Array.from(
      { length: 3000 },
      (_, i) => `## 2026-11-29 - entry ${i}\n- ${'a note of a hundred bytes or so, over and over. '.repeat(4)}\n`,
    );
    const text = `# Progress log\n## Codebase Patterns\n- run npm test first\n## Sessions\n${entries.join('')}`;
    expect(text.length).toBeGreaterThan(2 * (PROGRESS_HEAD_BYTES + PROGRESS_TAIL_BYTES));
    writeProgress(repo, text);
    const server = await startViewServer({ cwd: repo, port: 0 });
    onTestFinished(() => server.close());
    const page = await newPage(server.url);
    const omitted = page.locator('#log .log-omitted');
    await omitted.waitFor({ timeout: PATIENCE });
    expect(await omitted.textContent()).toMatch(
      /^Older entries \(\d+ KiB\) are not shown here; they are in ralph\/progress\.txt\.$/,
    );
    expect(await page.locator('#log .log-section.patterns').textContent()).toContain('run npm test first');
    expect(await page.locator('#log .log-section.entry h3').first().textContent()).toContain('entry 2999');
    expect(await page.locator('#log h3', { hasText: /entry 0$/ }).count()).toBe(0);
    expect(await page.locator('#log .log-section.entry').count()).toBeLessThan(entries.length / 2);
  });
});
