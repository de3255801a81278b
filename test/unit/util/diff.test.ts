import { describe, expect, it } from 'vitest';
import { diffLines, renderUnifiedDiff } from '../../../src/util/diff.js';
import { renderPlanLines } from '../../../src/install/render.js';
import { planInstall } from '../../../src/install/plan.js';

describe('renderUnifiedDiff', () => {
  it('returns nothing for equal texts, also when only line endings differ', () => {
    expect(renderUnifiedDiff('a\nb\n', 'a\nb\n', 'a/x', 'b/x')).toBe('');
    expect(renderUnifiedDiff('a\r\nb\r\n', 'a\nb\n', 'a/x', 'b/x')).toBe('');
  });

  it('splits far-apart changes into hunks with three lines of context, like diff -u', () => {
    const old = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n';
    const neu = 'a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\n';
    expect(renderUnifiedDiff(old, neu, 'a/x', 'b/x')).toMatchInlineSnapshot(`
      "--- a/x
      +++ b/x
      @@ -1,5 +1,5 @@
       a
      -b
      +B
       c
       d
       e
      @@ -8,4 +8,5 @@
       h
       i
       j
      -k
      +K
      +l
      "
    `);
  });

  it.each([
    ['', 'x\ny\n', '@@ -0,0 +1,2 @@'],
    ['x\ny\n', '', '@@ -1,2 +0,0 @@'],
    ['one\n', 'two\n', '@@ -1 +1 @@'],
    ['a\nb\nc\n', 'a\nc\n', '@@ -1,3 +1,2 @@'],
  ])('hunk header for %j → %j is %s', (a, b, header) => {
    expect(renderUnifiedDiff(a, b, 'a', 'b').split('\n')[2]).toBe(header);
  });
});

describe('diffLines', () => {
  // Pseudo-random line lists over a small alphabet: many repeats, the hard case for a diff.
  const lines = (n: number, seed: number) =>
    Array.from({ length: n }, (_, i) => 'abcd'[(seed * 31 + i * i * 7 + seed * i) % 4]);
  const cases = Array.from({ length: 40 }, (_, t) => [lines(t % 13, t), lines((t * 5) % 11, t + 3)] as const);

  it.each(cases)('rebuilds both sides: %j → %j', (a, b) => {
    const ops = diffLines(a, b);
    expect(ops.filter((o) => o.kind !== '+').map((o) => o.line)).toEqual(a);
    expect(ops.filter((o) => o.kind !== '-').map((o) => o.line)).toEqual(b);
  });

  it('finds the shortest edit (one insertion, not a rewrite)', () => {
    const ops = diffLines(['a', 'b', 'c'], ['a', 'x', 'b', 'c']);
    expect(ops.filter((o) => o.kind !== ' ')).toEqual([{ kind: '+', line: 'x' }]);
  });
});

describe('renderPlanLines', () => {
  it('prints one aligned line per file, the backup of an overwrite, and the manifest last', () => {
    const files = [
      { path: 'ralph/ralph.sh', class: 'managed', source: 'ralphkit', sha256: 'n' },
      { path: 'ralph/prd.json', class: 'state', source: 'ralphkit', sha256: 'n' },
      { path: '.claude/skills/prd/SKILL.md', class: 'managed', source: 'ralphkit', sha256: 'n' },
    ] as const;
    const disk = new Map([
      ['ralph/ralph.sh', 'edited'],
      ['ralph/prd.json', 'x'],
      ['.claude/skills/prd/SKILL.md', undefined],
    ]);
    const manifest = { ralphkit: '1', files: { 'ralph/ralph.sh': { sha256: 'old', source: 'ralphkit' as const } } };
    const plan = planInstall(manifest, disk, [...files], { force: true, backupDir: 'ralph/.backup/T', version: '2' });
    const text = renderPlanLines(plan)
      .join('\n')
      .replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).toMatchInlineSnapshot(`
      "  overwrite   ralph/ralph.sh               edited since installed; yours is backed up to ralph/.backup/T/ralph/ralph.sh
        skip-state  ralph/prd.json               state file: yours, never touched
        create      .claude/skills/prd/SKILL.md  new
        update      ralph/.ralphkit.json         manifest: version and hashes of managed files"
    `);
  });
});
