// Work on a list with a bound on how much runs at once: the checks of the weak-check probe and of the final gate
// share one checkout and the machine's cores. Built-ins only.

/** Check runs at a time in one checkout: two (the machine's other core), not all at once. */
export const CHECKS_AT_ONCE = 2;

/**
 * `work` on each item, at most `limit` at a time, started in the items' order; the results in that order. When one
 * throws, no new item starts, the ones running are waited for (nothing is left working behind the caller's back),
 * and the first error is thrown.
 */
export async function mapAtMost<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < items.length && !failure; i = next++) {
      try {
        out[i] = await work(items[i], i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw failure.error;
  return out;
}
