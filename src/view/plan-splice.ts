// A plan written again with one story changed (the runner flips a story's passes, a person edits a title) is read by
// parsing that story alone: the bytes before and after it are the bytes that were there, and the plan parsed last
// time holds what they say. Pure byte work on a text JSON.parse accepted before; anything it does not read simply (a
// change across stories, a key spelled with an escape, userStories twice) is left to the full parse.

/** A plan as last read: its bytes, what JSON.parse made of them, and where its stories are (found when first needed). */
export interface ParsedPlan {
  bytes: Buffer;
  value: { userStories: unknown[] } & Record<string, unknown>;
  /**
   * Start and end offsets of each element of the top-level userStories list, in pairs; null: not worked out yet;
   * false: not found simply (storySpans), so every later read is a full parse without looking again.
   */
  spans: Int32Array | null | false;
}

/**
 * `bytes` read against `before`: the plan they hold, or null when only a full parse can tell (then nothing is
 * known about them, not even that they are JSON). The same bytes give `before` itself.
 */
export function spliceParse(before: ParsedPlan, bytes: Buffer): ParsedPlan | null {
  const old = before.bytes;
  const prefix = commonPrefix(old, bytes);
  if (prefix === old.length && old.length === bytes.length) return before;
  const suffix = commonSuffix(old, bytes, Math.min(old.length, bytes.length) - prefix);
  before.spans ??= storySpans(old) ?? false;
  const spans = before.spans;
  if (!spans || spans.length / 2 !== before.value.userStories.length) return null;
  // The story whose text holds every changed byte, in the old text: [prefix, old.length - suffix).
  const changedEnd = old.length - suffix;
  const k = lastStartAtOrBefore(spans, prefix);
  if (k < 0 || changedEnd > spans[2 * k + 1]) return null;
  const delta = bytes.length - old.length;
  let story: unknown;
  try {
    story = JSON.parse(bytes.subarray(spans[2 * k], spans[2 * k + 1] + delta).toString('utf8'));
  } catch {
    return null;
  }
  const moved = Int32Array.from(spans);
  moved[2 * k + 1] += delta;
  for (let i = 2 * k + 2; i < moved.length; i++) moved[i] += delta;
  const userStories = [...before.value.userStories];
  userStories[k] = story;
  return { bytes, value: { ...before.value, userStories }, spans: moved };
}

/** The index of the last span that starts at or before `at`, or -1. */
function lastStartAtOrBefore(spans: Int32Array, at: number): number {
  let lo = 0;
  let hi = spans.length / 2 - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (spans[2 * mid] <= at) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

const BLOCK = 4096;

export function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= n && Buffer.compare(a.subarray(i, i + BLOCK), b.subarray(i, i + BLOCK)) === 0) i += BLOCK;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** How many bytes `a` and `b` end alike in, at most `max`. */
export function commonSuffix(a: Uint8Array, b: Uint8Array, max: number): number {
  let i = 0;
  while (
    i + BLOCK <= max &&
    Buffer.compare(a.subarray(a.length - i - BLOCK, a.length - i), b.subarray(b.length - i - BLOCK, b.length - i)) === 0
  )
    i += BLOCK;
  while (i < max && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const USER_STORIES = Buffer.from('userStories');

/**
 * Where each element of the top-level "userStories" list starts and ends, for a text JSON.parse accepted; null when
 * the list is not found simply: the top level not an object, a key written with an escape, userStories twice or not
 * a list.
 */
export function storySpans(b: Uint8Array): Int32Array | null {
  let i = skipSpace(b, 0);
  if (b[i] !== 0x7b) return null;
  i = skipSpace(b, i + 1);
  let spans: number[] | null = null;
  while (i < b.length && b[i] !== 0x7d) {
    if (b[i] !== QUOTE) return null;
    const keyEnd = skipString(b, i);
    const key = b.subarray(i + 1, keyEnd - 1);
    if (key.includes(BACKSLASH)) return null;
    i = skipSpace(b, keyEnd);
    i = skipSpace(b, i + 1); // the colon
    if (Buffer.compare(key, USER_STORIES) === 0) {
      if (spans || b[i] !== 0x5b) return null;
      spans = [];
      i = skipSpace(b, i + 1);
      while (i < b.length && b[i] !== 0x5d) {
        const end = skipValue(b, i);
        if (end <= i) return null;
        spans.push(i, end);
        i = skipSpace(b, end);
        if (b[i] === 0x2c) i = skipSpace(b, i + 1);
      }
      if (i >= b.length) return null; // text JSON.parse would refuse: no list end
      i++;
    } else i = skipValue(b, i);
    i = skipSpace(b, i);
    if (b[i] === 0x2c) i = skipSpace(b, i + 1);
  }
  return spans ? Int32Array.from(spans) : null;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i;
}

/** Past the string that starts at `i` (its opening quote). */
function skipString(b: Uint8Array, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, j);
    if (q < 0) return b.length;
    let slashes = 0;
    while (b[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Past the value that starts at `i`. */
function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c !== 0x7b && c !== 0x5b) {
    while (i < b.length && !isEndOfScalar(b[i])) i++;
    return i;
  }
  let depth = 0;
  while (i < b.length) {
    const d = b[i];
    if (d === QUOTE) {
      i = skipString(b, i);
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth++;
    else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
    i++;
  }
  return i;
}

function isEndOfScalar(c: number): boolean {
  return c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
