// A story set aside (SPEC §13): `"skip": true`, or the spellings real plans use for it, `"passes": "cancelled"`
// and `"passes": "skipped"`. Such a story is never picked, never verified and not counted against completion.
// Leaf module, built-ins only: the validator, the engine and the dashboard all ask it.

/** The strings in `passes` that are read as `"skip": true` (with a warning from the validator). */
export const SKIP_SPELLINGS: readonly string[] = ['cancelled', 'skipped'];

interface StoryLike {
  passes?: unknown;
  skip?: unknown;
}

export function isSkipped(story: StoryLike): boolean {
  return story.skip === true || (typeof story.passes === 'string' && SKIP_SPELLINGS.includes(story.passes));
}

/** Not counted against completion: set aside, or passing. */
export function isSettled(story: StoryLike): boolean {
  return story.passes === true || isSkipped(story);
}

/** The stories that count: every story but those set aside. */
export function activeStories<T extends StoryLike>(stories: readonly T[]): T[] {
  return stories.filter((s) => !isSkipped(s));
}
