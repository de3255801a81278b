// A plan written again is parsed by its changed story alone (view/plan-splice.ts): whatever the edit, what it gives is
// what JSON.parse gives for the whole new text, or nothing (the full parse then decides).
import { describe, expect, it } from 'vitest';
import { commonPrefix, commonSuffix, spliceParse, storySpans, type ParsedPlan } from '../../../src/view/plan-splice.js';
import { makeLargePlan } from '../../support/large-plan.js';
import { random } from '../../support/random.js';

const parsed = (text: string): ParsedPlan => ({ bytes: Buffer.from(text), value: JSON.parse(text), spans: null });

const layouts: [string, (v: unknown) => string][] = [
  ['pretty', (v) => `${JSON.stringify(v, null, 2)}\n`],
  ['compact', (v) => JSON.stringify(v)],
  ['CRLF and tabs', (v) => JSON.stringify(v, null, '\t').replaceAll('\n', '\r\n')],
];

describe('storySpans', () => {
  it.each(layouts)('finds every story of a %s plan', (_name, write) => {
    const plan = makeLargePlan(30);
    const text = write(plan);
    const bytes = Buffer.from(text);
    const spans = storySpans(bytes)!;
    expect(spans.length).toBe(60);
    for (let k = 0; k < 30; k++)
      expect(JSON.parse(bytes.subarray(spans[2 * k], spans[2 * k + 1]).toString())).toEqual(plan.userStories[k]);
  });

  it('gives up on what it does not read simply', () => {
    expect(storySpans(Buffer.from('[1]'))).toBeNull();
    expect(storySpans(Buffer.from('{"userStories":{}}'))).toBeNull();
    expect(storySpans(Buffer.from('{"userStories":[],"userStories":[]}'))).toBeNull();
    expect(storySpans(Buffer.from('{"user\\u0053tories":[]}'))).toBeNull();
    // Text JSON.parse would refuse ends the scan too (no list end), however the callers use it.
    expect(storySpans(Buffer.from('{"userStories":[1,2'))).toBeNull();
    expect(storySpans(Buffer.from('{"userStories":[1,'))).toBeNull();
    expect(storySpans(Buffer.from('{"a":"}\\"]","userStories":[{"b":"\\\\"},2 , "x"]}'))).toEqual(
      Int32Array.from([27, 37, 38, 39, 42, 45]),
    );
  });
});

describe('commonPrefix and commonSuffix', () => {
  it('count the bytes alike at each end, across blocks', () => {
    const a = Buffer.alloc(10_000, 1);
    const b = Buffer.from(a);
    b[7000] = 2;
    expect(commonPrefix(a, b)).toBe(7000);
    expect(commonSuffix(a, b, 10_000)).toBe(2999);
    expect(commonPrefix(a, a)).toBe(10_000);
    expect(commonSuffix(a, Buffer.alloc(5, 1), 5)).toBe(5);
  });
});

describe('spliceParse', () => {
  it('a plan whose stories are not found simply is not looked through again, read after read', () => {
    const text = JSON.stringify({ 'n\\u0061me': 1, userStories: makeLargePlan(3).userStories });
    const before: ParsedPlan = { bytes: Buffer.from(text), value: JSON.parse(text), spans: null };
    const edited = Buffer.from(text.replace('"passes":false', '"passes":true'));
    expect(spliceParse(before, edited)).toBeNull();
    expect(before.spans).toBe(false);
  });

  const edits: [string, (plan: ReturnType<typeof makeLargePlan>, pick: (n: number) => number) => void][] = [
    ['passes flipped', (p, pick) => void (p.userStories[pick(p.userStories.length)].passes = true)],
    [
      'a title with quotes, backslashes and more',
      (p, pick) => void (p.userStories[pick(40)].title = 'a "b" \\ c } ] é 😀'),
    ],
    ['a key added', (p, pick) => void Object.assign(p.userStories[pick(40)], { skip: true })],
    ['a dependency dropped', (p, pick) => void (p.userStories[1 + pick(39)].dependsOn = [])],
    ['a story added', (p) => void p.userStories.splice(5, 0, { ...p.userStories[0], id: 'NEW' })],
    ['a story removed', (p, pick) => void p.userStories.splice(pick(40), 1)],
    ['two stories changed', (p) => void ((p.userStories[3].passes = true), (p.userStories[30].passes = true))],
    ['the project renamed', (p) => void (p.project = 'Renamed')],
    ['nothing', () => {}],
  ];

  it.each(layouts)('%s: every edit gives what JSON.parse gives, or nothing', (_name, write) => {
    const rnd = random(7);
    const pick = (n: number) => Math.floor(rnd() * n);
    let spliced = 0;
    for (let round = 0; round < 5; round++)
      for (const [what, edit] of edits) {
        const before = makeLargePlan(40);
        const after = makeLargePlan(40);
        edit(after, pick);
        const got = spliceParse(parsed(write(before)), Buffer.from(write(after)));
        if (got === null) continue;
        spliced++;
        expect(got.value, what).toEqual(JSON.parse(write(after)));
        if (got.spans) expect(got.spans, what).toEqual(storySpans(Buffer.from(write(after))));
      }
    expect(spliced).toBeGreaterThanOrEqual(5 * 5); // flips, titles, keys, dependencies, nothing
  });

  it('one story changed: that story alone is parsed, and a chain of edits stays right', () => {
    const plan = makeLargePlan(50);
    let state = parsed(`${JSON.stringify(plan, null, 2)}\n`);
    for (const k of [10, 20, 10, 49, 0]) {
      plan.userStories[k].passes = !plan.userStories[k].passes;
      plan.userStories[k].notes = `flipped at ${k}`;
      const next = spliceParse(state, Buffer.from(`${JSON.stringify(plan, null, 2)}\n`));
      expect(next).not.toBeNull();
      expect(next!.value).toEqual(plan);
      // Every other story is the object parsed before: not parsed again.
      expect(next!.value.userStories.filter((s, i) => s !== state.value.userStories[i])).toHaveLength(1);
      state = next!;
    }
  });

  it('a story made invalid JSON, or the same bytes', () => {
    const text = `${JSON.stringify(makeLargePlan(10), null, 2)}\n`;
    const state = parsed(text);
    expect(spliceParse(state, Buffer.from(text.replace('"passes": true', '"passes": tru')))).toBeNull();
    expect(spliceParse(state, Buffer.from(text))).toBe(state);
  });
});
