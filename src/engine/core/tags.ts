// The completion and stuck tags (SPEC §4) count only on a line of their own, so an agent that quotes the
// prompt ("reply with <promise>COMPLETE</promise> when done") does not end the loop by accident. The completion
// word is the loop's own (--completion-promise, default COMPLETE); STUCK is fixed.
export const DEFAULT_COMPLETION = 'COMPLETE';
const STUCK = 'STUCK';

export type Tag = 'complete' | 'stuck';

/** `<promise>WORD</promise>`, the line an agent ends its final message with. */
export function renderTag(word: string): string {
  return `<promise>${word}</promise>`;
}

/** True when `<promise>word</promise>` stands alone on some line of `text` (surrounding whitespace allowed). */
export function hasTagLine(text: string, word: string): boolean {
  const tag = renderTag(word);
  return text.split(/\r?\n/).some((line) => line.trim() === tag);
}

/** The tag an agent's final message ends the iteration with; STUCK wins when both appear. */
export function detectTag(finalMessage: string, completion: string = DEFAULT_COMPLETION): Tag | null {
  if (hasTagLine(finalMessage, STUCK)) return 'stuck';
  if (hasTagLine(finalMessage, completion)) return 'complete';
  return null;
}

/**
 * Why `word` cannot be a completion word, or null. Letters, digits, `_`, `.` and `-` (at most 64): it goes into the
 * agent's prompt and is matched literally, so nothing that could read as markup or span lines; and never STUCK,
 * which means the opposite.
 */
export function completionWordProblem(word: string): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(word))
    return 'use letters, digits, "_", "." and "-" (at most 64, starting with a letter or digit), e.g. WORK_COMPLETE';
  if (word.toUpperCase() === STUCK)
    return `${STUCK} is the tag an agent gives up with; pick another word, e.g. WORK_COMPLETE`;
  return null;
}
