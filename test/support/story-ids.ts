// Story ids a plan may hold (any string is valid to validate) that are not valid as they are in a git ref name, or
// that a careless cleanup would merge into one: shared by the encoding's unit test and the test that asks real git.
export const NASTY_STORY_IDS: string[] = [
  'US..6', 'x.lock', '../x', 'US 1', 'US-1', 'US_1', 'US+201', '+', '', '.', '..', '.hidden', 'trail.', 'a/b', '/lead',
  'trail/', 'a//b', '-rf', 'HEAD', '@', 'a@{1}', 'a~1', 'a^2', 'a:b', 'what?', 'star*', 'open[', 'back\\slash',
  'tab\there', 'new\nline', 'del\x7f', 'ünïcødé', '日本-1', '$(touch pwned)', '`id`', "it's", 'x.lock.lock', 'x.loc',
  'a.b.c', '.lock', 'US.6', 'US-1.', 'a'.repeat(300), `${'é'.repeat(40)}..`, `${'a'.repeat(59)}.b${'c'.repeat(40)}`,
];
