// The completion and stuck tags (SPEC §4) count only on a line of their own, so an agent that quotes the
// prompt ("reply with <promise>COMPLETE</promise> when done") does not end the loop by accident.
export const TAGS = {
  complete: '<promise>COMPLETE</promise>',
  stuck: '<promise>STUCK</promise>',
} as const;

export type Tag = keyof typeof TAGS;

/** True when `tag` stands alone on some line of `text` (surrounding whitespace allowed). */
export function hasTagLine(text: string, tag: Tag): boolean {
  return text.split(/\r?\n/).some((line) => line.trim() === TAGS[tag]);
}

/** The tag an agent's final message ends the iteration with; STUCK wins when both appear. */
export function detectTag(finalMessage: string): Tag | null {
  if (hasTagLine(finalMessage, 'stuck')) return 'stuck';
  if (hasTagLine(finalMessage, 'complete')) return 'complete';
  return null;
}
