// The field tables of prd.json and the checks that walk a parsed document against them (prd/schema.ts), called
// directly: the words of each problem, the two ways of judging a value (tree node and plain value) agreeing, and
// "did you mean" kept to likely slips.
import { describe, expect, it } from 'vitest';
import { parseJsonWithPositions, type JsonNode, type JsonObject } from '../../../src/prd/json-parse.js';
import {
  PLAN_FIELDS,
  STORY_FIELDS,
  checkFields,
  checkMeantKeys,
  describeNode,
  fieldTable,
  join,
  lastEntry,
  meantKey,
  valueIsClean,
  type FieldSpec,
} from '../../../src/prd/schema.js';

const node = (text: string): JsonNode => {
  const parsed = parseJsonWithPositions(text);
  if (!parsed.ok) throw new Error(`bad test JSON: ${text}`);
  return parsed.root;
};
const object = (text: string) => node(text) as JsonObject;
const spec = (key: string) => [...STORY_FIELDS, ...PLAN_FIELDS].find((s) => s.key === key)!;
const storySpec = (key: string) => STORY_FIELDS.find((s) => s.key === key)!;

type Reported = [number | undefined, string, string, string];
function check(text: string, specs: FieldSpec[] = STORY_FIELDS, place = { path: 'userStories[0]', label: 'S: ' }) {
  const out: Reported[] = [];
  const found = checkFields(object(text), specs, place, (offset, code, message, path) =>
    out.push([offset, code, message, path]),
  );
  return { found: [...found.keys()], out };
}

describe('checkFields: the words of each problem', () => {
  const ok = '"id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false';
  it.each([
    [`{${ok}}`, []],
    [`{${ok}, "notes": 3}`, [['type', 'S: notes must be a string, found a number (3)', 'userStories[0].notes']]],
    [
      `{${ok}, "skip": "yes"}`,
      [['type', 'S: skip must be true or false, found a string ("yes")', 'userStories[0].skip']],
    ],
    [
      `{${ok}, "checks": {}}`,
      [['type', 'S: checks must be an array of strings, found an object', 'userStories[0].checks']],
    ],
    [
      `{${ok}, "checks": ["a", 1, " ", null]}`,
      [
        ['type', 'S: checks[1] must be a string, found a number (1)', 'userStories[0].checks[1]'],
        ['empty', 'S: checks[2] is empty', 'userStories[0].checks[2]'],
        ['type', 'S: checks[3] must be a string, found null', 'userStories[0].checks[3]'],
      ],
    ],
    [`{${ok}, "checks": []}`, []],
    [
      `{"id": "A", "title": "t", "acceptanceCriteria": [], "priority": 1, "passes": false}`,
      [
        [
          'empty',
          'S: acceptanceCriteria is empty: give the story at least one verifiable criterion',
          'userStories[0].acceptanceCriteria',
        ],
      ],
    ],
    [
      `{"id": "A", "title": "t", "acceptanceCriteria": [""], "priority": 1, "passes": false}`,
      [
        [
          'empty',
          'S: acceptanceCriteria[0] is empty: write a verifiable criterion there or remove the entry',
          'userStories[0].acceptanceCriteria[0]',
        ],
      ],
    ],
    [
      `{"id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1e400, "passes": false}`,
      [['type', 'S: priority must be a finite number', 'userStories[0].priority']],
    ],
    [
      `{"id": "", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false}`,
      [['empty', 'S: id is empty', 'userStories[0].id']],
    ],
    [
      `{"title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false}`,
      [['missing', 'S: missing required field "id" (a string)', 'userStories[0].id']],
    ],
    [
      `{"id": "A", "title": "t", "acceptanceCriteria": ["a"], "passes": false}`,
      [['missing', 'S: missing required field "priority" (a number)', 'userStories[0].priority']],
    ],
    [`{"id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": "cancelled"}`, []],
    [
      `{"id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": "done"}`,
      [['type', 'S: passes must be true or false, found a string ("done")', 'userStories[0].passes']],
    ],
  ])('%s', (text, expected) => {
    expect(check(text).out.map(([, code, message, path]) => [code, message, path])).toEqual(expected);
  });

  it('returns the fields whose type is right, and reports a missing field at its object', () => {
    const { found, out } = check('{"id": "A", "title": 5, "acceptanceCriteria": ["a"], "passes": true}');
    expect(found).toEqual(['id', 'acceptanceCriteria', 'passes']);
    expect(out.map(([offset, code]) => [offset, code])).toEqual([
      [21, 'type'],
      [0, 'missing'],
    ]);
  });

  it('reads the last of duplicate keys, as JSON.parse does', () => {
    const obj = object('{"a": 1, "b": 2, "a": 3}');
    expect(lastEntry(obj, 'a')?.value).toMatchObject({ value: 3 });
    expect(lastEntry(obj, 'c')).toBeUndefined();
    expect(
      check('{"id": 1, "id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false}').out,
    ).toEqual([]);
  });

  it('joins paths, with no dot at the top', () => {
    expect([join('', 'a'), join('x', 'a'), join('x[0]', 'a')]).toEqual(['a', 'x.a', 'x[0].a']);
    expect(check('{}', PLAN_FIELDS, { path: '', label: '' }).out.map(([, , message, path]) => [message, path])).toEqual(
      [
        ['missing required field "branchName" (a string)', 'branchName'],
        ['missing required field "userStories" (an array)', 'userStories'],
      ],
    );
  });
});

describe('valueIsClean agrees with checkFields', () => {
  const values: [string, string][] = [
    ['id', '"A"'],
    ['id', '""'],
    ['id', '" "'],
    ['id', '"\\u00a0"'],
    ['id', '" A"'],
    ['id', '"\\tA"'],
    ['id', '5'],
    ['notes', '""'],
    ['notes', '" "'],
    ['notes', 'null'],
    ['priority', '1'],
    ['priority', '1e400'],
    ['priority', '-1e400'],
    ['priority', '"1"'],
    ['passes', 'true'],
    ['passes', '0'],
    ['passes', '"cancelled"'],
    ['acceptanceCriteria', '[]'],
    ['acceptanceCriteria', '["a"]'],
    ['acceptanceCriteria', '["a", ""]'],
    ['acceptanceCriteria', '[" ", "a"]'],
    ['acceptanceCriteria', '[1]'],
    ['acceptanceCriteria', '"a"'],
    ['checks', '[]'],
    ['checks', '[""]'],
    ['checks', '["x", "  "]'],
    ['checks', '{}'],
    ['userStories', '[]'],
    ['userStories', '[1]'],
    ['userStories', '{}'],
  ];
  it.each(values)('%s: %s', (key, raw) => {
    const s = spec(key);
    const table = key === 'userStories' ? PLAN_FIELDS : STORY_FIELDS;
    const { found, out } = check(`{"${key}": ${raw}}`, [{ ...s, required: false }], { path: '', label: '' });
    const treeClean = found.length === 1 && out.length === 0;
    // A `passes` spelling is accepted by the tree walk with a warning; the plain-value check hands such a plan on.
    const plainClean = valueIsClean(JSON.parse(`{"v": ${raw}}`).v, s);
    expect(table).toContain(s);
    if (key === 'passes' && raw.startsWith('"')) expect([treeClean, plainClean]).toEqual([true, false]);
    else expect(plainClean).toBe(treeClean);
  });
});

describe('describeNode', () => {
  it.each([
    ['{}', 'an object'],
    ['[]', 'an array'],
    ['null', 'null'],
    ['true', 'true'],
    ['false', 'false'],
    ['12', 'a number (12)'],
    ['"hi"', 'a string ("hi")'],
    [`"${'x'.repeat(38)}"`, `a string ("${'x'.repeat(38)}")`],
    [`"${'x'.repeat(39)}"`, `a string ("${'x'.repeat(36)}...)`],
  ])('%s → %s', (text, words) => {
    expect(describeNode(node(text))).toBe(words);
  });
});

describe('did you mean', () => {
  it.each([
    ['Priority', 'priority'],
    ['PRIORITY', 'priority'],
    ['depends_on', 'dependsOn'],
    ['depends-on', 'dependsOn'],
    ['depends on', 'dependsOn'],
    ['Depends_On', 'dependsOn'],
    ['dependencies', 'dependsOn'],
    ['blockedBy', 'dependsOn'],
    ['blocked_by', 'dependsOn'],
    ['may_change', 'mayChange'],
    ['accept-ance-criteria', 'acceptanceCriteria'],
  ])('%s means %s in a story', (key, meant) => {
    expect(meantKey(key, STORY_FIELDS)).toBe(meant);
  });

  it.each(['dependsOn', 'notes', 'blocked', 'depends', 'estimate', 'stories', 'proto', '__proto__', 'constructor'])(
    '%s means no other story field',
    (key) => {
      expect(meantKey(key, STORY_FIELDS)).toBeUndefined();
    },
  );

  it('knows stories for userStories only at plan level', () => {
    expect(meantKey('stories', PLAN_FIELDS)).toBe('userStories');
    expect(meantKey('Stories', PLAN_FIELDS)).toBe('userStories');
    expect(meantKey('user_stories', PLAN_FIELDS)).toBe('userStories');
    expect(meantKey('dependencies', PLAN_FIELDS)).toBeUndefined();
  });

  it.each([
    ['passes', 'passed', true],
    ['passes', 'pass', true],
    ['passes', 'passesss', true],
    ['passes', 'passesXXX', false],
    ['passes', 'xasses', true],
    ['passes', 'xxsses', true],
    ['passes', 'xxxses', false],
    ['title', 'titel', true],
    ['title', 'Title', true],
    ['id', 'ID', true],
    ['id', 'io', false],
    ['id', 'i', false],
    ['priority', 'priorty', true],
  ])('a missing %s beside "%s": did you mean %s', (field, key, asks) => {
    const fields = STORY_FIELDS.filter((s) => s.key === field);
    const { out } = check(`{"${key}": 1}`, fields, { path: '', label: '' });
    expect(out[0][2].endsWith(`; found "${key}", did you mean "${field}"?`)).toBe(asks);
  });

  it('suggests only an unknown key, never a field of the table that is merely present', () => {
    const specs: FieldSpec[] = [
      { key: 'title', type: 'string', required: true },
      { key: 'titles', type: 'string' },
    ];
    expect(check('{"titles": "x"}', specs, { path: '', label: '' }).out.map(([, , m]) => m)).toEqual([
      'missing required field "title" (a string)',
    ]);
    expect(check('{"titel": "x"}', specs, { path: '', label: '' }).out.map(([, , m]) => m)).toEqual([
      'missing required field "title" (a string); found "titel", did you mean "title"?',
    ]);
  });

  it('warns about a slip for an optional field the object lacks, at the key', () => {
    const warned: Reported[] = [];
    const obj = object('{"id": "A", "depends_on": [], "Notes": "x", "notes": "y", "Title": "t", "other": 1}');
    checkMeantKeys(obj, STORY_FIELDS, { path: 'userStories[0]', label: 'S: ' }, (offset, code, message, path) =>
      warned.push([offset, code, message, path]),
    );
    expect(warned).toEqual([
      [
        12,
        'did-you-mean',
        'S: "depends_on" is not a field ralphkit reads, so it is ignored; did you mean "dependsOn"?',
        'userStories[0].depends_on',
      ],
    ]);
  });
});

describe('fieldTable', () => {
  it('looks fields up by key and counts the required ones, once per table', () => {
    const table = fieldTable(STORY_FIELDS);
    expect(table.byKey.get('passes')).toBe(storySpec('passes'));
    expect(table.required).toBe(5);
    expect(fieldTable(PLAN_FIELDS).required).toBe(2);
    expect(fieldTable(STORY_FIELDS)).toBe(table);
  });
});

describe('rules no field of today uses, on tables made up for the test', () => {
  it('an array that needs items', () => {
    const s: FieldSpec = { key: 'k', type: 'array', needsItems: 'add one' };
    expect([valueIsClean([], s), valueIsClean([0], s), valueIsClean([], { key: 'k', type: 'array' })]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('a string array that may hold blank entries', () => {
    const s: FieldSpec = { key: 'k', type: 'string[]' };
    expect([valueIsClean([' ', ''], s), valueIsClean([1], s)]).toEqual([true, false]);
    expect(check('{"k": [" ", ""]}', [s], { path: '', label: '' })).toEqual({ found: ['k'], out: [] });
    expect(
      check('{"k": [" ", 2]}', [s], { path: '', label: '' }).out.map(([, code, message]) => [code, message]),
    ).toEqual([['type', 'k[1] must be a string, found a number (2)']]);
  });

  it('a string that may be blank', () => {
    expect(check('{"k": " "}', [{ key: 'k', type: 'string' }], { path: '', label: '' })).toEqual({
      found: ['k'],
      out: [],
    });
  });
});

describe('the pinned-test fields of a plan', () => {
  it.each([
    [
      '{"protect": "test/**"}',
      [['type', 'protect must be an array of strings, found a string ("test/**")', 'protect']],
    ],
    ['{"protect": ["test/**", " "]}', [['empty', 'protect[1] is empty', 'protect[1]']]],
    ['{"protect": ["test/**"], "protectDefaults": false}', []],
    [
      '{"protectDefaults": "no"}',
      [['type', 'protectDefaults must be true or false, found a string ("no")', 'protectDefaults']],
    ],
  ])('%s', (text, expected) => {
    const specs = PLAN_FIELDS.filter((s) => s.key.startsWith('protect'));
    expect(
      check(text, specs, { path: '', label: '' }).out.map(([, code, message, path]) => [code, message, path]),
    ).toEqual(expected);
  });
});
