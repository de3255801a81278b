import { describe, expect, it } from 'vitest';
import { storyIdNeedsEscaping, storyRefPart } from '../../../src/prd/story-ref.js';
import { branchNameProblem } from '../../../src/prd/branch-name.js';
import { NASTY_STORY_IDS } from '../../support/story-ids.js';

/** The encoding read back: "+XX" bytes decoded (a cut part, "+h<hash>", does not read back). */
function decode(part: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < part.length; i++) {
    if (part[i] === '+') {
      bytes.push(parseInt(part.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(part.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

describe('storyRefPart', () => {
  it.each([
    ['US-1', 'US-1'],
    ['US.6', 'US.6'],
    ['fix_2', 'fix_2'],
    ['US 1', 'US+201'],
    ['US+201', 'US+2B201'],
    ['US..6', 'US+2E.6'],
    ['x.lock', 'x+2Elock'],
    ['../x', '+2E+2E+2Fx'],
    ['.hidden', '+2Ehidden'],
    ['trail.', 'trail+2E'],
    ['a/b', 'a+2Fb'],
    ['ü', '+C3+BC'],
    ['$(touch pwned)', '+24+28touch+20pwned+29'],
    ['', '+'],
  ])('%j → %j', (id, part) => {
    expect(storyRefPart(id)).toBe(part);
  });

  it('ordinary ids are themselves; others are escaped, and validate can tell which', () => {
    expect(['US-1', 'US.6', 'story_12'].map(storyIdNeedsEscaping)).toEqual([false, false, false]);
    expect(['US 1', 'US..6', 'x.lock', '../x'].map(storyIdNeedsEscaping)).toEqual([true, true, true, true]);
  });

  it('different ids never share a part, and a part reads back to its id', () => {
    const parts = new Map<string, string>();
    for (const id of NASTY_STORY_IDS) {
      const part = storyRefPart(id);
      expect(
        parts.get(part),
        `${JSON.stringify(id)} and ${JSON.stringify(parts.get(part))} share ${part}`,
      ).toBeUndefined();
      parts.set(part, id);
      if (!part.includes('+h') && id !== '') expect(decode(part)).toBe(id);
    }
  });

  it('a long id is cut with a hash of the whole id: at most 74 characters, still different from its neighbours', () => {
    const a = storyRefPart(`${'a'.repeat(100)}1`);
    const b = storyRefPart(`${'a'.repeat(100)}2`);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^a{60}\+h[0-9a-f]{12}$/);
    expect(storyRefPart('é'.repeat(40))).toMatch(/^(\+C3\+A9){10}\+h[0-9a-f]{12}$/);
  });

  it.each([
    ['80 characters stay whole', 'a'.repeat(80), /^a{80}$/],
    ['81 are cut', 'a'.repeat(81), /^a{60}\+h[0-9a-f]{12}$/],
    ['a cut inside an escape drops the broken escape', `${'a'.repeat(58)}${'é'.repeat(10)}`, /^a{58}\+h[0-9a-f]{12}$/],
    ['a cut right after a whole escape keeps it', `${'a'.repeat(57)}${'é'.repeat(10)}`, /^a{57}\+C3\+h[0-9a-f]{12}$/],
    [
      'a cut after a kept "." drops only that last "."',
      `a.b${'a'.repeat(56)}.${'c'.repeat(30)}`,
      /^a\.ba{56}\+h[0-9a-f]{12}$/,
    ],
  ])('cut at the limit: %s', (_, id, part) => {
    expect(storyRefPart(id)).toMatch(part);
  });

  it.each(NASTY_STORY_IDS.map((id) => [id]))('%j makes a valid branch name after "ralph/demo--"', (id) => {
    expect(branchNameProblem(`ralph/demo--${storyRefPart(id)}`)).toBeUndefined();
  });
});
