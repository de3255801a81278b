import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyIteration } from '../../src/engine/verify.js';
import { git, writeFiles } from '../support/repo.js';
import { claim, commitAll, plan, readLedgerLines, readPrd, story, verifyRepo } from '../support/verify-repo.js';

// The case --verify-in-worktree exists for: ignored build output in the repository root makes a check
// pass although the committed sources would not produce it.
const CHECK = 'test "$(cat dist/out.txt)" = "built from v2"';
const SETUP = 'mkdir -p dist && echo "built from $(cat src.txt)" > dist/out.txt';

function repo() {
  const r = verifyRepo(plan([story('US-1')], { checks: [CHECK], setup: SETUP }), { '.gitignore': 'dist/\n', 'src.txt': 'v1\n' });
  writeFiles(r.dir, { 'dist/out.txt': 'built from v2\n' }); // stale, ignored output the agent built by hand
  claim(r, 'US-1');
  return r;
}

const worktrees = (dir: string) => git(dir, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));

describe('verifyIteration --verify-in-worktree', () => {
  it('is fooled in the repository root by ignored output (the reason the option exists)', async () => {
    const r = repo();
    commitAll(r.dir, {});
    expect((await verifyIteration(r.input())).verdicts[0].status).toBe('verified');
  });

  it('rejects the same claim in a fresh worktree built by setup from the committed sources', async () => {
    const r = repo();
    commitAll(r.dir, {});
    const res = await verifyIteration(r.input({ inWorktree: true }));
    expect(res.verdicts[0]).toMatchObject({ status: 'rejected', reason: `check \`${CHECK}\` exited 1` });
    expect(readPrd(r).userStories[0].passes).toBe(false);
    expect(readLedgerLines(r).map((l) => (l.kind === 'check' ? `${l.scope}:${l.exitCode}` : l.status))).toEqual(['setup:0', 'prd:1', 'rejected']);
    expect(worktrees(r.dir)).toHaveLength(1);
  });

  it('verifies once the committed sources are right, and removes the worktree', async () => {
    const r = repo();
    commitAll(r.dir, { 'src.txt': 'v2\n' });
    const logs: string[] = [];
    const res = await verifyIteration(r.input({ inWorktree: true, log: (_l, m) => logs.push(m) }));
    expect(res.verdicts[0].status).toBe('verified');
    const dir = logs.find((m) => m.startsWith('verifying in a temporary worktree'))!.split(': ').pop()!;
    expect(existsSync(dir)).toBe(false);
    expect(worktrees(r.dir)).toHaveLength(1);
  });

  it('rejects every claim when setup fails, with the setup command in progress.txt', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'], setup: 'echo cannot install; exit 7' }));
    claim(r, 'US-1');
    commitAll(r.dir, {});
    const res = await verifyIteration(r.input({ inWorktree: true }));
    expect(res.verdicts[0]).toMatchObject({ status: 'rejected', reason: 'setup `echo cannot install; exit 7` exited 7' });
    const progress = readFileSync(path.join(r.dir, 'ralph/progress.txt'), 'utf8');
    expect(progress).toContain('Command: echo cannot install; exit 7\nExit code: 7\n');
    expect(progress).toContain('cannot install');
    expect(worktrees(r.dir)).toHaveLength(1);
  });
});
