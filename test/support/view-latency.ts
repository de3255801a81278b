// Measures how long the dashboard takes to show a change made on disk: flip one story's `passes`
// in prd.json, and time until its card's data-state changes in the browser. Used by
// test/browser/view-latency.test.ts; the benchmark may reuse it.
import type { Page } from 'playwright-core';
import type { Prd } from '../../src/prd/types.js';
import { writePlan } from './view-fixtures.js';

export interface LatencyResult {
  samples: number[];
  median: number;
  min: number;
  max: number;
}

/**
 * `page` must already show `prd` (read from `repo`). Each flip arms a MutationObserver in the page,
 * writes the plan (temp file + rename, as the engine does), and takes the page's clock at the moment
 * the card changes. Node and Chromium share the machine's wall clock, so the difference is the delay.
 */
export async function measureFlipLatency(
  page: Page,
  repo: string,
  prd: Prd,
  storyId: string,
  flips = 10,
): Promise<LatencyResult> {
  const story = prd.userStories.find((s) => s.id === storyId);
  if (!story) throw new Error(`no story ${storyId} in the plan`);
  const samples: number[] = [];
  for (let i = 0; i < flips; i++) {
    story.passes = !story.passes;
    const seen = armObserver(page, storyId, story.passes ? 'passed' : 'open');
    await page.waitForFunction(() => (window as any).__flipArmed === true);
    const start = Date.now();
    writePlan(repo, prd);
    samples.push((await seen) - start);
  }
  return summarize(samples);
}

function armObserver(page: Page, id: string, want: string): Promise<number> {
  return page.evaluate(
    ({ id, want }) =>
      new Promise<number>((resolve, reject) => {
        const w = window as any;
        const state = () =>
          document.querySelector<HTMLElement>(`.card[data-story-id="${CSS.escape(id)}"]`)?.dataset.state;
        const timer = setTimeout(() => reject(new Error(`card ${id} never became ${want}`)), 15_000);
        const observer = new MutationObserver(() => {
          if (state() !== want) return;
          observer.disconnect();
          clearTimeout(timer);
          w.__flipArmed = false;
          resolve(Date.now());
        });
        observer.observe(document.getElementById('columns')!, { subtree: true, childList: true, attributes: true });
        w.__flipArmed = true;
      }),
    { id, want },
  );
}

export function summarize(samples: number[]): LatencyResult {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { samples, median, min: sorted[0], max: sorted[sorted.length - 1] };
}
