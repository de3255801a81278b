// verifyIteration's share of the git-safety rules: claims the agent made on another branch, and the hint for an
// owner who edited the plan mid-run.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { git } from '../../../support/repo.js';
import {
  commitAll,
  editPrd,
  plan,
  readLedgerLines,
  readPrd,
  status,
  story,
  verifyRepo,
} from '../../../support/verify-repo.js';

describe('verifyIteration: claims made on another branch', () => {
  it('rejects every claim of the plan the agent left elsewhere, keeping the plan on disk, without running a check', async () => {
    const r = verifyRepo(
      plan([story('US-1', { passes: true }), story('US-2'), story('US-3')], { checks: ['touch ran-a-check'] }),
    );
    const elsewhere = plan([story('US-1'), story('US-2', { passes: true }), story('US-3', { passes: true })], {
      checks: ['touch ran-a-check'],
    });
    const reason = 'the work is not on ralph/demo: the agent committed it on main';

    const res = await verifyIteration({ ...r.input(), offBranch: { prdAfter: JSON.stringify(elsewhere), reason } });

    expect(res.verdicts).toEqual([
      { id: 'US-2', status: 'rejected', reason },
      { id: 'US-3', status: 'rejected', reason },
    ]);
    expect(readPrd(r).userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-1', true],
      ['US-2', false],
      ['US-3', false],
    ]);
    expect(readPrd(r).userStories[1].notes).toBe(`[ralph] rejected: ${reason}`);
    expect(readFileSync(r.progressPath, 'utf8')).toContain(`Reason: ${reason}`);
    expect(readLedgerLines(r).filter((l) => l.kind === 'check')).toEqual([]);
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe(
      'chore(ralph): reject US-2 (work on another branch), US-3 (work on another branch)',
    );
    expect(status(r.dir)).toBe('');
  });
});

describe('verifyIteration: restoring the plan', () => {
  it('tells an owner who edited the plan mid-run how to do it instead', async () => {
    const r = verifyRepo(plan([story('US-1'), story('US-2')], { checks: ['true'] }));
    editPrd(r, (p) => (p.userStories[1].title = 'Renamed by the owner'));
    commitAll(r.dir, {}, 'owner: rename US-2');

    await verifyIteration(r.input());

    expect(r.logs).toContain('warn: prd.json: story US-2: field "title" was changed; restored');
    expect(r.logs.join('\n')).toContain(
      '(if you edited the plan yourself: cancel the loop, edit, commit, then --resume-last)',
    );
  });
});
