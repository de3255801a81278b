// Plans as people write them (SPEC §13): what validatePrdText accepts with a warning, placed at file:line:col,
// and what it refuses with "did you mean". The marker ⟨ stands where the warning must point.
import { describe, expect, it } from 'vitest';
import { formatPrdWarning, validatePrdText, validateWithPositions } from '../../../src/prd/validate.js';
import { isSettled, isSkipped } from '../../../src/prd/skip.js';
import type { PrdProblemCode } from '../../../src/prd/types.js';

const MARK = '⟨';
const STORY = '"id": "US-001", "title": "One", "acceptanceCriteria": ["it works"], "priority": 1';

function plan(storyBody: string, top = ''): string {
  return `{\n  "branchName": "ralph/feature",${top}\n  "userStories": [\n    {${storyBody}}\n  ]\n}\n`;
}

function unmark(text: string): { text: string; line: number; col: number } {
  const offset = text.indexOf(MARK);
  const before = text.slice(0, offset).split('\n');
  return { text: text.replace(MARK, ''), line: before.length, col: before[before.length - 1].length + 1 };
}

// [what, marked text, code, message part]: each plan is valid, with exactly this one warning.
const WARNED: [string, string, PrdProblemCode, string][] = [
  [
    'passes "cancelled"',
    plan(`${STORY}, "passes": ${MARK}"cancelled"`),
    'skip-spelling',
    'userStories[0] (US-001): passes "cancelled" is read as "skip": true',
  ],
  [
    'passes "skipped"',
    plan(`${STORY}, "passes": ${MARK}"skipped"`),
    'skip-spelling',
    'passes "skipped" is read as "skip": true',
  ],
  [
    'dependencies for dependsOn',
    plan(`${STORY}, "passes": false, ${MARK}"dependencies": []`),
    'did-you-mean',
    'userStories[0] (US-001): "dependencies" is not a field ralphkit reads, so it is ignored; did you mean "dependsOn"?',
  ],
  [
    'blockedBy for dependsOn',
    plan(`${STORY}, "passes": false, ${MARK}"blockedBy": []`),
    'did-you-mean',
    'did you mean "dependsOn"?',
  ],
  [
    'depends_on for dependsOn',
    plan(`${STORY}, "passes": false, ${MARK}"depends_on": []`),
    'did-you-mean',
    'did you mean "dependsOn"?',
  ],
  [
    'Checks at plan level',
    plan(`${STORY}, "passes": false`, `\n  ${MARK}"Checks": ["npm test"],`),
    'did-you-mean',
    '"Checks" is not a field ralphkit reads, so it is ignored; did you mean "checks"?',
  ],
  [
    'a right-to-left override in a title',
    plan(
      `"id": "US-001", "title": ${MARK}"Fix \u202egnp.exe", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`,
    ),
    'unsafe-text',
    'userStories[0] (US-001): the title contains U+202E (right-to-left override)',
  ],
  [
    'a right-to-left mark in a title (hidden by the terminal layer too)',
    plan(`"id": "US-001", "title": ${MARK}"Fix \u200fit", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`),
    'unsafe-text',
    'userStories[0] (US-001): the title contains U+200F (right-to-left mark)',
  ],
  [
    'an isolate in an id',
    plan(`"id": ${MARK}"US\u20661", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`),
    'unsafe-text',
    'userStories[0] (US<U+2066>1): the id contains U+2066 (left-to-right isolate)',
  ],
  [
    'an id with ".." (no git branch name can hold it)',
    plan(`"id": ${MARK}"US..6", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`),
    'story-id-ref',
    'userStories[0] (US..6): the id is not usable as it is in a git branch name, so --parallel names its branch with it encoded (<branchName>--US+2E.6)',
  ],
  [
    'an id ending in .lock',
    plan(`"id": ${MARK}"x.lock", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`),
    'story-id-ref',
    '(<branchName>--x+2Elock)',
  ],
  [
    'an id with a space (a cleanup would make it US-1)',
    plan(`"id": ${MARK}"US 1", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`),
    'story-id-ref',
    '(<branchName>--US+201)',
  ],
  [
    'a branch name a shell expands',
    plan(`${STORY}, "passes": false`).replace('"branchName": "ralph/feature"', `"branchName": ${MARK}"ralph/x$(id)"`),
    'shell-word',
    'branchName "ralph/x$(id)" holds characters a shell reads',
  ],
  [
    'a base branch with a backquote',
    plan(`${STORY}, "passes": false`, `\n  "baseBranch": ${MARK}"main\`id\`",`),
    'shell-word',
    'baseBranch "main`id`" holds characters a shell reads',
  ],
  [
    'a bell and a C1 control in a title',
    plan(
      `"id": "US-001", "title": ${MARK}"a\\u0007b\u0085", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`,
    ),
    'unsafe-text',
    'the title contains U+0007 (a control character), U+0085 (a control character)',
  ],
];

describe('valid plans with a warning', () => {
  it.each(WARNED)('%s', (_what, marked, code, message) => {
    const { text, line, col } = unmark(marked);
    const result = validatePrdText(text, 'prd.json');
    expect(result.problems).toEqual([]);
    expect(result.prd).toBeDefined();
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatchObject({ code, line, col });
    expect(result.warnings[0].message).toContain(message);
    expect(formatPrdWarning(result.warnings[0])).toMatch(new RegExp(`^prd\\.json:${line}:${col}: warning: `));
    // The fast path hands such a plan on, so the full check's warning is never lost.
    expect(result).toEqual(validateWithPositions(text, 'prd.json'));
  });
});

describe('no warning where nothing is amiss', () => {
  it.each([
    ['skip: true', `${STORY}, "passes": false, "skip": true`],
    [
      'keys of other tools',
      `${STORY}, "passes": false, "status": "todo", "estimate": 3, "storyPoints": 2, "labels": ["ui"]`,
    ],
    [
      "dependsOn beside a tool's own dependencies field",
      `${STORY}, "passes": false, "dependsOn": [], "dependencies": ["react"]`,
    ],
    [
      'accents and emoji in a title',
      `"id": "US-001", "title": "Café ✓ 日本", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`,
    ],
    [
      'ids and a branch name of letters, digits, - _ . and /',
      `"id": "US-1.2_b", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false`,
    ],
    [
      'a tab in a description (only ids and titles are held to it)',
      `${STORY}, "passes": false, "description": "a\\tb"`,
    ],
  ])('%s', (_what, body) => {
    expect(validatePrdText(plan(body), 'prd.json')).toMatchObject({ problems: [], warnings: [] });
  });
});

describe('refused, with "did you mean"', () => {
  it.each([
    [
      'stories for userStories',
      '{"branchName": "ralph/x", "stories": []}',
      'missing required field "userStories" (an array); found "stories", did you mean "userStories"?',
    ],
    [
      'user_stories for userStories',
      '{"branchName": "ralph/x", "user_stories": []}',
      'missing required field "userStories" (an array); found "user_stories", did you mean "userStories"?',
    ],
  ])('%s', (_what, text, message) => {
    const { problems } = validatePrdText(text, 'prd.json');
    expect(problems.map((p) => p.message)).toEqual([message]);
  });

  it('not for an unrelated key', () => {
    const { problems } = validatePrdText('{"branchName": "ralph/x", "tasks": [], "items": []}', 'prd.json');
    expect(problems.map((p) => p.message)).toEqual(['missing required field "userStories" (an array)']);
  });

  it('passes with any other string is still refused', () => {
    const { problems } = validatePrdText(plan(`${STORY}, "passes": "done"`), 'prd.json');
    expect(problems.map((p) => p.code)).toEqual(['type']);
  });

  it('skip must be true or false', () => {
    const { problems } = validatePrdText(plan(`${STORY}, "passes": false, "skip": "yes"`), 'prd.json');
    expect(problems.map((p) => p.message)).toEqual([
      'userStories[0] (US-001): skip must be true or false, found a string ("yes")',
    ]);
  });
});

describe('a story set aside', () => {
  it.each([
    [{ passes: false, skip: true }, true, true],
    [{ passes: 'cancelled' }, true, true],
    [{ passes: 'skipped' }, true, true],
    [{ passes: true }, false, true],
    [{ passes: false }, false, false],
    [{ passes: false, skip: false }, false, false],
    [{ passes: 'done' }, false, false],
    [{ passes: false, skip: 'true' }, false, false],
  ])('%j: skipped %s, settled %s', (story, skipped, settled) => {
    expect(isSkipped(story)).toBe(skipped);
    expect(isSettled(story)).toBe(settled);
  });
});
