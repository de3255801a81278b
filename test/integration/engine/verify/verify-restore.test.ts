import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { git } from '../../../support/repo.js';
import { commitAll, editPrd, plan, readPrd, status, story, verifyRepo } from '../../../support/verify-repo.js';

describe('verifyIteration: edits to prd.json beyond passes and notes', () => {
  it('restores a deleted story, warns, and tells the next agent', async () => {
    const r = verifyRepo(plan([story('US-1'), story('US-2')], { checks: ['true'] }));
    editPrd(r, (p) => p.userStories.splice(1, 1));
    commitAll(r.dir, {}, 'chore: drop US-2');

    const res = await verifyIteration(r.input());

    expect(res.restored).toEqual(['story US-2 was deleted; restored']);
    expect(readPrd(r).userStories.map((s) => s.id)).toEqual(['US-1', 'US-2']);
    expect(res.prd.userStories).toHaveLength(2);
    expect(r.logs).toContain('warn: prd.json: story US-2 was deleted; restored');
    expect(readFileSync(r.progressPath, 'utf8')).toContain('- story US-2 was deleted; restored');
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): restore prd.json');
    expect(status(r.dir)).toBe('');
  });

  it('restores edited criteria and checks but still judges the claim, against the original checks', async () => {
    const r = verifyRepo(
      plan([story('US-1', { acceptanceCriteria: ['login works', 'tests pass'], checks: ['test -f login.txt'] })]),
    );
    editPrd(r, (p) =>
      Object.assign(p.userStories[0], { acceptanceCriteria: ['login page exists'], checks: ['true'], passes: true }),
    );
    commitAll(r.dir, {}, 'feat: login (weakened)');

    const res = await verifyIteration(r.input());

    expect(res.restored).toEqual([
      'story US-1: field "acceptanceCriteria" was changed; restored',
      'story US-1: field "checks" was changed; restored',
    ]);
    expect(res.verdicts).toEqual([
      expect.objectContaining({ id: 'US-1', status: 'rejected', reason: 'check `test -f login.txt` exited 1' }),
    ]);
    expect(readPrd(r).userStories[0]).toMatchObject({
      acceptanceCriteria: ['login works', 'tests pass'],
      checks: ['test -f login.txt'],
      passes: false,
    });
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): reject US-1 (check failed); restore prd.json');
  });

  it('restores the previous file verbatim when the agent left it unparseable', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'] }));
    writeFileSync(r.prdPath, '{\n  "branchName": "ralph/demo"\n  "userStories": []\n}\n');
    const res = await verifyIteration(r.input());
    // line:col an editor can jump to, not JSON.parse's "position 31"
    expect(res.restored).toEqual([
      "prd.json was left unparseable (ralph/prd.json:3:3: missing ',' before this property); restored the whole file as it was before this iteration",
    ]);
    expect(r.logs).toContain(`warn: prd.json: ${res.restored[0]}`);
    expect(readFileSync(r.prdPath, 'utf8')).toBe(r.before);
    expect(status(r.dir)).toBe(''); // prd.json is the committed file again; the progress note was committed
  });

  it('restores a deleted prd.json', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'] }));
    rmSync(r.prdPath);
    const res = await verifyIteration(r.input());
    expect(res.restored).toHaveLength(1);
    expect(readFileSync(r.prdPath, 'utf8')).toBe(r.before);
  });

  it('refuses to go on when the plan was already broken before the iteration', async () => {
    const r = verifyRepo(plan([story('US-1')]));
    await expect(verifyIteration(r.input({ prdBefore: '{ nope' }))).rejects.toMatchObject({
      name: 'LoopExit',
      code: 2,
      message: expect.stringMatching(/^the plan was not valid JSON before iteration 1: ralph\/prd\.json:1:3: /),
    });
  });
});
