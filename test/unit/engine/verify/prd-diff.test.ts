import { describe, expect, it } from 'vitest';
import {
  planClaimOrder,
  planPrdRepair,
  planUnmetDependencies,
  sameJson,
} from '../../../../src/engine/verify/prd-diff.js';
import type { Prd, Story } from '../../../../src/prd/types.js';
import { story as baseStory } from '../../../support/plan.js';

const story = (id: string, extra: Partial<Story> = {}): Story =>
  baseStory(id, { acceptanceCriteria: [`${id} works`], priority: Number(id.slice(-1)), notes: '', ...extra });

const BEFORE: Prd = {
  project: 'Demo',
  branchName: 'ralph/demo',
  checks: ['npm test'],
  userStories: [
    story('US-1', { checks: ['npm test -- one'] }),
    story('US-2', { dependsOn: ['US-1'] }),
    story('US-3', { passes: true }),
  ],
};

type Edit = (p: Prd) => unknown;
const edit = (f: Edit): string => {
  const p = structuredClone(BEFORE) as Prd;
  f(p);
  return JSON.stringify(p, null, 2);
};
const before = JSON.stringify(BEFORE, null, 2);

describe('planPrdRepair: what the agent may change', () => {
  it.each<[string, Edit, string[]]>([
    ['nothing', () => {}, []],
    ['flips one story', (p) => (p.userStories[0].passes = true), ['US-1']],
    ['flips two stories', (p) => p.userStories.slice(0, 2).forEach((s) => (s.passes = true)), ['US-1', 'US-2']],
    ['re-flips an already passing story (not a claim)', (p) => (p.userStories[2].passes = true), []],
    ['unflips a passing story', (p) => (p.userStories[2].passes = false), []],
    ['writes notes only', (p) => (p.userStories[1].notes = 'halfway there'), []],
    ['removes the notes field', (p) => delete p.userStories[1].notes, []],
  ])('%s → claims %j, nothing restored', (_name, f, claims) => {
    const plan = planPrdRepair(before, edit(f));
    expect(plan.claims).toEqual(claims);
    expect(plan.restored).toEqual([]);
    expect(plan.changed).toBe(false);
  });

  it("keeps the agent's passes and notes in the repaired plan", () => {
    const plan = planPrdRepair(
      before,
      edit((p) => Object.assign(p.userStories[0], { passes: true, notes: 'done, see commit' })),
    );
    expect(plan.prd.userStories[0]).toMatchObject({ id: 'US-1', passes: true, notes: 'done, see commit' });
  });

  it('treats a reformatted file with keys in another order as unchanged', () => {
    const shuffled = {
      userStories: BEFORE.userStories.map((s) => Object.fromEntries(Object.entries(s).reverse())),
      checks: BEFORE.checks,
      branchName: BEFORE.branchName,
      project: BEFORE.project,
    };
    const plan = planPrdRepair(before, JSON.stringify(shuffled));
    expect(plan).toMatchObject({ claims: [], restored: [], changed: false });
  });
});

describe('planPrdRepair: edits that are undone', () => {
  it.each<[string, Edit, string[], string[]]>([
    ['deletes a story', (p) => p.userStories.splice(1, 1), ['story US-2 was deleted; restored'], []],
    ['adds a story', (p) => p.userStories.push(story('US-9')), ['story US-9 was added; removed'], []],
    [
      'adds a story without an id',
      (p) => p.userStories.push({ title: 'x' } as Story),
      ['a story without an id was added at position 4; removed'],
      [],
    ],
    [
      'duplicates a story',
      (p) => p.userStories.push(structuredClone(p.userStories[0])),
      ['story US-1 was duplicated; the copy was removed'],
      [],
    ],
    ['reorders stories', (p) => p.userStories.reverse(), ['the order of stories was changed; restored'], []],
    [
      'edits a title',
      (p) => (p.userStories[0].title = 'Easier story'),
      ['story US-1: field "title" was changed; restored'],
      [],
    ],
    [
      'edits acceptance criteria and claims',
      (p) => Object.assign(p.userStories[0], { acceptanceCriteria: [], passes: true }),
      ['story US-1: field "acceptanceCriteria" was changed; restored'],
      ['US-1'],
    ],
    [
      "drops a story's checks",
      (p) => delete p.userStories[0].checks,
      ['story US-1: field "checks" was removed; restored'],
      [],
    ],
    [
      'adds a field to a story',
      (p) => (p.userStories[1].skip = true),
      ['story US-2: field "skip" was added; restored'],
      [],
    ],
    [
      'changes priority',
      (p) => (p.userStories[1].priority = 99),
      ['story US-2: field "priority" was changed; restored'],
      [],
    ],
    [
      'edits dependsOn',
      (p) => (p.userStories[1].dependsOn = []),
      ['story US-2: field "dependsOn" was changed; restored'],
      [],
    ],
    ["empties the plan's checks", (p) => (p.checks = []), ['top-level field "checks" was changed; restored'], []],
    ["deletes the plan's checks", (p) => delete p.checks, ['top-level field "checks" was removed; restored'], []],
    ['renames the branch', (p) => (p.branchName = 'main'), ['top-level field "branchName" was changed; restored'], []],
    ['adds a top-level field', (p) => (p.done = true), ['top-level field "done" was added; restored'], []],
    [
      'sets passes to a string',
      (p) => ((p.userStories[0] as Record<string, unknown>).passes = 'true'),
      ['story US-1: "passes" was set to a non-boolean; restored'],
      [],
    ],
    [
      'sets notes to a number',
      (p) => ((p.userStories[0] as Record<string, unknown>).notes = 3),
      ['story US-1: "notes" was set to a non-string; restored'],
      [],
    ],
  ])('%s', (_name, f, restored, claims) => {
    const plan = planPrdRepair(before, edit(f));
    expect(plan.restored).toEqual(restored);
    expect(plan.claims).toEqual(claims);
    expect(plan.changed).toBe(true);
    // whatever was undone, the plan's structure is the one from before
    const strip = (p: Prd) => ({ ...p, userStories: p.userStories.map(({ passes: _p, notes: _n, ...rest }) => rest) });
    expect(sameJson(strip(plan.prd), strip(BEFORE))).toBe(true);
  });

  it("keeps the agent's claim on a story whose title it also edited", () => {
    const plan = planPrdRepair(
      before,
      edit((p) => Object.assign(p.userStories[1], { title: 'Mine now', passes: true, notes: 'did it' })),
    );
    expect(plan.prd.userStories[1]).toMatchObject({ title: 'Story US-2', passes: true, notes: 'did it' });
  });
});

describe('planPrdRepair: an unusable file', () => {
  it.each([
    ['truncated JSON', before.slice(0, 40), /prd\.json was left unparseable \(.+\); restored the whole file/],
    ['empty file', '', /unparseable/],
    ['an array', '[]', /without a top-level object/],
    ['no userStories', '{"branchName":"x"}', /without a userStories array/],
    ['the file deleted (git rm)', null, /^prd\.json was deleted; restored the whole file/],
  ])('%s → whole previous plan restored', (_name, after: string | null, message) => {
    const plan = planPrdRepair(before, after);
    expect(plan).toMatchObject({ claims: [], changed: true, unusable: true });
    expect(plan.restored).toHaveLength(1);
    expect(plan.restored[0]).toMatch(message);
    expect(plan.prd).toEqual(BEFORE);
  });
});

describe('planPrdRepair: where a syntax error is', () => {
  it.each([
    ['a missing comma', '{\n  "branchName": "x"\n  "userStories": []\n}\n', 'ralph/prd.json:3:3: '],
    ['a trailing comma', '{\n  "branchName": "x",\n  "userStories": [],\n}\n', 'ralph/prd.json:3:20: trailing comma'],
    ['a truncated file', '{\n  "branchName": "x",\n  "userStories": [\n', 'ralph/prd.json:4:1: '],
  ])('%s is reported as file:line:col, not as a character offset', (_name, after, where) => {
    const [message] = planPrdRepair(before, after, 'ralph/prd.json').restored;
    expect(message.startsWith(`prd.json was left unparseable (${where}`)).toBe(true);
    expect(message).not.toMatch(/position \d/);
  });
});

describe('planClaimOrder', () => {
  const chain = (deps: Record<string, string[]>): Prd => ({
    branchName: 'b',
    userStories: Object.keys(deps).map((id) => story(id, { dependsOn: deps[id] })),
  });
  it.each<[string, Record<string, string[]>, string[], string[]]>([
    ['plan order without dependencies', { 'US-1': [], 'US-2': [] }, ['US-1', 'US-2'], ['US-1', 'US-2']],
    ['a dependency listed later comes first', { 'US-2': ['US-1'], 'US-1': [] }, ['US-2', 'US-1'], ['US-1', 'US-2']],
    [
      'a chain, reversed in the plan',
      { 'US-3': ['US-2'], 'US-2': ['US-1'], 'US-1': [] },
      ['US-3', 'US-2', 'US-1'],
      ['US-1', 'US-2', 'US-3'],
    ],
    [
      'a dependency that is not claimed does not reorder',
      { 'US-2': ['US-9'], 'US-1': [] },
      ['US-2', 'US-1'],
      ['US-2', 'US-1'],
    ],
    ['a cycle keeps plan order', { 'US-1': ['US-2'], 'US-2': ['US-1'] }, ['US-1', 'US-2'], ['US-1', 'US-2']],
  ])('%s', (_name, deps, claims, order) => {
    expect(planClaimOrder(chain(deps), claims)).toEqual(order);
  });
});

describe('planUnmetDependencies', () => {
  const prd: Prd = {
    branchName: 'b',
    userStories: [
      story('US-1', { passes: true }),
      story('US-2'),
      story('US-3', { dependsOn: ['US-1', 'US-2'] }),
      story('US-4', { dependsOn: ['US-9'] }),
    ],
  };
  it.each<[string, string, string[], string[], string[]]>([
    ['a dependency that does not pass', 'US-3', ['US-3'], [], ['US-2']],
    ['a dependency claimed and accepted this iteration', 'US-3', ['US-2', 'US-3'], ['US-2'], []],
    ['a dependency claimed but rejected this iteration', 'US-3', ['US-2', 'US-3'], [], ['US-2']],
    ['an id the plan does not have (validate refuses it at start)', 'US-4', ['US-4'], [], []],
    ['no dependencies', 'US-2', ['US-2'], [], []],
  ])('%s', (_name, id, claims, accepted, unmet) => {
    expect(planUnmetDependencies(prd, id, claims, new Set(accepted))).toEqual(unmet);
  });
});

describe('sameJson', () => {
  it.each([
    [{ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, true],
    [[1, 2], [2, 1], false],
    [{ a: '1' }, { a: 1 }, false],
    [null, undefined, false],
  ])('%j vs %j → %s', (a, b, equal) => {
    expect(sameJson(a, b)).toBe(equal);
  });
});
