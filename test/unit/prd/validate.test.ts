import { describe, expect, it } from 'vitest';
import { formatPrdProblem, validatePrdText } from '../../../src/prd/validate.js';
import type { PrdProblemCode } from '../../../src/prd/types.js';

// Plans are written as text so each case can put a marker (⟨) exactly where the problem must be reported.
const MARK = '⟨';
type Fields = Record<string, string | undefined>;

const BASE_STORY: Fields = {
  id: '"US-001"',
  title: '"One"',
  acceptanceCriteria: '["it works"]',
  priority: '1',
  passes: 'false',
};

/** One story on one line; values are raw JSON; `undefined` leaves a field out. */
function story(fields: Fields = {}, marked = false): string {
  const all = { ...BASE_STORY, ...fields };
  const body = Object.entries(all)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `"${k}": ${v}`)
    .join(', ');
  return `${marked ? MARK : ''}{${body}}`;
}

function plan(stories: string[] = [story()], top: Fields = {}): string {
  const all: Fields = { branchName: '"ralph/feature"', userStories: `[\n    ${stories.join(',\n    ')}\n  ]`, ...top };
  const body = Object.entries(all)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  "${k}": ${v}`)
    .join(',\n');
  return `{\n${body}\n}\n`;
}

/** The text without its marker, and the line and column the marker stood at. */
function unmark(text: string): { text: string; line: number; col: number } {
  const offset = text.indexOf(MARK);
  if (offset < 0) throw new Error('test case has no marker');
  const before = text.slice(0, offset).split('\n');
  return { text: text.replace(MARK, ''), line: before.length, col: before[before.length - 1].length + 1 };
}

const s2 = (id: string, deps: string, marked = false) => story({ id: `"${id}"`, dependsOn: deps }, marked);

// [what, marked text, code, message part, total number of problems in the text]
const CASES: [string, string, PrdProblemCode, string, number][] = [
  // plan level
  ['plan is an array', `${MARK}[]`, 'type', 'the plan must be a JSON object, found an array', 1],
  [
    'branchName missing',
    `${MARK}${plan(undefined, { branchName: undefined })}`,
    'missing',
    'missing required field "branchName" (a string)',
    1,
  ],
  [
    'branchName is a number',
    plan(undefined, { branchName: `${MARK}5` }),
    'type',
    'branchName must be a string, found a number (5)',
    1,
  ],
  [
    'branchName has a space',
    plan(undefined, { branchName: `${MARK}"ralph/my feature"` }),
    'branch-name',
    'is not a valid git branch name: it contains a space',
    1,
  ],
  ['branchName has ..', plan(undefined, { branchName: `${MARK}"ralph/a..b"` }), 'branch-name', 'it contains ".."', 1],
  ['branchName starts with -', plan(undefined, { branchName: `${MARK}"-rf"` }), 'branch-name', 'it starts with "-"', 1],
  ['branchName is empty', plan(undefined, { branchName: `${MARK}""` }), 'branch-name', 'it is empty', 1],
  [
    'baseBranch is invalid',
    plan(undefined, { baseBranch: `${MARK}"main~1"` }),
    'branch-name',
    'baseBranch "main~1" is not a valid git branch name',
    1,
  ],
  [
    'baseBranch is not a string',
    plan(undefined, { baseBranch: `${MARK}true` }),
    'type',
    'baseBranch must be a string, found true',
    1,
  ],
  [
    'project is not a string',
    plan(undefined, { project: `${MARK}["x"]` }),
    'type',
    'project must be a string, found an array',
    1,
  ],
  [
    'description is not a string',
    plan(undefined, { description: `${MARK}null` }),
    'type',
    'description must be a string, found null',
    1,
  ],
  [
    'setup is not a string',
    plan(undefined, { setup: `${MARK}{}` }),
    'type',
    'setup must be a string, found an object',
    1,
  ],
  [
    'checks is a string',
    plan(undefined, { checks: `${MARK}"npm test"` }),
    'type',
    'checks must be an array of strings, found a string ("npm test")',
    1,
  ],
  [
    'checks holds a number',
    plan(undefined, { checks: `["npm test", ${MARK}3]` }),
    'type',
    'checks[1] must be a string, found a number (3)',
    1,
  ],
  ['checks holds an empty command', plan(undefined, { checks: `[${MARK}"  "]` }), 'empty', 'checks[0] is empty', 1],
  [
    'userStories missing',
    `${MARK}{"branchName": "ralph/x"}`,
    'missing',
    'missing required field "userStories" (an array)',
    1,
  ],
  [
    'userStories is an object',
    plan(undefined, { userStories: `${MARK}{}` }),
    'type',
    'userStories must be an array, found an object',
    1,
  ],
  ['userStories is empty', plan(undefined, { userStories: `${MARK}[]` }), 'empty', 'userStories is empty', 1],
  // story level
  [
    'story is a string',
    plan([story(), `${MARK}"US-002"`]),
    'type',
    'userStories[1] must be an object, found a string',
    1,
  ],
  [
    'id missing',
    plan([story({ id: undefined }, true)]),
    'missing',
    'userStories[0]: missing required field "id" (a string)',
    1,
  ],
  [
    'title missing',
    plan([story({ title: undefined }, true)]),
    'missing',
    'userStories[0] (US-001): missing required field "title"',
    1,
  ],
  [
    'acceptanceCriteria missing',
    plan([story({ acceptanceCriteria: undefined }, true)]),
    'missing',
    'missing required field "acceptanceCriteria" (an array of strings)',
    1,
  ],
  [
    'priority missing',
    plan([story({ priority: undefined }, true)]),
    'missing',
    'missing required field "priority" (a number)',
    1,
  ],
  [
    'passes missing',
    plan([story({ passes: undefined }, true)]),
    'missing',
    'missing required field "passes" (true or false)',
    1,
  ],
  [
    'passes misspelt',
    plan([story({ passes: undefined, passed: 'false' }, true)]),
    'missing',
    'found "passed", did you mean "passes"?',
    1,
  ],
  [
    'priority in the wrong case',
    plan([story({ priority: undefined, Priority: '1' }, true)]),
    'missing',
    'found "Priority", did you mean "priority"?',
    1,
  ],
  [
    'id is a number',
    plan([story({ id: `${MARK}1` })]),
    'type',
    'userStories[0]: id must be a string, found a number (1)',
    1,
  ],
  ['id is empty', plan([story({ id: `${MARK}""` })]), 'empty', 'userStories[0]: id is empty', 1],
  ['title is empty', plan([story({ title: `${MARK}""` })]), 'empty', 'userStories[0] (US-001): title is empty', 1],
  [
    'acceptanceCriteria is a string',
    plan([story({ acceptanceCriteria: `${MARK}"works"` })]),
    'type',
    'acceptanceCriteria must be an array of strings',
    1,
  ],
  [
    'acceptanceCriteria holds an object',
    plan([story({ acceptanceCriteria: `["a", ${MARK}{}]` })]),
    'type',
    'acceptanceCriteria[1] must be a string, found an object',
    1,
  ],
  [
    'acceptanceCriteria is empty',
    plan([story({ acceptanceCriteria: `${MARK}[]` })]),
    'empty',
    'userStories[0] (US-001): acceptanceCriteria is empty: give the story at least one verifiable criterion',
    1,
  ],
  [
    'acceptanceCriteria holds an empty string',
    plan([story({ acceptanceCriteria: `[${MARK}""]` })]),
    'empty',
    'userStories[0] (US-001): acceptanceCriteria[0] is empty: write a verifiable criterion there or remove the entry',
    1,
  ],
  [
    'acceptanceCriteria holds a blank one after a real one',
    plan([story({ acceptanceCriteria: `["it works", ${MARK}"   "]` })]),
    'empty',
    'acceptanceCriteria[1] is empty',
    1,
  ],
  [
    'priority is a string',
    plan([story({ priority: `${MARK}"high"` })]),
    'type',
    'priority must be a number, found a string ("high")',
    1,
  ],
  ['priority overflows', plan([story({ priority: `${MARK}1e999` })]), 'type', 'priority must be a finite number', 1],
  [
    'passes is a string',
    plan([story({ passes: `${MARK}"true"` })]),
    'type',
    'passes must be true or false, found a string ("true")',
    1,
  ],
  ['passes is null', plan([story({ passes: `${MARK}null` })]), 'type', 'passes must be true or false, found null', 1],
  [
    'notes is not a string',
    plan([story({ notes: `${MARK}["x"]` })]),
    'type',
    'notes must be a string, found an array',
    1,
  ],
  [
    'description is not a string',
    plan([story({ description: `${MARK}42` })]),
    'type',
    'userStories[0] (US-001): description must be a string',
    1,
  ],
  [
    'dependsOn is a string',
    plan([story({ dependsOn: `${MARK}"US-000"` })]),
    'type',
    'dependsOn must be an array of strings, found a string',
    1,
  ],
  [
    'dependsOn holds a number',
    plan([story({ dependsOn: `[${MARK}1]` })]),
    'type',
    'dependsOn[0] must be a string, found a number (1)',
    1,
  ],
  [
    'story checks is a string',
    plan([story({ checks: `${MARK}"npm test"` })]),
    'type',
    'userStories[0] (US-001): checks must be an array of strings',
    1,
  ],
  [
    'story checks holds an empty command',
    plan([story({ checks: `[${MARK}""]` })]),
    'empty',
    'userStories[0] (US-001): checks[0] is empty',
    1,
  ],
  // across stories
  [
    'duplicate id',
    plan([story(), story({ id: `${MARK}"US-001"`, title: '"Two"' })]),
    'duplicate-id',
    'userStories[1]: duplicate id "US-001", already used by userStories[0]',
    1,
  ],
  [
    'unknown dependency',
    plan([story({ dependsOn: `[${MARK}"US-404"]` })]),
    'unknown-dependency',
    'dependsOn names "US-404", which is not the id of any story',
    1,
  ],
  [
    'story depends on itself',
    plan([story({ dependsOn: `[${MARK}"US-001"]` })]),
    'cycle',
    'userStories[0] (US-001): the story depends on itself',
    1,
  ],
  ['two-story cycle', plan([s2('A', `[${MARK}"B"]`), s2('B', '["A"]')]), 'cycle', 'dependency cycle: A -> B -> A', 1],
  [
    'three-story cycle',
    plan([s2('A', '[]'), s2('B', `[${MARK}"D"]`), s2('C', '["B"]'), s2('D', '["C"]')]),
    'cycle',
    'dependency cycle: B -> D -> C -> B',
    1,
  ],
  // document level
  [
    'duplicate key',
    plan([story({ notes: '""', passes: 'false' }).replace('}', `, ${MARK}"passes": true}`)]),
    'duplicate-key',
    'duplicate key "userStories[0].passes"',
    1,
  ],
  ['byte order mark', `${MARK}\uFEFF${plan()}`, 'syntax', 'byte order mark', 1],
  ['syntax error', plan([story({ notes: '""' }).replace('}', `${MARK},}`)]), 'syntax', 'trailing comma', 1],
];

describe('validatePrdText finds each kind of problem', () => {
  it.each(CASES)('%s', (_what, marked, code, message, count) => {
    const { text, line, col } = unmark(marked);
    const { prd, problems } = validatePrdText(text, 'ralph/prd.json');
    expect(prd).toBeUndefined();
    expect(problems).toHaveLength(count);
    expect(problems[0]).toMatchObject({ file: 'ralph/prd.json', line, col, code });
    expect(problems[0].message).toContain(message);
  });
});

describe('validatePrdText reports every problem, in file order', () => {
  it('lists each problem of a plan with many, sorted by position', () => {
    const text = plan(
      [
        story({ priority: '"high"', dependsOn: '["US-003"]' }),
        story({ id: '"US-002"', passes: undefined, dependsOn: '["US-009"]' }),
        story({ id: '"US-003"', dependsOn: '["US-001"]' }),
        story({ title: '"dup"' }),
      ],
      { branchName: '"ralph/bad..name"', checks: '"npm test"' },
    );
    const { problems } = validatePrdText(text, 'p.json');
    expect(problems.map((p) => p.code)).toEqual([
      'branch-name',
      'type',
      'cycle',
      'missing',
      'unknown-dependency',
      'duplicate-id',
      'type',
    ]);
    const lines = problems.map((p) => p.line!);
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });

  it('names one cycle per tangle of stories, not every loop through it', () => {
    const text = plan([
      s2('A', '["B", "C"]'),
      s2('B', '["A", "C"]'),
      s2('C', '["A", "B"]'),
      s2('D', '["E"]'),
      s2('E', '["D"]'),
    ]);
    const cycles = validatePrdText(text, 'p.json').problems.filter((p) => p.code === 'cycle');
    expect(cycles.map((p) => p.message)).toEqual([
      'dependency cycle: A -> B -> A (each depends on the next)',
      'dependency cycle: D -> E -> D (each depends on the next)',
    ]);
  });
});

describe('validatePrdText accepts valid plans', () => {
  it.each([
    ['the smallest plan', plan()],
    [
      'the original Ralph format',
      plan(
        [
          story({ description: '"As a user..."', notes: '""' }),
          story({ id: '"US-002"', passes: 'true', notes: '"done"' }),
        ],
        { project: '"App"', description: '"d"' },
      ),
    ],
    [
      'every optional field',
      plan([story({ dependsOn: '[]', checks: '["npm test -- one"]', notes: '""' }), s2('US-002', '["US-001"]')], {
        baseBranch: '"main"',
        checks: '["npm test"]',
        setup: '"npm ci"',
      }),
    ],
    ['unknown fields (the format is a superset)', plan([story({ estimate: '3', tags: '["ui"]' })], { owner: '"me"' })],
    [
      'non-integer and repeated priorities',
      plan([story({ priority: '1.5' }), story({ id: '"US-002"', priority: '1.5' })]),
    ],
    ['a diamond of dependencies', plan([s2('A', '[]'), s2('B', '["A"]'), s2('C', '["A"]'), s2('D', '["B", "C"]')])],
    ['CRLF line endings', plan().replace(/\n/g, '\r\n')],
  ])('%s', (_what, text) => {
    const result = validatePrdText(text, 'p.json');
    expect(result.problems).toEqual([]);
    expect(result.prd).toEqual(JSON.parse(text));
  });
});

describe('formatPrdProblem', () => {
  it.each([
    [{ file: 'ralph/prd.json', line: 3, col: 7, message: 'm' }, 'ralph/prd.json:3:7: m'],
    [{ file: 'ralph/prd.json', message: 'cannot read' }, 'ralph/prd.json: cannot read'],
  ])('%j → %s', (problem, line) => {
    expect(formatPrdProblem(problem)).toBe(line);
  });
});
