// The runner's own files around the checks (verify/held-files.ts): what a check changed is put back, bytes, mode and
// presence, and only what it changed; what was never read is never written.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeldFiles } from '../../../../src/engine/verify/held-files.js';
import { testdir } from '../../../support/repo.js';

const mode = (file: string) => statSync(file).mode & 0o7777;

describe('HeldFiles', () => {
  it('puts back a rewritten file and an emptied one, and names only those', () => {
    const dir = testdir();
    const [plan, log, other] = ['prd.json', 'progress.txt', 'other.txt'].map((f) => path.join(dir, f));
    writeFileSync(plan, '{"a":1}\n');
    writeFileSync(log, 'line 1\n');
    writeFileSync(other, 'x');
    const held = new HeldFiles();
    held.hold([plan, log, other]);
    writeFileSync(plan, '{"a":2}\n');
    writeFileSync(log, '');
    expect(held.restore()).toEqual([plan, log]);
    expect(readFileSync(plan, 'utf8')).toBe('{"a":1}\n');
    expect(readFileSync(log, 'utf8')).toBe('line 1\n');
    expect(readFileSync(other, 'utf8')).toBe('x');
  });

  it('keeps the first reading when held twice, and restores each file once', () => {
    const dir = testdir();
    const plan = path.join(dir, 'prd.json');
    writeFileSync(plan, 'first');
    const held = new HeldFiles();
    held.hold([plan]);
    writeFileSync(plan, 'second');
    held.hold([plan]);
    expect(held.restore()).toEqual([plan]);
    expect(readFileSync(plan, 'utf8')).toBe('first');
    writeFileSync(plan, 'third');
    expect(held.restore()).toEqual([]);
    expect(readFileSync(plan, 'utf8')).toBe('third');
  });

  it('removes a file that did not exist before, recreates one that was removed, and puts back a changed mode', () => {
    const dir = testdir();
    const [created, removed, chmodded] = ['new.txt', 'gone.txt', 'mode.txt'].map((f) => path.join(dir, f));
    writeFileSync(removed, 'keep me');
    chmodSync(removed, 0o600);
    writeFileSync(chmodded, 'same');
    chmodSync(chmodded, 0o640);
    const held = new HeldFiles();
    held.hold([created, removed, chmodded]);
    writeFileSync(created, 'planted');
    writeFileSync(path.join(dir, 'unrelated'), '');
    chmodSync(chmodded, 0o777);
    unlinkSync(removed);
    expect(held.restore().sort()).toEqual([created, removed, chmodded].sort());
    expect(existsSync(created)).toBe(false);
    expect(readFileSync(removed, 'utf8')).toBe('keep me');
    expect(mode(removed)).toBe(0o600);
    expect(mode(chmodded)).toBe(0o640);
  });

  it("changes nothing when nothing changed, and passes each restore through the caller's writer", () => {
    const dir = testdir();
    const plan = path.join(dir, 'prd.json');
    writeFileSync(plan, 'same');
    const held = new HeldFiles();
    held.hold([plan]);
    const before = statSync(plan).ino;
    expect(
      held.restore(() => {
        throw new Error('must not write');
      }),
    ).toEqual([]);
    expect(statSync(plan).ino).toBe(before);
    held.hold([plan]);
    writeFileSync(plan, 'changed');
    const seen: string[] = [];
    expect(() =>
      held.restore((file) => {
        seen.push(file);
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(seen).toEqual([plan]);
  });
});

describe('HeldFiles with a symlinked plan', () => {
  it('puts the target back and leaves the link a link', () => {
    const dir = testdir();
    const target = path.join(dir, 'plans', 'real.json');
    const link = path.join(dir, 'prd.json');
    mkdirSync(path.dirname(target));
    writeFileSync(target, 'before');
    symlinkSync(target, link);
    const held = new HeldFiles();
    held.hold([link]);
    writeFileSync(link, 'written through the link');
    expect(held.restore()).toEqual([target]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('before');
  });
});
