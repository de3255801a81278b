// Characters that have no place in a story's id or title: C0 and C1 controls, and the bidi embeddings, overrides
// and isolates that make text display differently from what it is (the "Trojan Source" characters). A plan's ids
// end up in branch names, commit messages and terminals. Leaf module, built-ins only: the engine bundles it.

export const UNSAFE_CHAR = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const BIDI_NAMES: Record<number, string> = {
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
};

/** "U+202E (right-to-left override)" for each distinct unsafe character in `text`, in order of appearance. */
export function describeUnsafeChars(text: string): string[] {
  const seen = new Set<number>();
  for (const match of text.matchAll(UNSAFE_CHARS)) seen.add(match[0].charCodeAt(0));
  return [...seen].map((code) => `${codePoint(code)} (${BIDI_NAMES[code] ?? 'a control character'})`);
}

/** `text` with each unsafe character written as its code point, so printing it cannot reorder or hide anything. */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_CHARS, (c) => `<${codePoint(c.charCodeAt(0))}>`);
}

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
