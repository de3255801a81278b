// Claims against the plan's dependsOn order, and what happens when the runner cannot write its own files.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { RunnerFileError } from '../../../../src/engine/errors.js';
import { git } from '../../../support/repo.js';
import { claim, commitAll, plan, readLedgerLines, readPrd, story, verifyRepo } from '../../../support/verify-repo.js';

const verdicts = (r: ReturnType<typeof verifyRepo>) =>
  readLedgerLines(r).flatMap((l) => (l.kind === 'verdict' ? [`${l.story}:${l.status}`] : []));

describe('verifyIteration: dependency order', () => {
  it('rejects a story claimed before the story it depends on passes, without running its checks', async () => {
    const r = verifyRepo(plan([story('US-1'), story('US-2', { dependsOn: ['US-1'] })], { checks: ['true'] }));
    claim(r, 'US-2');
    commitAll(r.dir, { 'two.txt': 'done' }, 'feat: US-2');
    const res = await verifyIteration(r.input());
    const reason =
      'out of order: it depends on US-1, which does not pass yet; finish that story first, then claim this one again';
    expect(res.verdicts).toEqual([{ id: 'US-2', status: 'rejected', reason }]);
    expect(readPrd(r).userStories[1]).toMatchObject({ passes: false, notes: `[ralph] rejected: ${reason}` });
    expect(readLedgerLines(r).filter((l) => l.kind === 'check')).toEqual([]);
    expect(readFileSync(r.progressPath, 'utf8')).toContain(
      `ralph: US-2 rejected (iteration 1)\nStory: US-2 Story US-2\n`,
    );
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): reject US-2 (out of order)');
  });

  it('judges a story and its dependency claimed together dependency first, whatever their order in the plan', async () => {
    const r = verifyRepo(plan([story('US-2', { dependsOn: ['US-1'] }), story('US-1')], { checks: ['true'] }));
    claim(r, 'US-1', 'US-2');
    commitAll(r.dir, { 'work.txt': 'done' }, 'feat: US-1 and US-2');
    const res = await verifyIteration(r.input());
    expect(res.verdicts.map((v) => `${v.id}:${v.status}`)).toEqual(['US-1:verified', 'US-2:verified']);
    expect(res.allPass).toBe(true);
  });

  it('rejects the dependent story too when its dependency is rejected in the same iteration', async () => {
    const r = verifyRepo(
      plan([story('US-1', { checks: ['test -f one.txt'] }), story('US-2', { dependsOn: ['US-1'] })], {
        checks: ['true'],
      }),
    );
    claim(r, 'US-1', 'US-2');
    commitAll(r.dir, { 'two.txt': 'done' }, 'feat: both (US-1 not really)');
    await verifyIteration(r.input());
    expect(verdicts(r)).toEqual(['US-1:rejected', 'US-2:rejected']);
    expect(readPrd(r).userStories[1].notes).toMatch(/^\[ralph\] rejected: out of order: it depends on US-1/);
  });

  it('does not apply the order to the start-of-run pass (iteration 0) over stories the plan already marks done', async () => {
    const r = verifyRepo(plan([story('US-1'), story('US-2', { dependsOn: ['US-1'] })], { checks: ['true'] }));
    commitAll(r.dir, { 'two.txt': 'done' });
    claim(r, 'US-2'); // left uncommitted: the runner commits the plan it verified
    expect((await verifyIteration(r.input({ iteration: 0 }))).verdicts).toEqual([{ id: 'US-2', status: 'verified' }]);
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): record the check at start');
  });

  it('accepts a story whose dependencies already passed', async () => {
    const r = verifyRepo(
      plan([story('US-1', { passes: true }), story('US-2', { dependsOn: ['US-1'] })], { checks: ['true'] }),
    );
    claim(r, 'US-2');
    commitAll(r.dir, { 'two.txt': 'done' });
    expect((await verifyIteration(r.input())).verdicts).toEqual([{ id: 'US-2', status: 'verified' }]);
  });
});

describe('verifyIteration: the runner cannot write its files', () => {
  it('ends with a RunnerFileError naming progress.txt, and leaves prd.json as the agent left it', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['false'] }));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (not really)');
    const prdText = readFileSync(r.prdPath, 'utf8');
    // A folder where the file should be: appending fails even for root, as EACCES does for anyone else.
    const blocked = path.join(r.dir, 'ralph/blocked');
    mkdirSync(blocked);
    const err = await verifyIteration(r.input({ progressPath: blocked })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunnerFileError);
    expect(err).toMatchObject({
      code: 1,
      status: 'failed',
      message:
        'could not write ralph/blocked (EISDIR: illegal operation on a directory): US-1 was rejected (see the ledger) but the note for the next iteration could not be written',
      hint: 'make ralph/blocked and its folder writable for this user (e.g. chmod u+w ralph ralph/blocked), then continue with: ./ralph/ralph.sh --resume-last',
    });
    expect(readFileSync(r.prdPath, 'utf8')).toBe(prdText);
    expect(verdicts(r)).toEqual(['US-1:rejected']);
  });

  it('ends with a RunnerFileError when the ledger cannot be written, before any verdict is recorded', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'] }));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1');
    writeFileSync(path.join(r.dir, 'ralph/.runs'), 'a file where the runs folder should be');
    const err = await verifyIteration(r.input()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunnerFileError);
    expect((err as Error).message).toMatch(/^could not write ralph\/\.runs\/L1\/ledger\.jsonl \((ENOTDIR|EEXIST)/);
    expect(readPrd(r).userStories[0].notes).toBe('');
  });
});
