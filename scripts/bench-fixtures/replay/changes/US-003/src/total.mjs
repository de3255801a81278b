import { parseDuration } from './duration.mjs';

/** The sum of a list of durations ("1h", "30m"), in milliseconds. */
export function totalDuration(list) {
  return list.reduce((sum, text) => sum + parseDuration(text), 0);
}
