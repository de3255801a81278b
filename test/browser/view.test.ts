// The dashboard in headless Debian Chromium: what a person sees, kept current from disk.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { gitdir, testdir, writeFiles } from '../support/repo.js';
import { keyEnv, sealNote, useKeyEnv } from '../support/verdict-note.js';
import { launchChromium } from '../support/browser.js';
import { commitPlan, plan, story, writeLedger, writeLoop, writePlan, writeProgress } from '../support/view-fixtures.js';
import { startViewServer, type ViewServer } from '../../src/view/server.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
});

const XSS = '<img src=x onerror="window.__pwned=1">';
/** Generous: the page should follow within a second, but CI machines are shared and slow. */
const PATIENCE = 15_000;

async function open(repo: string, options: { pollMs?: number } = {}): Promise<{ page: Page; server: ViewServer }> {
  const server = await startViewServer({ cwd: repo, port: 0, ...options });
  onTestFinished(() => server.close());
  const page = await context.newPage();
  onTestFinished(() => page.close());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  onTestFinished(() => expect(errors, 'errors thrown by the page').toEqual([]));
  await page.goto(server.url);
  return { page, server };
}

const card = (page: Page, id: string) => page.locator(`.card[data-story-id="${id}"]`);

describe('ralphkit view in a browser', () => {
  it('shows a story set aside as skipped, left out of the passed/total count', async () => {
    const repo = testdir();
    const prd = plan(3);
    prd.userStories[0].passes = true;
    prd.userStories[1].skip = true;
    prd.userStories[2].passes = 'cancelled';
    writePlan(repo, prd);
    const { page } = await open(repo);
    await expect.poll(() => page.locator('.card').count(), { timeout: PATIENCE }).toBe(3);
    expect(await card(page, 'US-002').getAttribute('data-state')).toBe('skipped');
    expect(await card(page, 'US-003').getAttribute('data-state')).toBe('skipped');
    expect(await card(page, 'US-002').locator('.pill').textContent()).toContain('skipped');
    expect(await page.locator('#passed-count').textContent()).toBe('1');
    expect(await page.locator('#total-count').textContent()).toBe('1');
    expect(await page.locator('#breakdown').textContent()).toContain('2 skipped');
  });

  it('renders a card per story of a 4-story plan, in columns by dependency depth, with edges', async () => {
    const repo = testdir();
    const prd = plan(4, { project: 'Four Stories' });
    prd.userStories[0].passes = true;
    writePlan(repo, prd);
    const { page } = await open(repo);
    await expect.poll(() => page.locator('.card').count(), { timeout: PATIENCE }).toBe(4);
    expect(await page.locator('.card .card-id').allTextContents()).toEqual(['US-001', 'US-002', 'US-003', 'US-004']);
    expect(await card(page, 'US-003').locator('.card-title').textContent()).toBe('Story number 3');
    expect(await card(page, 'US-001').getAttribute('data-state')).toBe('passed');
    expect(await card(page, 'US-002').getAttribute('data-state')).toBe('open');
    expect(await card(page, 'US-004').locator('.prio').textContent()).toBe('P4');
    expect(await page.locator('.column').count()).toBe(2);
    expect(await page.locator('.column').nth(1).locator('.card-id').allTextContents()).toEqual(['US-003', 'US-004']);
    await expect.poll(() => page.locator('#edges path.edge').count(), { timeout: PATIENCE }).toBe(2);
    expect(await page.locator('#project').textContent()).toBe('Four Stories');
    expect(await page.locator('#branch').textContent()).toBe('ralph/fixture');
    expect(await page.locator('#passed-count').textContent()).toBe('1');
    expect(await page.locator('#total-count').textContent()).toBe('4');
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: PATIENCE }).toBe('live');
  });

  it('flipping passes in prd.json on disk updates the card without a reload', async () => {
    const repo = gitdir();
    const env = keyEnv();
    useKeyEnv(env);
    const prd = plan(4);
    writePlan(repo, prd);
    const { page } = await open(repo);
    await card(page, 'US-002').waitFor();
    await page.evaluate(() => ((window as any).__sameDocument = true));

    prd.userStories[1].passes = true;
    writePlan(repo, prd);
    await expect.poll(() => card(page, 'US-002').getAttribute('data-state'), { timeout: PATIENCE }).toBe('passed');
    expect(await page.locator('#passed-count').textContent()).toBe('1');

    writeLedger(repo, 'L1', [
      { time: new Date().toISOString(), loop: 'L1', iteration: 1, story: 'US-002', command: 'npm test', exitCode: 0 },
      {
        time: new Date().toISOString(),
        loop: 'L1',
        iteration: 1,
        story: 'US-002',
        command: null,
        exitCode: null,
        status: 'verified',
      },
    ]);
    // A ledger line is a runner's report, which the agent could have written: passed, "reported", not verified.
    await expect
      .poll(() => card(page, 'US-002').getAttribute('data-verification'), { timeout: PATIENCE })
      .toBe('reported');
    expect(await card(page, 'US-002').getAttribute('data-state')).toBe('passed');
    expect(await page.locator('#breakdown').textContent()).toBe('1 reported · 3 open');
    await card(page, 'US-002').click();
    await expect
      .poll(() => page.locator('#detail .verdict').textContent(), { timeout: PATIENCE })
      .toMatch(/^Reported: .*no sealed verdict record confirms it/);
    // The loop ends: its sealed record, then its state.json. Now the card is verified.
    sealNote(
      repo,
      { loop: 'L1', commit: commitPlan(repo), time: new Date().toISOString(), stories: { 'US-002': 'verified' } },
      env,
    );
    writeLoop(repo, { id: 'L1', status: 'complete', exitCode: 0, branch: 'ralph/fixture' });
    await expect.poll(() => card(page, 'US-002').getAttribute('data-state'), { timeout: PATIENCE }).toBe('verified');
    await expect
      .poll(() => page.locator('#detail .verdict').textContent(), { timeout: PATIENCE })
      .toMatch(/^Verified: .*sealed verdict record/);
    await page.keyboard.press('Escape');

    prd.userStories[1].passes = false;
    writeFileSync(path.join(repo, 'ralph/prd.json'), JSON.stringify(prd)); // in place this time, not a rename
    await expect.poll(() => card(page, 'US-002').getAttribute('data-state'), { timeout: PATIENCE }).toBe('open');
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
  });

  it("shows each story's review: shipped by whom at which commit, how often it was revised; updated when a review lands; reported until sealed", async () => {
    const env = keyEnv();
    useKeyEnv(env);
    const repo = gitdir();
    writePlan(repo, plan(3));
    const time = (s: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, s)).toISOString();
    const review = (story: string, s: number, verdict: 'ship' | 'revise' | 'invalid', commit: string) => ({
      time: time(s),
      loop: 'L1',
      iteration: s,
      story,
      kind: 'review' as const,
      command: null,
      exitCode: null,
      outputSha256: null,
      verdict,
      reviewer: 'node "/opt/reviewers/judge.mjs"',
      model: 'opus',
      commit,
    });
    writeLedger(repo, 'L1', [
      review('US-001', 1, 'revise', 'a'.repeat(40)),
      review('US-001', 2, 'revise', 'b'.repeat(40)),
      review('US-001', 3, 'ship', 'c'.repeat(40)),
      review('US-002', 4, 'revise', 'd'.repeat(40)),
    ]);
    const { page } = await open(repo);
    await expect
      .poll(() => card(page, 'US-001').locator('.card-review').getAttribute('data-review'), { timeout: PATIENCE })
      .toBe('ship');
    expect(await card(page, 'US-001').locator('.review-verdict').textContent()).toBe('shipped');
    expect(await card(page, 'US-001').locator('.review-by').textContent()).toBe('node judge.mjs · opus · ccccccc');
    expect(await card(page, 'US-001').locator('.review-revised').textContent()).toBe('revised 2×');
    expect(await card(page, 'US-001').locator('.card-review').getAttribute('title')).toBe(
      'reviewed by node "/opt/reviewers/judge.mjs" (opus) at ccccccc',
    );
    expect(await card(page, 'US-002').locator('.review-verdict').textContent()).toBe('changes asked');
    expect(await card(page, 'US-002').locator('.review-revised').textContent()).toBe('revised 1×');
    expect(await card(page, 'US-003').locator('.card-review').count()).toBe(0);
    // A ledger line is a report: until a sealed verdict record names the SHIP, the card says so.
    expect(await card(page, 'US-001').locator('.review-reported').textContent()).toBe('reported');
    // The reviewer ships US-002: the card follows without a reload.
    writeLedger(repo, 'L1', [
      review('US-001', 3, 'ship', 'c'.repeat(40)),
      review('US-002', 4, 'revise', 'd'.repeat(40)),
      review('US-002', 5, 'ship', 'e'.repeat(40)),
    ]);
    await expect
      .poll(() => card(page, 'US-002').locator('.review-verdict').textContent(), { timeout: PATIENCE })
      .toBe('shipped');
    expect(await card(page, 'US-002').locator('.review-by').textContent()).toBe('node judge.mjs · opus · eeeeeee');
    // The loop's record seals US-001's SHIP (at its commit) and one of US-002 at another commit than the ledger's.
    const head = commitPlan(repo);
    const shipped = (commit: string) => ({ reviewer: 'node "/opt/reviewers/judge.mjs"', model: 'opus', commit });
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: head,
        time: time(9),
        stories: { 'US-001': 'verified', 'US-002': 'verified' },
        reviews: { 'US-001': shipped('c'.repeat(40)), 'US-002': shipped('f'.repeat(40)) },
      },
      env,
    );
    writeLoop(repo, { id: 'L1', status: 'complete', exitCode: 0, branch: 'ralph/fixture' });
    await expect
      .poll(() => card(page, 'US-001').locator('.card-review').getAttribute('data-sealed'), { timeout: PATIENCE })
      .toBe('true');
    expect(await card(page, 'US-001').locator('.review-reported').count()).toBe(0);
    expect(await card(page, 'US-002').locator('.card-review').getAttribute('data-sealed')).toBe('false');
    expect(await card(page, 'US-002').locator('.review-reported').count()).toBe(1);
  });

  it('shows markup in plan text as text and runs none of it', async () => {
    const repo = testdir();
    writePlan(repo, {
      project: XSS,
      branchName: 'ralph/x',
      description: XSS,
      checks: [XSS],
      userStories: [
        story('US-001', {
          title: XSS,
          description: XSS,
          acceptanceCriteria: [XSS, `**${XSS}** and \`${XSS}\``],
          notes: XSS,
          checks: [XSS],
        }),
        story(`US-002`, { dependsOn: ['US-001', XSS] }),
      ],
    });
    writeProgress(repo, `## 2026-11-29 - ${XSS}\n- ${XSS}\n\`\`\`\n${XSS}\n\`\`\`\n`);
    writeLoop(repo, { id: 'L1', agent: XSS, status: XSS });
    writeLedger(repo, 'L1', [
      { time: XSS, loop: XSS, iteration: 1, story: 'US-001', command: XSS, exitCode: 1, commit: XSS },
    ]);
    const { page } = await open(repo);
    const title = card(page, 'US-001').locator('.card-title');
    await title.waitFor();
    expect(await title.textContent()).toBe(XSS);
    expect(await page.locator('#project').textContent()).toBe(XSS);
    await card(page, 'US-001').click();
    await page.locator('#detail .detail-title').waitFor();
    expect(await page.locator('#detail .detail-title').textContent()).toBe(XSS);
    expect(await page.locator('#detail .ledger code').first().textContent()).toBe(XSS);
    await expect.poll(() => page.locator('.log-section li').first().textContent(), { timeout: PATIENCE }).toBe(XSS);
    expect(await page.locator('.loop .loop-agent').textContent()).toBe(XSS);
    // Not one element was made from the data, and nothing ran.
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  });

  it('a card opens its detail: criteria, checks, notes, dependencies and ledger entries', async () => {
    const repo = testdir();
    const prd = plan(3, { checks: ['npm test'] });
    Object.assign(prd.userStories[2], {
      description: 'As a user I see details.',
      acceptanceCriteria: ['First criterion', 'Second criterion'],
      checks: ['npm test -- detail'],
      notes: 'Rejected: `npm test -- detail` exited with 1',
    });
    writePlan(repo, prd);
    writeLedger(repo, 'L7', [
      {
        time: '2026-11-29T10:00:00Z',
        loop: 'L7',
        iteration: 2,
        story: 'US-003',
        command: 'npm test',
        exitCode: 0,
        durationMs: 800,
      },
      {
        time: '2026-11-29T10:00:01Z',
        loop: 'L7',
        iteration: 2,
        story: 'US-003',
        command: 'npm test -- detail',
        exitCode: 1,
        durationMs: 2500,
      },
      {
        time: '2026-11-29T10:00:02Z',
        loop: 'L7',
        iteration: 2,
        story: 'US-003',
        command: null,
        exitCode: null,
        status: 'rejected',
        reason: '`npm test -- detail` exited with 1',
      },
    ]);
    const { page } = await open(repo);
    await card(page, 'US-003').click();
    const detail = page.locator('#detail');
    await detail.locator('.detail-title').waitFor();
    expect(await detail.locator('.detail-title').textContent()).toBe('Story number 3');
    expect(await detail.locator('.criteria li').allTextContents()).toEqual(['First criterion', 'Second criterion']);
    expect(await detail.locator('.checks code').allTextContents()).toEqual(['npm test', 'npm test -- detail']);
    expect(await detail.locator('.notes').textContent()).toBe('Rejected: npm test -- detail exited with 1');
    expect(await detail.locator('.relations .chip').allTextContents()).toEqual(['US-001']);
    expect(await detail.locator('.ledger tbody tr').count()).toBe(3);
    expect(await detail.locator('.ledger tbody tr.failed code').textContent()).toBe('npm test -- detail');
    expect(await detail.locator('.verdict').textContent()).toBe(
      'The agent claimed it; the runner rejected the claim. npm test -- detail exited with 1',
    );
    expect(page.url()).toMatch(/#US-003$/);

    await detail.locator('.relations .chip').click(); // jump to the dependency
    await expect
      .poll(() => detail.locator('.detail-title').textContent(), { timeout: PATIENCE })
      .toBe('Story number 1');
    await page.keyboard.press('Escape');
    await expect.poll(() => detail.isHidden(), { timeout: PATIENCE }).toBe(true);
  });

  it('a plan with only the required fields shows no "null" or "undefined" anywhere', async () => {
    const repo = testdir();
    writeFiles(repo, {
      'ralph/prd.json': JSON.stringify({
        branchName: 'b',
        userStories: [
          { id: 'A-1', title: 'Bare', acceptanceCriteria: [], priority: 1, passes: false },
          { id: 'A-2', title: 'Done', acceptanceCriteria: ['x'], priority: 2, passes: true },
        ],
      }),
      'ralph/.runs/bare/state.json': JSON.stringify({ id: 'bare', status: 'running' }),
      'ralph/progress.txt': '## Entry\n```\n```\n',
    });
    const { page } = await open(repo);
    await card(page, 'A-1').click();
    await page.locator('#detail .detail-title').waitFor();
    await page.locator('.loop[data-loop-id="bare"]').waitFor();
    await page.locator('.log-section').waitFor();
    const text = await page.locator('body').innerText();
    expect(text).not.toMatch(/\bnull\b|\bundefined\b|NaN/);
    expect(await page.locator('#project').textContent()).toBe('Untitled plan');
  });

  it('shows each loop with status, iteration n/N, agent, cost and elapsed time', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    writeLoop(repo, {
      id: 'loop-running',
      iteration: 4,
      maxIterations: 12,
      agent: 'codex',
      costUsd: 2.5,
      startedAt: new Date(Date.now() - 125_000).toISOString(),
    });
    writeLoop(repo, {
      id: 'loop-done',
      status: 'complete',
      exitCode: 0,
      updatedAt: '2026-11-28T10:00:00Z',
      startedAt: '2026-11-28T09:00:00Z',
    });
    const { page } = await open(repo);
    const running = page.locator('.loop[data-loop-id="loop-running"]');
    await running.waitFor();
    expect(await running.getAttribute('data-alive')).toBe('true');
    expect(await running.locator('.loop-status').textContent()).toBe('running');
    expect(await running.locator('.loop-iter').textContent()).toBe('iteration 4 of 12');
    expect(await running.locator('.loop-agent').textContent()).toBe('codex');
    expect(await running.locator('.loop-facts').textContent()).toContain('$2.50');
    await expect
      .poll(() => running.locator('.elapsed').textContent(), { timeout: PATIENCE })
      .toMatch(/^2m \d\ds elapsed$/);
    expect(await page.locator('.loop[data-loop-id="loop-done"] .elapsed').textContent()).toBe('ran 1h 00m');
  });

  it('keeps the last good plan and says why when prd.json is unreadable', async () => {
    const repo = testdir();
    writePlan(repo, plan(2));
    const { page } = await open(repo);
    await card(page, 'US-002').waitFor();
    writeFileSync(path.join(repo, 'ralph/prd.json'), '{"userStories": [');
    await page.locator('#banner:not([hidden])').waitFor({ timeout: PATIENCE });
    expect(await page.locator('#banner').textContent()).toContain('not valid JSON');
    expect(await page.locator('.card').count()).toBe(2);
    writePlan(repo, plan(3));
    await page.locator('#banner').waitFor({ state: 'hidden', timeout: PATIENCE });
    expect(await page.locator('.card').count()).toBe(3);
  });

  it('says what is wrong when there is no plan, or none that can be read', async () => {
    const repo = testdir();
    const { page } = await open(repo);
    await expect
      .poll(() => page.locator('#board-empty').textContent(), { timeout: PATIENCE })
      .toContain('No plan at ralph/prd.json yet');
    writeFiles(repo, { 'ralph/prd.json': '{"userStories": [' });
    await expect
      .poll(() => page.locator('#board-empty').textContent(), { timeout: PATIENCE })
      .toContain('cannot be read yet');
    expect(await page.locator('#banner').textContent()).toContain('not valid JSON');
    writePlan(repo, plan(1));
    await card(page, 'US-001').waitFor({ timeout: PATIENCE });
    expect(await page.locator('#board-empty').isHidden()).toBe(true);
  });

  it('says so when the server goes away', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const { page, server } = await open(repo);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: PATIENCE }).toBe('live');
    await server.close();
    await expect
      .poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: PATIENCE })
      .not.toBe('live');
  });
});
