// The validator at the edges of its rules: blank text that only looks filled in, the exact dependsOn entry a
// cycle runs through, and "did you mean" offered only for a likely slip, never for any unknown key.
import { describe, expect, it, vi } from 'vitest';
import { validatePrdText, validateWithPositions } from '../../../src/prd/validate.js';

const STORY = { id: 'US-1', title: 'One', acceptanceCriteria: ['it works'], priority: 1, passes: false };
const planText = (stories: object[], top: object = {}) =>
  JSON.stringify({ branchName: 'ralph/x', ...top, userStories: stories }, null, 2);
/** Both ways in: the fast path (JSON.parse first) and the position parser alone must agree. */
const both = (text: string) => [validatePrdText(text, 'p.json'), validateWithPositions(text, 'p.json')];

describe('blank text is empty', () => {
  it.each([
    ['id', ' ', 'userStories[0]: id is empty'],
    ['id', '\t\n', 'userStories[0]: id is empty'],
    ['title', '   ', 'userStories[0] (US-1): title is empty'],
    ['title', '\u00a0', 'userStories[0] (US-1): title is empty'],
  ])('a %s of %j', (key, value, message) => {
    for (const result of both(planText([{ ...STORY, [key]: value }]))) {
      expect(result.prd).toBeUndefined();
      expect(result.problems).toMatchObject([{ code: 'empty', message, path: `userStories[0].${key}` }]);
    }
  });

  it.each([
    ['acceptanceCriteria', ['ok', ' \t']],
    ['checks', [' ']],
    ['dependsOn', ['']],
    ['mayChange', ['\n']],
  ])('an entry of %s', (key, value) => {
    for (const result of both(planText([{ ...STORY, [key]: value }]))) {
      expect(result.problems.map((p) => [p.code, p.path])).toEqual([
        ['empty', `userStories[0].${key}[${value.length - 1}]`],
      ]);
    }
  });

  it.each([
    ['an id that starts with a space', { id: ' US-1' }],
    ['a one-character title', { title: 'x' }],
    ['a title that starts with a non-ASCII letter', { title: 'Ärger' }],
    ['an empty description (only id and title must say something)', { description: '' }],
  ])('accepts %s', (_what, change) => {
    for (const result of both(planText([{ ...STORY, ...change }]))) expect(result.problems).toEqual([]);
  });

  it.each([true, false])('accepts "review": %s', (review) => {
    for (const result of both(planText([{ ...STORY, review }]))) expect(result.problems).toEqual([]);
  });

  it('refuses a "review" that is not true or false', () => {
    for (const result of both(planText([{ ...STORY, review: 'yes' }]))) {
      expect(result.problems.map((p) => [p.code, p.path, p.message])).toEqual([
        ['type', 'userStories[0].review', expect.stringContaining('review must be true or false')],
      ]);
    }
  });

  it('accepts an empty plan-level description and project', () => {
    for (const result of both(planText([STORY], { project: '', description: '' }))) expect(result.problems).toEqual([]);
  });
});

describe('a cycle points at the dependsOn entry that closes it', () => {
  it.each([
    // [stories as id: dependsOn, expected path, message]
    [
      { A: ['C', 'B'], B: ['A'], C: [] },
      'userStories[0].dependsOn[1]',
      'dependency cycle: A -> B -> A (each depends on the next)',
    ],
    [{ A: ['C', 'A'], C: [] }, 'userStories[0].dependsOn[1]', 'userStories[0] (A): the story depends on itself'],
    [
      { X: [], A: ['X', 'X', 'B'], B: ['X', 'C'], C: ['A'] },
      'userStories[1].dependsOn[2]',
      'dependency cycle: A -> B -> C -> A (each depends on the next)',
    ],
  ] as const)('%j → %s', (graph, path, message) => {
    const stories = Object.entries(graph).map(([id, dependsOn]) => ({ ...STORY, id, dependsOn }));
    const text = planText(stories);
    const [problem] = validatePrdText(text, 'p.json').problems;
    expect(problem).toMatchObject({ code: 'cycle', path, message });
    // ...and its line and column are those of that entry.
    const { line } = problem;
    const entry = path.match(/dependsOn\[(\d)\]$/)![1];
    const storyIndex = Number(path.match(/^userStories\[(\d)\]/)![1]);
    const want = JSON.stringify(stories[storyIndex].dependsOn[Number(entry)]);
    const lines = text.split('\n');
    const startOfStory = lines.findIndex((l, i) => i > 0 && l.includes(`"id": "${stories[storyIndex].id}"`));
    const depsAt = lines.findIndex((l, i) => i > startOfStory && l.includes('"dependsOn"'));
    expect(line).toBe(depsAt + 2 + Number(entry));
    expect(lines[line! - 1].trim().replace(/,$/, '')).toBe(want);
  });

  it('names an unknown dependency at its own entry', () => {
    const [problem] = validatePrdText(
      planText([{ ...STORY, dependsOn: ['US-1x', 'nope'].slice(1) }]),
      'p.json',
    ).problems;
    expect(problem).toMatchObject({
      code: 'unknown-dependency',
      path: 'userStories[0].dependsOn[0]',
      message: 'userStories[0] (US-1): dependsOn names "nope", which is not the id of any story',
    });
  });
});

describe('did you mean', () => {
  const missing = (fields: Record<string, unknown>) => {
    const { passes: _omit, ...rest } = STORY;
    return validatePrdText(planText([{ ...rest, ...fields }]), 'p.json').problems.map((p) => p.message);
  };

  it.each([
    ['passed', 'passes'],
    ['Passes', 'passes'],
    ['pases', 'passes'],
    ['PASSES', 'passes'],
    ['passesss', 'passes'],
  ])('a missing "passes" beside "%s" asks about it', (key, field) => {
    expect(missing({ [key]: false })).toEqual([
      `userStories[0] (US-1): missing required field "${field}" (true or false); found "${key}", did you mean "${field}"?`,
    ]);
  });

  it.each(['notes', 'estimate', 'passesXXX', 'xy', 'p'])(
    'a missing "passes" beside "%s" only says it is missing',
    (key) => {
      expect(missing({ [key]: 'x' })).toEqual([
        'userStories[0] (US-1): missing required field "passes" (true or false)',
      ]);
    },
  );

  it('asks about a short field only when the case alone differs', () => {
    const { id: _omit, ...rest } = STORY;
    const problems = (key: string) =>
      validatePrdText(planText([{ ...rest, [key]: 'US-1' }]), 'p.json').problems.map((p) => p.message);
    expect(problems('ID')).toEqual([
      'userStories[0]: missing required field "id" (a string); found "ID", did you mean "id"?',
    ]);
    expect(problems('ie')).toEqual(['userStories[0]: missing required field "id" (a string)']);
  });

  it('asks about an alias of a missing field (stories for userStories)', () => {
    const text = JSON.stringify({ branchName: 'ralph/x', stories: [STORY] });
    expect(validatePrdText(text, 'p.json').problems.map((p) => p.message)).toEqual([
      'missing required field "userStories" (an array); found "stories", did you mean "userStories"?',
    ]);
  });

  it('warns about no unknown key that is merely unknown, nor about a field that is present', () => {
    const result = validatePrdText(
      planText([{ ...STORY, estimate: 3, owner: 'me', depends: ['US-1'] }], { team: 'x' }),
      'p.json',
    );
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([]);
    const present = validatePrdText(planText([{ ...STORY, dependsOn: [], dependencies: [] }]), 'p.json');
    expect(present.warnings).toEqual([]);
  });
});

describe('the JSON path of each problem', () => {
  const paths = (text: string) => validatePrdText(text, 'p.json').problems.map((p) => [p.code, p.path, p.message]);

  it.each([
    [
      'a byte order mark',
      `\ufeff${planText([STORY])}`,
      [['syntax', '', 'the file starts with a byte order mark (BOM); save it as UTF-8 without one']],
    ],
    ['a syntax error', '{"branchName": }', [['syntax', '', expect.any(String)]]],
    ['a plan that is an array', '[]', [['type', '', 'the plan must be a JSON object, found an array']]],
    [
      'a missing branchName',
      JSON.stringify({ userStories: [STORY] }),
      [['missing', 'branchName', 'missing required field "branchName" (a string)']],
    ],
    ['an empty userStories', planText([]), [['empty', 'userStories', 'userStories is empty; add at least one story']]],
    [
      'a duplicate id',
      planText([STORY, { ...STORY, title: 'Two' }]),
      [['duplicate-id', 'userStories[1].id', 'userStories[1]: duplicate id "US-1", already used by userStories[0]']],
    ],
    [
      'a duplicate key',
      '{"branchName": "a", "branchName": "b", "userStories": []}',
      expect.arrayContaining([
        [
          'duplicate-key',
          'branchName',
          'duplicate key "branchName"; JSON keeps only the last one, so remove the other',
        ],
      ]),
    ],
  ])('%s', (_what, text, expected) => {
    expect(paths(text)).toEqual(expected);
  });

  it('lists the problems on one line by column, whatever order the checks found them in', () => {
    const text = `{"branchName": "ralph/x", "userStories": [{"title": 2, "acceptanceCriteria": ["a"], "priority": 1, "passes": false, "id": 1}]}`;
    const problems = validatePrdText(text, 'p.json').problems;
    expect(problems.map((p) => p.path)).toEqual(['userStories[0].title', 'userStories[0].id']);
    expect(problems[0].col).toBeLessThan(problems[1].col!);
  });
});

describe('the path and words of each warning', () => {
  const warnings = (text: string) => validatePrdText(text, 'p.json').warnings.map((w) => [w.code, w.path, w.message]);

  it.each([
    [
      'a plan-level slip',
      planText([STORY], { Checks: ['npm test'] }),
      [['did-you-mean', 'Checks', '"Checks" is not a field ralphkit reads, so it is ignored; did you mean "checks"?']],
    ],
    [
      'a skip spelling',
      planText([{ ...STORY, passes: 'skipped' }]),
      [
        [
          'skip-spelling',
          'userStories[0].passes',
          expect.stringMatching(/^userStories\[0\] \(US-1\): passes "skipped" is read as "skip": true/),
        ],
      ],
    ],
    [
      'one unsafe character',
      planText([{ ...STORY, title: 'a\u202eb' }]),
      [
        [
          'unsafe-text',
          'userStories[0].title',
          'userStories[0] (US-1): the title contains U+202E (right-to-left override), which can make it display differently from what it is; remove it',
        ],
      ],
    ],
    [
      'two unsafe characters',
      planText([{ ...STORY, id: 'U\u0007S\u202e' }]),
      [
        [
          'unsafe-text',
          'userStories[0].id',
          expect.stringMatching(
            /the id contains U\+0007 \(a control character\), U\+202E \(right-to-left override\), which can make it display differently from what it is; remove them$/,
          ),
        ],
      ],
    ],
  ])('%s', (_what, text, expected) => {
    expect(warnings(text)).toEqual(expected);
  });
});

describe('if the position parser and JSON.parse ever disagree', () => {
  it('reports it as a syntax problem without a place, rather than crash', () => {
    const spy = vi.spyOn(JSON, 'parse').mockImplementationOnce(() => {
      throw new SyntaxError('boom');
    });
    try {
      const result = validateWithPositions(planText([STORY]), 'p.json');
      expect(result).toEqual({
        problems: [{ file: 'p.json', code: 'syntax', message: 'JSON.parse rejects the file: boom', path: '' }],
        warnings: [],
      });
    } finally {
      spy.mockRestore();
    }
  });
});
