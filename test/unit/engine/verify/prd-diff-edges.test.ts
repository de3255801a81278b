// The claim diff on what an adversarial agent can leave in prd.json: null where a plan or a story should be,
// values of the wrong kind, and edits that only look like changes. Each is restored, none crashes the diff.
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
  baseStory(id, { title: id, acceptanceCriteria: ['works'], ...extra });
const BEFORE: Prd = {
  branchName: 'ralph/demo',
  userStories: [story('US-1'), story('US-2', { notes: 'n' }), story('US-3', { passes: true })],
};
const before = JSON.stringify(BEFORE, null, 2);
const withStories = (stories: unknown[], top: Record<string, unknown> = {}) =>
  JSON.stringify({ branchName: 'ralph/demo', ...top, userStories: stories });

describe('planPrdRepair: null and other non-plans', () => {
  it.each([
    ['null', 'null', 'was left without a top-level object'],
    ['a string', '"plan"', 'was left without a top-level object'],
    ['a number', '0', 'was left without a top-level object'],
    ['userStories null', '{"branchName":"ralph/demo","userStories":null}', 'was left without a userStories array'],
    [
      'userStories an object',
      '{"branchName":"ralph/demo","userStories":{"0":{}}}',
      'was left without a userStories array',
    ],
  ])('%s is restored whole', (_name, after, why) => {
    const plan = planPrdRepair(before, after);
    expect(plan).toEqual({
      prd: BEFORE,
      claims: [],
      restored: [`prd.json ${why}; restored the whole file as it was before this iteration`],
      changed: true,
      unusable: true,
    });
  });

  it('a null story in place of one is a story without an id, removed, and the story it replaced restored', () => {
    const plan = planPrdRepair(before, withStories([null, BEFORE.userStories[1], BEFORE.userStories[2]]));
    expect(plan.restored).toEqual([
      'story US-1 was deleted; restored',
      'a story without an id was added at position 1; removed',
    ]);
    expect(plan.prd).toEqual(BEFORE);
    expect(plan).toMatchObject({ claims: [], changed: true, unusable: false });
  });

  it.each([
    ['a number', 7],
    ['a string', 'US-1'],
    ['an array', ['US-1']],
    ['a story whose id is a number', { ...story('x'), id: 1 }],
  ])('an extra story that is %s is removed as one without an id', (_name, extra) => {
    const plan = planPrdRepair(before, withStories([...BEFORE.userStories, extra]));
    expect(plan.restored).toEqual(['a story without an id was added at position 4; removed']);
    expect(plan.prd).toEqual(BEFORE);
  });

  it('keeps the first of two stories with one id, and reports the copy', () => {
    const plan = planPrdRepair(
      before,
      withStories([
        { ...BEFORE.userStories[0], passes: true },
        BEFORE.userStories[1],
        BEFORE.userStories[2],
        { ...BEFORE.userStories[0], notes: 'copy' },
      ]),
    );
    expect(plan.restored).toEqual(['story US-1 was duplicated; the copy was removed']);
    expect(plan.claims).toEqual(['US-1']);
    expect(plan.prd.userStories[0]).toEqual({ ...BEFORE.userStories[0], passes: true });
  });

  it('a story deleted and added back under a new id: both reported, the plan as before', () => {
    const plan = planPrdRepair(
      before,
      withStories([{ ...BEFORE.userStories[0], id: 'US-9' }, BEFORE.userStories[1], BEFORE.userStories[2]]),
    );
    expect(plan.restored).toEqual(['story US-1 was deleted; restored', 'story US-9 was added; removed']);
    expect(plan.prd).toEqual(BEFORE);
  });
});

describe('planPrdRepair: passes and notes', () => {
  it.each([
    ['passes null', { passes: null }, ['story US-1: "passes" was set to a non-boolean; restored'], false],
    ['passes removed', { passes: undefined }, ['story US-1: "passes" was set to a non-boolean; restored'], false],
    ['notes null', { notes: null }, ['story US-1: "notes" was set to a non-string; restored'], false],
    ['notes an empty string', { notes: '' }, [], ''],
  ])('%s on an open story', (_name, change, restored, kept) => {
    const after = withStories([{ ...BEFORE.userStories[0], ...change }, ...BEFORE.userStories.slice(1)]);
    const plan = planPrdRepair(before, after);
    expect(plan.restored).toEqual(restored);
    expect(plan.claims).toEqual([]);
    const first = plan.prd.userStories[0];
    expect(typeof kept === 'string' ? first.notes : first.passes).toBe(kept);
  });

  it('drops notes the agent removed, and keeps notes it left alone', () => {
    const plan = planPrdRepair(
      before,
      withStories([BEFORE.userStories[0], { ...BEFORE.userStories[1], notes: undefined }, BEFORE.userStories[2]]),
    );
    expect(plan.prd.userStories[1]).not.toHaveProperty('notes');
    expect(plan).toMatchObject({ restored: [], changed: false });
  });

  it('a claim alone needs no rewrite; a claim with an undone edit does', () => {
    const claimed = { ...BEFORE.userStories[0], passes: true };
    expect(planPrdRepair(before, withStories([claimed, ...BEFORE.userStories.slice(1)]))).toMatchObject({
      claims: ['US-1'],
      changed: false,
    });
    expect(planPrdRepair(before, withStories([claimed, ...BEFORE.userStories.slice(1)], { extra: 1 }))).toMatchObject({
      claims: ['US-1'],
      changed: true,
      restored: ['top-level field "extra" was added; restored'],
    });
  });

  it('the same bytes answer from the baseline given, without parsing', () => {
    const frozen = Object.freeze(structuredClone(BEFORE));
    expect(planPrdRepair(before, before, 'prd.json', frozen).prd).toBe(frozen);
    expect(planPrdRepair(before, before)).toEqual({
      prd: BEFORE,
      claims: [],
      restored: [],
      changed: false,
      unusable: false,
    });
  });

  it('names the plan prd.json in a syntax error unless told another name', () => {
    expect(planPrdRepair(before, '{').restored[0]).toMatch(/^prd\.json was left unparseable \(prd\.json:1:2: /);
    expect(planPrdRepair(before, '{', 'scripts/ralph/prd.json').restored[0]).toMatch(
      /^prd\.json was left unparseable \(scripts\/ralph\/prd\.json:1:2: /,
    );
  });
});

describe('sameJson and key order', () => {
  it.each([
    [{ b: 1, a: 2 }, { a: 2, b: 1 }, true],
    [{ a: 1, b: 2, c: 3 }, { c: 3, a: 1, b: 2 }, true],
    [{ a: 1 }, { a: 2 }, false],
    [{ a: 1 }, { b: 1 }, false],
    [{ a: [1, { x: 1, y: 2 }] }, { a: [1, { y: 2, x: 1 }] }, true],
    [{ a: [1] }, { a: { 0: 1 } }, false],
    [1, 1, true],
    ['1', 1, false],
    [null, null, true],
    [null, {}, false],
    [{}, null, false],
    [undefined, undefined, true],
    [undefined, null, false],
    ['', undefined, false],
    [[1, 2], [12], false],
    [[1, 2], [1, 2], true],
    [{ b: undefined, a: 1, c: 2 }, { c: 2, a: 1 }, true],
    [{ b: 1, a: 1 }, { a: 1, b: undefined }, false],
    [
      Object.fromEntries('jihgfedcba'.split('').map((k, i) => [k, i])),
      Object.fromEntries('abcdefghij'.split('').map((k) => [k, 'jihgfedcba'.indexOf(k)])),
      true,
    ],
    [{ B: 1, a: 2, _: 3 }, { a: 2, _: 3, B: 1 }, true],
  ])('%j vs %j → %s', (a, b, equal) => {
    expect(sameJson(a, b)).toBe(equal);
    expect(sameJson(b, a)).toBe(equal);
  });

  it('a reformatted plan with keys in another order is unchanged and claims nothing', () => {
    const shuffled = `{"userStories":[${BEFORE.userStories.map((s) => JSON.stringify(Object.fromEntries(Object.entries(s).reverse()))).join(',')}],"branchName":"ralph/demo"}`;
    expect(planPrdRepair(before, shuffled)).toEqual({
      prd: BEFORE,
      claims: [],
      restored: [],
      changed: false,
      unusable: false,
    });
  });
});

describe('dependencies', () => {
  const prd: Prd = {
    branchName: 'b',
    userStories: [
      story('A', { dependsOn: ['A', 'B'] }),
      story('B', { dependsOn: ['C'] }),
      story('C'),
      story('D', { dependsOn: ['US-404', 'C'] }),
    ],
  };

  it('orders a claim after the claims it depends on, ignoring a dependency on itself', () => {
    expect(planClaimOrder(prd, ['A', 'B', 'C'])).toEqual(['C', 'B', 'A']);
    expect(planClaimOrder(prd, ['D', 'C'])).toEqual(['C', 'D']);
    expect(planClaimOrder(prd, [])).toEqual([]);
    const self: Prd = { branchName: 'b', userStories: [story('S', { dependsOn: ['S'] }), story('T')] };
    expect(planClaimOrder(self, ['S', 'T'])).toEqual(['S', 'T']);
  });

  it('a claim or a story the plan does not have waits on nothing', () => {
    expect(planUnmetDependencies(prd, 'nope', ['nope'], new Set())).toEqual([]);
    expect(planClaimOrder(prd, ['nope', 'C'])).toEqual(['nope', 'C']);
  });

  it('waits on the dependencies the plan has, not on ids it does not', () => {
    expect(planUnmetDependencies(prd, 'D', ['D'], new Set())).toEqual(['C']);
    expect(planUnmetDependencies(prd, 'C', ['C'], new Set())).toEqual([]);
  });

  it('a dependency on a passing story is met, on one claimed and accepted too', () => {
    const passing: Prd = {
      branchName: 'b',
      userStories: [story('A', { passes: true }), story('B', { dependsOn: ['A'] })],
    };
    expect(planUnmetDependencies(passing, 'B', ['B'], new Set())).toEqual([]);
    expect(planUnmetDependencies(passing, 'B', ['A', 'B'], new Set())).toEqual(['A']);
    expect(planUnmetDependencies(passing, 'B', ['A', 'B'], new Set(['A']))).toEqual([]);
  });
});

describe('planPrdRepair: keys named like inherited ones', () => {
  it.each(['__proto__', 'constructor', 'toString'])(
    'a "%s" key the agent adds to a story is reported as added, and removed',
    (key) => {
      const after = before.replace('"id": "US-1",', `"id": "US-1",\n      ${JSON.stringify(key)}: {"passes": true},`);
      const plan = planPrdRepair(before, after);
      expect(plan.restored).toEqual([`story US-1: field "${key}" was added; restored`]);
      expect(plan.prd).toEqual(BEFORE);
      expect(Object.hasOwn(plan.prd.userStories[0], key)).toBe(false);
      expect(plan.claims).toEqual([]);
    },
  );
});

describe('planPrdRepair: top-level keys named like inherited ones', () => {
  it.each(['__proto__', 'constructor'])(
    'a top-level "%s" the agent adds is reported as added, and the plan written without it',
    (key) => {
      const after = before.replace(
        '"branchName": "ralph/demo",',
        `"branchName": "ralph/demo",\n  ${JSON.stringify(key)}: {},`,
      );
      const plan = planPrdRepair(before, after);
      expect(plan.restored).toEqual([`top-level field "${key}" was added; restored`]);
      expect(plan.changed).toBe(true);
      expect(Object.hasOwn(plan.prd, key)).toBe(false);
    },
  );
});
