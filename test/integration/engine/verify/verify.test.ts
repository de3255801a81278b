import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { git, testdir, writeFiles } from '../../../support/repo.js';
import {
  claim,
  commitAll,
  editPrd,
  plan,
  readLedgerLines,
  readPrd,
  status,
  story,
  verifyRepo,
} from '../../../support/verify-repo.js';
import { LoopExit } from '../../../../src/engine/errors.js';
import { goneWithin } from '../../../support/process.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('verifyIteration: claims', () => {
  it('rejects a liar: passes back to false on disk, note written, output tail in progress.txt', async () => {
    const r = verifyRepo(
      plan([story('US-1', { notes: 'agent wrote this' })], {
        checks: ['echo checking feature; echo "feature.txt missing" >&2; test -f feature.txt'],
      }),
    );
    claim(r, 'US-1');
    git(r.dir, 'commit', '-qam', 'feat: US-1 (not really)');

    const res = await verifyIteration(r.input({ iteration: 4 }));

    // Rejected by its check alone: work a --parallel run may judge again on a newer tip (run/parallel/stale-base.ts).
    expect(res.verdicts).toEqual([
      { id: 'US-1', status: 'rejected', reason: expect.stringContaining('exited 1'), failedCheck: true },
    ]);
    expect(res.allPass).toBe(false);
    const s = readPrd(r).userStories[0];
    expect(s.passes).toBe(false);
    expect(s.notes).toBe(
      'agent wrote this\n[ralph] rejected: check `echo checking feature; echo "feature.txt missing" >&2; test -f feature.txt` exited 1',
    );
    const progress = readFileSync(r.progressPath, 'utf8');
    expect(progress).toContain('ralph: US-1 rejected (iteration 4)');
    expect(progress).toContain(
      'Command: echo checking feature; echo "feature.txt missing" >&2; test -f feature.txt\nExit code: 1\n',
    );
    expect(progress).toContain('checking feature\nfeature.txt missing\n```');
    // the runner committed its own edits, so the next iteration starts from a clean tree
    expect(status(r.dir)).toBe('');
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): reject US-1 (check failed)');
    expect(res.runnerCommit).toBe(git(r.dir, 'rev-parse', 'HEAD'));
    expect(readLedgerLines(r).map((l) => [l.kind, l.command, l.exitCode])).toEqual([
      ['check', 'echo checking feature; echo "feature.txt missing" >&2; test -f feature.txt', 1],
      ['verdict', null, null],
    ]);
  });

  it('rejects work that was done but not committed, and leaves that work alone', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['test -f feature.txt'] }), { 'src/app.txt': 'v1\n' });
    writeFileSync(path.join(r.dir, 'feature.txt'), 'done\n');
    writeFileSync(path.join(r.dir, 'src/app.txt'), 'v2\n');
    claim(r, 'US-1');

    const res = await verifyIteration(r.input());

    expect(res.verdicts[0]).toMatchObject({ id: 'US-1', status: 'rejected' });
    expect(res.verdicts[0].reason).toMatch(
      /^uncommitted changes in the working tree \((feature\.txt, src\/app\.txt|src\/app\.txt, feature\.txt)\)/,
    );
    expect(readPrd(r).userStories[0].passes).toBe(false);
    expect(readLedgerLines(r).filter((l) => l.kind === 'check')).toEqual([]); // no check runs on dirty work
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): reject US-1 (uncommitted work)');
    expect(git(r.dir, 'show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual([
      'ralph/prd.json',
      'ralph/progress.txt',
    ]);
    expect(status(r.dir).split('\n').sort()).toEqual([' M src/app.txt', '?? feature.txt']);
  });

  it('counts a staged but uncommitted change as uncommitted work', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'] }));
    commitAll(r.dir, {});
    writeFileSync(path.join(r.dir, 'staged.txt'), 'x\n');
    git(r.dir, 'add', 'staged.txt');
    claim(r, 'US-1');
    const res = await verifyIteration(r.input());
    expect(res.verdicts[0].reason).toContain('(staged.txt)');
    expect(git(r.dir, 'diff', '--cached', '--name-only')).toBe('staged.txt'); // still staged, not swept into the runner's commit
  });

  it('names renamed files and odd file names exactly', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'] }), { 'old name.txt': 'x\n' });
    git(r.dir, 'mv', 'old name.txt', 'new näme.txt');
    writeFiles(r.dir, { 'dir with space/"quoted".txt': 'y\n' });
    claim(r, 'US-1');
    const res = await verifyIteration(r.input());
    expect(res.verdicts[0].reason).toMatch(
      /\((new näme\.txt, dir with space\/"quoted"\.txt|dir with space\/"quoted"\.txt, new näme\.txt)\)/,
    );
  });

  it("ignores ignored files and the runner's own files when judging the tree", async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['test -f feature.txt'] }), { '.gitignore': 'build/\n' });
    commitAll(r.dir, { 'feature.txt': 'done\n' });
    writeFiles(r.dir, { 'build/out.js': 'generated\n' }); // ignored: not work the agent owes a commit for
    claim(r, 'US-1'); // prd.json edited but not committed: the runner's file, not the agent's work
    writeFileSync(r.progressPath, readFileSync(r.progressPath, 'utf8') + '\n## iteration 1\n- did US-1\n---\n');
    const res = await verifyIteration(r.input());
    expect(res.verdicts).toEqual([{ id: 'US-1', status: 'verified' }]);
    expect(res.allPass).toBe(true);
    // the agent's uncommitted edits to the runner's files were committed by the runner
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): record iteration 1');
    expect(status(r.dir)).toBe('');
  });

  it('verifies an honest claim and records the commit and output hash in the ledger', async () => {
    const r = verifyRepo(
      plan([story('US-1', { checks: ['cat feature.txt'] }), story('US-2')], { checks: ['echo plan-check'] }),
    );
    claim(r, 'US-1');
    const head = commitAll(r.dir, { 'feature.txt': 'the feature\n' }, 'feat: US-1');

    const res = await verifyIteration(r.input({ iteration: 2, now: () => new Date('2026-03-04T05:06:07Z') }));

    expect(res.verdicts).toEqual([{ id: 'US-1', status: 'verified' }]);
    expect(res.allPass).toBe(false);
    expect(res.runnerCommit).toBeNull();
    expect(git(r.dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(readPrd(r).userStories[0].passes).toBe(true);
    const base = { time: '2026-03-04T05:06:07.000Z', loop: 'L1', iteration: 2, story: 'US-1', commit: head };
    expect(readLedgerLines(r)).toEqual([
      {
        ...base,
        kind: 'check',
        scope: 'prd',
        command: 'echo plan-check',
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: expect.any(Number),
        outputSha256: sha256('plan-check\n'),
      },
      {
        ...base,
        kind: 'check',
        scope: 'story',
        command: 'cat feature.txt',
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: expect.any(Number),
        outputSha256: sha256('the feature\n'),
      },
      {
        ...base,
        kind: 'verdict',
        command: null,
        exitCode: null,
        status: 'verified',
        durationMs: expect.any(Number),
        outputSha256: null,
      },
    ]);
  });

  it("runs the plan's checks once for several claims and rejects only the failing story", async () => {
    // Outside the repository: checks run in a fresh checkout of the commit.
    const count = path.join(testdir(), 'count.txt');
    const r = verifyRepo(
      plan([story('US-1', { checks: ['true'] }), story('US-2', { checks: ['false'] })], {
        checks: [`echo x >> ${count}`],
      }),
    );
    claim(r, 'US-1', 'US-2');
    commitAll(r.dir, {});
    const res = await verifyIteration(r.input());
    expect(res.verdicts.map((v) => v.status)).toEqual(['verified', 'rejected']);
    expect(readFileSync(count, 'utf8')).toBe('x\n');
    const prdLines = readLedgerLines(r).filter((l) => l.kind === 'check' && l.scope === 'prd');
    expect(prdLines.map((l) => [l.story, 'shared' in l ? l.shared : undefined])).toEqual([
      ['US-1', undefined],
      ['US-2', true],
    ]);
    expect(readPrd(r).userStories.map((s) => s.passes)).toEqual([true, false]);
  });

  it('accepts a claim in a plan without checks as unverified', async () => {
    const r = verifyRepo(plan([story('US-1')]));
    claim(r, 'US-1');
    const head = commitAll(r.dir, { 'x.txt': 'x' });
    const res = await verifyIteration(r.input());
    expect(res.verdicts).toEqual([{ id: 'US-1', status: 'unverified', reason: expect.stringContaining('no checks') }]);
    expect(res.allPass).toBe(true);
    expect(readLedgerLines(r)).toEqual([
      expect.objectContaining({ kind: 'verdict', story: 'US-1', commit: head, command: null, status: 'unverified' }),
    ]);
    expect(r.logs.join('\n')).toMatch(/warn: US-1 unverified/);
  });

  it('kills a check at the timeout, with everything it started, and rejects the claim', async () => {
    const pidFile = path.join(testdir(), 'child.pid');
    const r = verifyRepo(plan([story('US-1')], { checks: [`sleep 300 & echo $! > ${pidFile}; wait`] }));
    claim(r, 'US-1');
    commitAll(r.dir, {});
    // Long enough for the check to start its background child and record its pid on a loaded machine (at 300 ms
    // the timeout could come first, and child.pid was never written).
    const res = await verifyIteration(r.input({ checkTimeoutMs: 3000 }));
    expect(res.verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('timed out after 3s and was killed'),
    });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await goneWithin(pid)).toBe(true);
    expect(readFileSync(r.progressPath, 'utf8')).toContain('Exit code: none (timed out)');
    expect(readLedgerLines(r)[0]).toMatchObject({ kind: 'check', timedOut: true, exitCode: null });
  });

  it('replaces its own earlier note on a second rejection and clears it once the story is verified', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['test -f feature.txt'] }));
    claim(r, 'US-1');
    commitAll(r.dir, {});
    await verifyIteration(r.input());
    const second = readFileSync(r.prdPath, 'utf8');
    editPrd(r, (p) =>
      Object.assign(p.userStories[0], { passes: true, notes: `${p.userStories[0].notes}\ntried again` }),
    );
    commitAll(r.dir, {});
    await verifyIteration(r.input({ prdBefore: second, iteration: 2 }));
    expect(readPrd(r).userStories[0].notes).toBe('tried again\n[ralph] rejected: check `test -f feature.txt` exited 1');

    const third = readFileSync(r.prdPath, 'utf8');
    editPrd(r, (p) => (p.userStories[0].passes = true));
    commitAll(r.dir, { 'feature.txt': 'ok' });
    const res = await verifyIteration(r.input({ prdBefore: third, iteration: 3 }));
    expect(res.verdicts[0].status).toBe('verified');
    expect(readPrd(r).userStories[0]).toMatchObject({ passes: true, notes: 'tried again' });
    expect(status(r.dir)).toBe('');
  });

  it('makes no commit and writes nothing when nothing was claimed or changed', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['false'] }));
    const head = commitAll(r.dir, { 'wip.txt': 'partial' });
    const res = await verifyIteration(r.input());
    expect(res).toMatchObject({ verdicts: [], restored: [], allPass: false, runnerCommit: null });
    expect(git(r.dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(existsSync(r.ledgerPath)).toBe(false);
  });

  it('decides nothing when a check is interrupted: exit 130, the claim left pending, nothing written or committed', async () => {
    const r = verifyRepo(plan([story('US-1'), story('US-2')], { checks: ['sleep 300'] }));
    claim(r, 'US-1', 'US-2');
    const head = commitAll(r.dir, {});
    const prdText = readFileSync(r.prdPath, 'utf8');
    const progressText = readFileSync(r.progressPath, 'utf8');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const err = await verifyIteration({ ...r.input(), signal: ac.signal }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LoopExit);
    expect(err).toMatchObject({
      code: 130,
      message: 'interrupted while verifying US-1, US-2; nothing decided, state saved',
    });
    expect(readFileSync(r.prdPath, 'utf8')).toBe(prdText);
    expect(readFileSync(r.progressPath, 'utf8')).toBe(progressText);
    expect(git(r.dir, 'rev-parse', 'HEAD')).toBe(head);
    const lines = readLedgerLines(r);
    expect(lines.filter((l) => l.kind === 'verdict')).toEqual([]);
    expect(lines).toEqual([
      expect.objectContaining({ kind: 'check', story: 'US-1', command: 'sleep 300', exitCode: null, aborted: true }),
    ]);
    expect(r.logs.join('\n')).toMatch(/warn: verification was interrupted: nothing was decided about US-1, US-2/);
  });

  it('keeps its verdicts when it cannot commit, and says why', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['false'] }));
    claim(r, 'US-1');
    commitAll(r.dir, {});
    writeFileSync(path.join(r.dir, '.git/index.lock'), ''); // another git process holds the index
    const res = await verifyIteration(r.input());
    expect(res).toMatchObject({ verdicts: [{ id: 'US-1', status: 'rejected' }], runnerCommit: null });
    expect(readPrd(r).userStories[0].passes).toBe(false);
    expect(r.logs.join('\n')).toMatch(
      /warn: could not commit the runner's edits to ralph\/prd\.json and ralph\/progress\.txt: .*index\.lock/,
    );
  });

  it('commits as ralphkit when git has no identity configured', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['false'] }));
    git(r.dir, 'config', '--unset', 'user.name');
    git(r.dir, 'config', '--unset', 'user.email');
    claim(r, 'US-1');
    // no identity from anywhere: HOME without a config, and no guessing from the host name
    vi.stubEnv('HOME', r.dir);
    vi.stubEnv('XDG_CONFIG_HOME', r.dir);
    for (const v of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'EMAIL'])
      vi.stubEnv(v, undefined);
    vi.stubEnv('GIT_CONFIG_COUNT', '1');
    vi.stubEnv('GIT_CONFIG_KEY_0', 'user.useConfigOnly');
    vi.stubEnv('GIT_CONFIG_VALUE_0', 'true');
    onTestFinished(() => {
      vi.unstubAllEnvs();
    });
    const res = await verifyIteration(r.input());
    expect(res.runnerCommit).not.toBeNull();
    expect(git(r.dir, 'log', '-1', '--format=%an <%ae>|%s')).toBe(
      'ralphkit <ralphkit@localhost>|chore(ralph): reject US-1 (check failed)',
    );
  });
});
