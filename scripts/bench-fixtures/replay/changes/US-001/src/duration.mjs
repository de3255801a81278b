import ms from 'ms';

/** Milliseconds in a duration written like "2h" or "90s"; throws on text that is not one. */
export function parseDuration(text) {
  const value = ms(text);
  if (typeof value !== 'number' || Number.isNaN(value)) throw new Error(`not a duration: ${text}`);
  return value;
}
