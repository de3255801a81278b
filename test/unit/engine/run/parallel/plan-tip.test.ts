// The sealed tip of a --parallel run's plan branch (run/parallel/plan-tip.ts): written before each move of the
// runner's own, read back by a resume, and where a resume may find the branch.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  readTipSeal,
  tipAccepted,
  tipSealPath,
  writeTipSeal,
  type TipSeal,
} from '../../../../../src/engine/run/parallel/plan-tip.js';
import { testdir } from '../../../../support/repo.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const OWN = ['ralph/prd.json', 'ralph/progress.txt'];
const seal = (fields: Partial<TipSeal> = {}): TipSeal => ({
  tip: B,
  previous: A,
  pending: false,
  ended: false,
  ...fields,
});

describe('writeTipSeal / readTipSeal', () => {
  it('reads back what was written under the same key; a changed file or another key does not check out', () => {
    const root = testdir();
    const key = randomBytes(32);
    expect(readTipSeal(root, 'L1', key)).toEqual({ kind: 'none' });
    expect(tipSealPath(root, 'L1')).toBe(`${root}/ralph/.runs/L1/plan-tip.json`);
    writeTipSeal(root, 'L1', seal({ pending: true }), key);
    expect(readTipSeal(root, 'L1', key)).toEqual({ kind: 'ok', seal: seal({ pending: true }) });
    expect(readTipSeal(root, 'L1', randomBytes(32)).kind).toBe('broken');
    // Another loop's name, and each field changed by hand, break the seal.
    expect(readTipSeal(root, 'L2', key).kind).toBe('none');
    const file = tipSealPath(root, 'L1');
    const text = readFileSync(file, 'utf8');
    for (const [from, to] of [
      [`"tip": "${B}"`, `"tip": "${C}"`],
      [`"previous": "${A}"`, `"previous": "${C}"`],
      ['"pending": true', '"pending": false'],
      ['"ended": false', '"ended": true'],
    ]) {
      writeFileSync(file, text.replace(from, to));
      expect(readTipSeal(root, 'L1', key), `${from} -> ${to}`).toMatchObject({ kind: 'broken' });
    }
    for (const bad of ['not json', '{}', text.replace(`"tip": "${B}"`, '"tip": "HEAD"')]) {
      writeFileSync(file, bad);
      expect(readTipSeal(root, 'L1', key).kind).toBe('broken');
    }
  });

  it('without a key the file is taken as written, if it has the shape the runner writes', () => {
    const root = testdir();
    writeTipSeal(root, 'L1', seal({ ended: true }), null);
    expect(readTipSeal(root, 'L1', null)).toEqual({ kind: 'ok', seal: seal({ ended: true }) });
    const file = tipSealPath(root, 'L1');
    const good = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const sha256 = 'd'.repeat(64);
    writeFileSync(file, JSON.stringify({ ...good, tip: sha256 }));
    expect(readTipSeal(root, 'L1', null)).toMatchObject({ kind: 'ok', seal: { tip: sha256 } });
    for (const [field, value] of [
      ['ralphkit', 2],
      ['loop', 'L2'],
      ['tip', 'HEAD'],
      ['tip', `${A}\n`],
      ['tip', ` ${A}`],
      ['tip', 'a'.repeat(50)],
      ['tip', 'A'.repeat(40)],
      ['previous', null],
      ['pending', 'yes'],
      ['ended', 1],
    ] as const) {
      writeFileSync(file, JSON.stringify({ ...good, [field]: value }));
      expect(readTipSeal(root, 'L1', null), `${field}: ${JSON.stringify(value)}`).toMatchObject({
        kind: 'broken',
        problem: "the seal of its plan branch's tip in ralph/.runs/L1/plan-tip.json does not check out",
      });
    }
    writeFileSync(file, 'null');
    expect(readTipSeal(root, 'L1', null).kind).toBe('broken');
  });
});

describe('tipAccepted', () => {
  it('the sealed tip, or the one before it (a runner killed between the seal and the move)', () => {
    expect(tipAccepted(seal(), B, null, OWN)).toBe(true);
    expect(tipAccepted(seal(), A, null, OWN)).toBe(true);
    expect(tipAccepted(seal(), C, null, OWN)).toBe(false);
    expect(tipAccepted(seal(), null, null, OWN)).toBe(false);
  });

  it("with a runner's commit under way: a child of the tip that changes only the runner's own files", () => {
    expect(tipAccepted(seal({ pending: true }), C, ['ralph/prd.json'], OWN)).toBe(true);
    expect(tipAccepted(seal({ pending: true }), C, ['ralph/prd.json', 'src/x.ts'], OWN)).toBe(false);
    // Not a child of the sealed tip.
    expect(tipAccepted(seal({ pending: true }), C, null, OWN)).toBe(false);
    // No commit under way: a child is not the runner's.
    expect(tipAccepted(seal(), C, ['ralph/prd.json'], OWN)).toBe(false);
  });

  it('anywhere once the run ended: the branch is then yours to commit a fix on', () => {
    expect(tipAccepted(seal({ ended: true }), C, null, OWN)).toBe(true);
  });
});
