// The bounded map (src/util/at-most.ts) the weak-check probe and the final gate run their checks through.
import { describe, expect, it } from 'vitest';
import { mapAtMost } from '../../../src/util/at-most.js';

/** Work that records how many items run at once; item i settles when `release[i]` is called. */
function gated(n: number) {
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const release: Array<(fail?: boolean) => void> = [];
  const work = (item: string, i: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(i);
      most = Math.max(most, ++running);
      release[i] = (fail) => {
        running--;
        if (fail) reject(new Error(`${item} failed`));
        else resolve(item.toUpperCase());
      };
    });
  const items = Array.from({ length: n }, (_, i) => `s${i}`);
  return { items, work, started, release, most: () => most, running: () => running };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('mapAtMost', () => {
  it('runs at most `limit` at once, starts in order as lanes free up, and returns results in the items order', async () => {
    const g = gated(4);
    const done = mapAtMost(g.items, 2, g.work);
    await tick();
    expect(g.started).toEqual([0, 1]);
    g.release[1]();
    await tick();
    expect(g.started).toEqual([0, 1, 2]);
    g.release[2]();
    await tick();
    g.release[0]();
    await tick();
    g.release[3]();
    await expect(done).resolves.toEqual(['S0', 'S1', 'S2', 'S3']);
    expect(g.most()).toBe(2);
  });

  it('after a failure starts nothing new, waits for what runs, then throws the first error', async () => {
    const g = gated(4);
    let settled = false;
    const done = mapAtMost(g.items, 2, g.work).finally(() => {
      settled = true;
    });
    done.catch(() => undefined);
    await tick();
    g.release[0](true);
    await tick();
    expect(g.started).toEqual([0, 1]);
    expect(settled).toBe(false);
    g.release[1]();
    const error = await done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('s0 failed');
    expect(g.started).toEqual([0, 1]);
  });

  it('an empty list is an empty result; a limit below one still runs one at a time', async () => {
    await expect(mapAtMost([], 2, async (x) => x)).resolves.toEqual([]);
    const g = gated(2);
    const done = mapAtMost(g.items, 0, g.work);
    await tick();
    expect(g.started).toEqual([0]);
    g.release[0]();
    await tick();
    g.release[1]();
    await expect(done).resolves.toEqual(['S0', 'S1']);
  });
});
