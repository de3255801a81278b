import { formatDuration } from './format.mjs';
import { totalDuration } from './total.mjs';

/** One line on a list of estimates: how many there are and their sum, in words. */
export function describeTotal(estimates) {
  return `${estimates.length} estimates, ${formatDuration(totalDuration(estimates))} in all`;
}
