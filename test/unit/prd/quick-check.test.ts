// validatePrdText answers a clean plan from JSON.parse (quick-check.ts) and runs the position parser only when
// there may be a problem. Whichever way it goes, the answer must be the one the position parser alone gives:
// these tests compare the two on many small plans, each broken (or not) in one of the ways a plan can be.
import { describe, expect, it } from 'vitest';
import { countChar, countColons, quickCheckPlan } from '../../../src/prd/quick-check.js';
import { validatePrdText, validateWithPositions } from '../../../src/prd/validate.js';
import { makeLargePlanText } from '../../support/large-plan.js';
import { random } from '../../support/random.js';

type Json = Record<string, any>;

function basePlan(rnd: () => number): Json {
  const n = 3 + Math.floor(rnd() * 12);
  const userStories = Array.from({ length: n }, (_, i) => ({
    id: `US-${i + 1}`,
    title: `Story ${i + 1}: part ${i}`,
    ...(rnd() < 0.5 ? { description: 'As a user: "quoted" \\ and a tab\t' } : {}),
    acceptanceCriteria: ['works', 'Typecheck passes'],
    priority: i + 1,
    passes: rnd() < 0.5,
    ...(rnd() < 0.5 ? { notes: '' } : {}),
    dependsOn: i > 0 && rnd() < 0.7 ? [`US-${i}`] : [],
    ...(rnd() < 0.3 ? { checks: [`npm test -- ${i}`] } : {}),
    ...(rnd() < 0.2 ? { mayChange: ['src/**'] } : {}),
  }));
  return {
    project: 'P',
    branchName: 'ralph/p',
    ...(rnd() < 0.5 ? { baseBranch: 'main' } : {}),
    checks: ['npm test'],
    userStories,
  };
}

// Besides the odd values: what the full check warns about (the skip spellings, control and bidi characters).
const STRANGE_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  '',
  ' ',
  '\t',
  '\u00a0',
  '\u3000',
  '\ufeff',
  'x',
  ' x ',
  true,
  false,
  [],
  [''],
  [' '],
  ['a', 2],
  [null],
  {},
  { a: 1 },
  'cancelled',
  'skipped',
  'Skipped',
  'US\u202e1',
  'a\u0007b',
  'x\u2069',
  '\u0085',
];
// Besides the fields: keys that get "did you mean" (aliases, other spellings) and keys that must not.
const PLAN_KEYS = [
  'project',
  'branchName',
  'baseBranch',
  'description',
  'checks',
  'setup',
  'protect',
  'protectDefaults',
  'userStories',
  'extra',
  'stories',
  'user_stories',
  'Checks',
];
const STORY_KEYS = [
  'id',
  'title',
  'description',
  'acceptanceCriteria',
  'priority',
  'passes',
  'notes',
  'dependsOn',
  'checks',
  'mayChange',
  'extra',
  'skip',
  'dependencies',
  'blockedBy',
  'depends_on',
  'status',
  'acceptance_criteria',
];

const WARNED: Json[] = [
  { passes: 'cancelled' },
  { passes: 'skipped' },
  { skip: true },
  { skip: false },
  { title: 'Fix \u202eevil' },
  { id: 'US\u20661' },
  { title: 'tab\there' },
  { dependencies: [] },
  { blockedBy: ['US-1'] },
  { depends_on: [] },
  { status: 'todo' },
  { Notes: 'x' },
];

/** One change to the plan's value: a field set to an odd value or dropped, a dependency moved, an id reused. */
function mutateValue(plan: Json, rnd: () => number): void {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)];
  const stories: Json[] = plan.userStories;
  if (!Array.isArray(stories) || stories.length === 0 || !stories.every((s) => s && typeof s === 'object')) return; // an earlier change took them away
  const story = pick(stories);
  const r = rnd();
  if (r < 0.25) story[pick(STORY_KEYS)] = pick(STRANGE_VALUES);
  else if (r < 0.35) delete story[pick(STORY_KEYS)];
  else if (r < 0.42) plan[pick(PLAN_KEYS)] = pick(STRANGE_VALUES);
  else if (r < 0.47) delete plan[pick(PLAN_KEYS)];
  else if (r < 0.52)
    story.dependsOn = [pick(stories).id]; // maybe itself, maybe later: a cycle or a forward edge
  else if (r < 0.57) story.dependsOn = ['GHOST'];
  else if (r < 0.62) story.id = pick(stories).id;
  else if (r < 0.7)
    plan[pick(['branchName', 'baseBranch'])] = pick([
      'a..b',
      '',
      '-x',
      'HEAD',
      'a b',
      'x.lock',
      'ok/name',
      'a/',
      'feature/ü',
    ]);
  else if (r < 0.74)
    stories[0].dependsOn = [stories[stories.length - 1].id]; // closes a long cycle when the chain is whole
  else if (r < 0.78) story.__proto__extra = { 'a:b': 'c:d', nested: [[[]]] };
  else if (r < 0.82) plan.userStories = rnd() < 0.5 ? [] : 'none';
  else if (r < 0.86)
    story.priority = 'Infinity'; // replaced by the number below, in the text
  else if (r < 0.93) Object.assign(story, pick(WARNED)); // valid, with a warning (or, for some, without)
  // else: left as it is
}

/** One change to the text: a duplicate key, a BOM, an escape, a syntax slip, a number JSON.parse reads as Infinity. */
function mutateText(text: string, rnd: () => number): string {
  const r = rnd();
  const at = text.indexOf('"title"', Math.floor(rnd() * text.length * 0.8));
  if (r < 0.15 && at >= 0) return `${text.slice(0, at)}"title": "again",${text.slice(at)}`;
  if (r < 0.2 && at >= 0) return `${text.slice(0, at)}"na\\u003ame": "x", "na:me": "y", "title": "z",${text.slice(at)}`;
  if (r < 0.25 && at >= 0) return `${text.slice(0, at)}"tricky\\\\": "\\\\\\"", "x\\"y": "a:b",${text.slice(at)}`;
  if (r < 0.28) return `\ufeff${text}`;
  if (r < 0.31) return text.replace(/\]/, ',]');
  if (r < 0.34) return text.replace('"Infinity"', '1e999');
  if (r < 0.37) return text.replace('"project"', '"project": "dup", "project"');
  if (r < 0.4) return text.slice(0, Math.floor(text.length * rnd()));
  if (r < 0.43 && at >= 0) return `${text.slice(0, at)}"__proto__": {"id": 1},${text.slice(at)}`;
  return text;
}

function nested(depth: number, inner: string): string {
  return `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
}

describe("the quick answer is the position parser's answer", () => {
  it('on 1,500 small plans, each changed in one random way (or two, or none)', () => {
    const rnd = random(12);
    let quick = 0;
    let warned = 0;
    for (let k = 0; k < 1500; k++) {
      const plan = basePlan(rnd);
      const changes = Math.floor(rnd() * 3);
      for (let c = 0; c < changes; c++) mutateValue(plan, rnd);
      let text = JSON.stringify(plan, null, rnd() < 0.5 ? 2 : undefined);
      if (rnd() < 0.4) text = mutateText(text, rnd);
      const fast = validatePrdText(text, 'prd.json');
      const slow = validateWithPositions(text, 'prd.json');
      expect(fast, text).toEqual(slow);
      if (quickCheckPlan(text)) quick++;
      if (slow.prd && slow.warnings.length) warned++;
    }
    // Both kinds were met: plans the quick path answered, and plans it handed on; and valid plans with warnings.
    expect(quick).toBeGreaterThan(200);
    expect(quick).toBeLessThan(1300);
    expect(warned).toBeGreaterThan(15);
  });

  it.each([
    [
      'a duplicate key',
      '{"branchName": "a", "branchName": "b", "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}',
    ],
    [
      'a duplicate key next to a \\u escaped colon',
      '{"branchName": "a", "k": "\\u003a", "userStories": [{"id": "A", "id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}',
    ],
    [
      'a duplicate key whose name holds a colon',
      '{"branchName": "a", "a:b": 1, "a:b": 2, "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}',
    ],
    [
      'a priority JSON.parse reads as Infinity',
      '{"branchName": "a", "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1e999, "passes": false}]}',
    ],
    [
      'a forward dependency with no cycle',
      '{"branchName": "a", "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false, "dependsOn": ["B"]}, {"id": "B", "title": "t", "acceptanceCriteria": ["c"], "priority": 2, "passes": false}]}',
    ],
    [
      'a self-dependency',
      '{"branchName": "a", "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false, "dependsOn": ["A"]}]}',
    ],
    [
      'a blank in a non-ASCII space',
      '{"branchName": "a", "userStories": [{"id": "A", "title": "\u3000", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}',
    ],
    [
      'a story called __proto__',
      '{"branchName": "a", "userStories": [{"id": "__proto__", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false, "__proto__": 1}]}',
    ],
    [
      '499 levels deep',
      `{"branchName": "a", "x": ${nested(498, '1')}, "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}`,
    ],
    [
      '500 levels deep',
      `{"branchName": "a", "x": ${nested(499, '1')}, "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}`,
    ],
    [
      '500 levels deep, empty inside',
      `{"branchName": "a", "x": ${nested(500, '')}, "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}`,
    ],
    [
      '501 levels deep',
      `{"branchName": "a", "x": ${nested(500, '1')}, "userStories": [{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}]}`,
    ],
    ['20,000 levels deep', `{"branchName": "a", "x": ${nested(20_000, '')}, "userStories": []}`],
  ])('%s', (_name, text) => {
    expect(validatePrdText(text, 'prd.json')).toEqual(validateWithPositions(text, 'prd.json'));
  });
});

describe('the pieces of the quick check', () => {
  it('counts the colons outside strings, whatever the escapes', () => {
    expect(countColons('{"a:b": "c\\":d", "e\\\\": {"f": ":"}}')).toBe(3);
    expect(countColons('[":", "\\\\", ":"]')).toBe(0);
  });

  it('counts a character, anywhere', () => {
    expect(countChar('a:b::', ':')).toBe(3);
    expect(countChar('', ':')).toBe(0);
  });

  it('answers for itself only what it has tallied and measured', () => {
    const story = '{"id": "A", "title": "t", "acceptanceCriteria": ["c"], "priority": 1, "passes": false}';
    const plan = (extra: string) =>
      `{"branchName": "a", ${extra}, "userStories": [${story.replace('"id"', `${extra}, "id"`)}]}`;
    expect(quickCheckPlan(plan('"x:y": {"a:b": ["c:d", {"e": ":"}]}'))).toBeDefined();
    expect(quickCheckPlan(plan('"x:y": {"a:b": ["c:d", {"e": ":", "e": ":"}]}'))).toBeUndefined(); // a duplicate deep in an extra field
    expect(quickCheckPlan(plan('"k": "\\u003a", "k2": "\\u003a"'))).toBeDefined(); // escapes: counted from the text
    // Under a story, an extra field starts at depth 3: 497 arrays put the 1 at depth 500, 498 at 501, one too deep.
    expect(quickCheckPlan(plan(`"deep": ${nested(497, '1')}`))).toBeDefined();
    expect(quickCheckPlan(plan(`"deep": ${nested(498, '1')}`))).toBeUndefined();
    expect(validateWithPositions(plan(`"deep": ${nested(498, '1')}`), 'prd.json').problems[0].message).toBe(
      'nested more than 500 levels deep',
    );
  });

  it('answers a 5,000-story plan without the position parser, and it is the plan written', () => {
    const text = makeLargePlanText(5000);
    const quick = quickCheckPlan(text);
    expect(quick).toEqual(JSON.parse(text));
    expect(validatePrdText(text, 'prd.json')).toEqual(validateWithPositions(text, 'prd.json'));
  });
});
