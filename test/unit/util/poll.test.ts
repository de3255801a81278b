// The one polling loop (src/util/poll.ts), used by the install lock, `cancel`'s wait for the loop's end and the
// wait for an agent's leftover processes to go. Fake timers: no wall-clock waits.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pollUntil } from '../../../src/util/poll.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('pollUntil', () => {
  it('true at the first look that says yes, without a pause before it', async () => {
    const done = vi.fn(() => true);
    await expect(pollUntil(done, { timeoutMs: 1000, intervalMs: 100 })).resolves.toBe(true);
    expect(done).toHaveBeenCalledTimes(1);
  });

  it('looks again each interval until yes; an async condition is awaited', async () => {
    let n = 0;
    const answer = pollUntil(async () => ++n === 3, { timeoutMs: 1000, intervalMs: 100 });
    await vi.advanceTimersByTimeAsync(200);
    await expect(answer).resolves.toBe(true);
    expect(n).toBe(3);
  });

  it('false once the time is up, after a last look at the deadline (never a pause past it)', async () => {
    const looks: number[] = [];
    const start = Date.now();
    const answer = pollUntil(() => (looks.push(Date.now() - start), false), { timeoutMs: 250, intervalMs: 100 });
    await vi.advanceTimersByTimeAsync(1000);
    await expect(answer).resolves.toBe(false);
    expect(looks).toEqual([0, 100, 200, 250]);
  });

  it('a zero timeout looks once', async () => {
    const done = vi.fn(() => false);
    await expect(pollUntil(done, { timeoutMs: 0, intervalMs: 100 })).resolves.toBe(false);
    expect(done).toHaveBeenCalledTimes(1);
  });
});
