// The plan branch's own files in a --parallel run (run/parallel/plan-log.ts): the union merge of the workers' logs
// (real git merge-file) and a story's outcome in the plan.
import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import type { Prd } from '../../../../../src/prd/types.js';
import { mergeLogs, planWithOutcome, renderSentBack } from '../../../../../src/engine/run/parallel/plan-log.js';

const base = '# Progress\n## Codebase Patterns\n- use pnpm\n\n## entry 0\n';

describe('mergeLogs', () => {
  it('keeps what both sides added since the base, ours first', async () => {
    const ours = `${base}## A\n- a\n`;
    const theirs = `${base}## B\n- b\n`;
    expect(await mergeLogs(tmpdir(), ours, base, theirs)).toBe(`${base}## A\n- a\n## B\n- b\n`);
  });

  it('keeps a pattern a worker added at the top, and the entries the plan gained since', async () => {
    const theirs = base.replace('- use pnpm\n', '- use pnpm\n- tests live in test/\n') + '## B\n';
    const ours = `${base}## A\n`;
    const merged = await mergeLogs(tmpdir(), ours, base, theirs);
    expect(merged).toContain('- use pnpm\n- tests live in test/\n');
    expect(merged).toContain('## A\n');
    expect(merged).toContain('## B\n');
  });

  it('returns one side as it is when the other did not change', async () => {
    expect(await mergeLogs(tmpdir(), 'ours', 'base', 'base')).toBe('ours');
    expect(await mergeLogs(tmpdir(), 'base', 'base', 'theirs')).toBe('theirs');
  });
});

describe('planWithOutcome', () => {
  const prd: Prd = { branchName: 'x', userStories: [{ id: 'A', title: 'a', acceptanceCriteria: [], priority: 1, passes: false, notes: 'old' }, { id: 'B', title: 'b', acceptanceCriteria: [], priority: 2, passes: false }] };

  it('sets passes and takes the worker\'s notes, leaving the input and the other stories alone', () => {
    const next = planWithOutcome(prd, 'A', true, 'from the worker', null);
    expect(next.userStories[0]).toMatchObject({ passes: true, notes: 'from the worker' });
    expect(next.userStories[1]).toEqual(prd.userStories[1]);
    expect(prd.userStories[0]).toMatchObject({ passes: false, notes: 'old' });
  });

  it('adds the runner\'s note to the story\'s own, and keeps the plan\'s notes when the worker gave none', () => {
    expect(planWithOutcome(prd, 'A', false, undefined, 'sent back').userStories[0].notes).toBe('old\n[ralph] sent back');
    expect(planWithOutcome(prd, 'B', false, undefined, null).userStories[1]).not.toHaveProperty('notes');
  });

  it('changes nothing for a story the plan does not have', () => {
    expect(planWithOutcome(prd, 'Z', true, 'x', null)).toEqual(prd);
  });
});

describe('renderSentBack', () => {
  it('says which story, why, and from which commit the next attempt starts', () => {
    const text = renderSentBack(new Date('2026-12-02T10:00:00Z'), 'A', 'a', 'conflict in x.ts', '0123456789abcdef');
    expect(text).toContain('## 2026-12-02T10:00:00.000Z - ralph: A sent back by the merge queue');
    expect(text).toContain('Reason: conflict in x.ts');
    expect(text).toContain('(0123456)');
  });
});
