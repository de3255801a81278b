// The plan branch's own files in a --parallel run (run/parallel/plan-log.ts): each worker's log entries appended
// whole in merge order, a story's outcome in the plan, and the plan written in its owner's formatting.
import { describe, expect, it } from 'vitest';
import type { Prd } from '../../../../../src/prd/types.js';
import {
  mergeLogs,
  planWithOutcome,
  renderPlan,
  renderSentBack,
} from '../../../../../src/engine/run/parallel/plan-log.js';

const base = '# Progress\n## Codebase Patterns\n- use pnpm\n\n## entry 0\n';

describe('mergeLogs', () => {
  it('keeps what both sides added since the base, ours first', () => {
    const ours = `${base}## A\n- a\n`;
    const theirs = `${base}## B\n- b\n`;
    expect(mergeLogs(ours, base, theirs)).toBe(`${base}## A\n- a\n## B\n- b\n`);
  });

  it('keeps a pattern a worker added at the top, and the entries the plan gained since', () => {
    const theirs = base.replace('- use pnpm\n', '- use pnpm\n- tests live in test/\n') + '## B\n';
    const ours = `${base}## A\n`;
    const merged = mergeLogs(ours, base, theirs);
    expect(merged).toContain('- use pnpm\n- tests live in test/\n');
    expect(merged).toContain('## A\n');
    expect(merged).toContain('## B\n');
  });

  it("appends each worker's entry whole: repeated lines (---, the same learning) are all kept, entries never interleave", () => {
    const entry = (id: string) =>
      `\n## ${id}\n- Learnings:\n  - run npm test before committing\n\`\`\`\nFAIL ${id}\n\`\`\`\n---\n`;
    const afterA = mergeLogs(base, base, base + entry('A'));
    const afterB = mergeLogs(afterA, base, base + entry('B'));
    expect(afterB).toBe(base + entry('A') + entry('B'));
    expect(afterB.match(/^---$/gm)).toHaveLength(2);
    expect(afterB.match(/run npm test before committing/g)).toHaveLength(2);
  });

  it('returns one side as it is when the other did not change', () => {
    expect(mergeLogs('ours', 'base', 'base')).toBe('ours');
    expect(mergeLogs('base', 'base', 'theirs')).toBe('theirs');
  });
});

describe('planWithOutcome', () => {
  const prd: Prd = {
    branchName: 'x',
    userStories: [
      { id: 'A', title: 'a', acceptanceCriteria: [], priority: 1, passes: false, notes: 'old' },
      { id: 'B', title: 'b', acceptanceCriteria: [], priority: 2, passes: false },
    ],
  };

  it("sets passes and takes the worker's notes, leaving the input and the other stories alone", () => {
    const next = planWithOutcome(prd, 'A', true, 'from the worker', null);
    expect(next.userStories[0]).toMatchObject({ passes: true, notes: 'from the worker' });
    expect(next.userStories[1]).toEqual(prd.userStories[1]);
    expect(prd.userStories[0]).toMatchObject({ passes: false, notes: 'old' });
  });

  it("adds the runner's note to the story's own, and keeps the plan's notes when the worker gave none", () => {
    expect(planWithOutcome(prd, 'A', false, undefined, 'sent back').userStories[0].notes).toBe(
      'old\n[ralph] sent back',
    );
    expect(planWithOutcome(prd, 'B', false, undefined, null).userStories[1]).not.toHaveProperty('notes');
  });

  it('changes nothing for a story the plan does not have', () => {
    expect(planWithOutcome(prd, 'Z', true, 'x', null)).toEqual(prd);
  });
});

describe('renderPlan', () => {
  const owner = `{
    "branchName": "ralph/x",
    "userStories": [
        { "id": "A", "title": "a", "acceptanceCriteria": [], "priority": 1,
          "passes": false, "notes": "" },
        {
            "id": "B",
            "title": "b",
            "acceptanceCriteria": [],
            "priority": 2,
            "passes": false
        }
    ]
}`;
  const plan = JSON.parse(owner) as Prd;

  it('keeps the owner\'s formatting and "notes": "" and edits only the fields that changed', () => {
    const merged = planWithOutcome(
      planWithOutcome(plan, 'A', true, undefined, null),
      'B',
      false,
      undefined,
      'sent back: conflict',
    );
    const text = renderPlan(owner, merged);
    expect(text).toBe(
      owner
        .replace('"passes": false, "notes": ""', '"passes": true, "notes": ""')
        .replace('"passes": false\n', '"passes": false,\n            "notes": "[ralph] sent back: conflict"\n'),
    );
    expect(JSON.parse(text)).toEqual({
      ...merged,
      userStories: [{ ...merged.userStories[0], notes: '' }, merged.userStories[1]],
    });
  });

  it('writes its own rendering when something else changed or the old text is gone', () => {
    const renamed = { ...plan, branchName: 'ralph/y' };
    expect(renderPlan(owner, renamed)).toBe(`${JSON.stringify(renamed, null, 2)}\n`);
    expect(renderPlan(null, plan)).toBe(`${JSON.stringify(plan, null, 2)}\n`);
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
