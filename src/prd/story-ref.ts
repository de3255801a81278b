// A story id as one part of a git ref name: `--parallel` names each story's branch `<branchName>--<part>` and keeps
// an attempt's commits under refs/ralphkit/loops/<loop>/attempts/<part>/<sha>. Any string is a valid story id, so
// the part is an encoding, not a cleanup: letters, digits, "_" and "-" stay as they are, a "." stays where git allows
// it (not first, not after another ".", not last, not in a final ".lock"), and every other byte of the id's UTF-8 is
// written "+XX" (two upper-case hex digits; "+" itself included). So the part is always valid (git-check-ref-format
// rules, as a component and after "--" in a branch name), an ordinary id like "US-1" or "US.6" is itself, and two
// different ids never share a part: the encoding reads back. An id that encodes past MAX_PART is cut and ends with
// "+h" and 12 hex digits of its sha256 ("+h" is never an escape), so its loose ref still fits a file name.
// Built-ins only: the loop engine bundles this file.
import { createHash } from 'node:crypto';

const SAFE = /[A-Za-z0-9_-]/;
/** The longest part before it is cut: a ref is a file, and a branch name is also `<branchName>--` in front. */
const MAX_PART = 80;
const CUT_TO = 60;

/** The ref name part of story `id`: valid in any ref, and different for different ids. */
export function storyRefPart(id: string): string {
  if (id === '') return '+';
  const chars = [...id];
  let out = '';
  chars.forEach((c, i) => {
    const next = chars[i + 1];
    if (SAFE.test(c)) out += c;
    // A kept "." is always followed by a kept character, so it can never follow another kept ".".
    else if (c === '.' && out !== '' && next !== undefined && SAFE.test(next)) out += c;
    else out += escapeChar(c);
  });
  if (out.endsWith('.lock')) out = `${out.slice(0, -'.lock'.length)}+2Elock`;
  return out.length > MAX_PART ? cut(out, id) : out;
}

/** True when the id is not its own ref name part (validate warns: the branch `--parallel` makes reads differently). */
export function storyIdNeedsEscaping(id: string): boolean {
  return storyRefPart(id) !== id;
}

function escapeChar(c: string): string {
  return [...Buffer.from(c)].map((b) => `+${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

function cut(out: string, id: string): string {
  let head = out.slice(0, CUT_TO);
  // Not in the middle of an escape, and not ending with "." (a part may not).
  const plus = head.lastIndexOf('+');
  if (plus > head.length - 3) head = head.slice(0, plus);
  head = head.replace(/\.$/, '');
  return `${head}+h${createHash('sha256').update(id).digest('hex').slice(0, 12)}`;
}
