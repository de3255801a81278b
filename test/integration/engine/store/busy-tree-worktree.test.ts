// `hook start` refuses an in-session loop while a runner loop works this working tree; a --worktree loop's state is
// recorded here too (its records live in the user's tree) but it works in a tree of its own, so it is no bar.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testdir } from '../../../support/repo.js';
import { refuseBusyTree } from '../../../../src/engine/store/locks.js';
import { ownProcessStart } from '../../../../src/engine/processes.js';

function runningLoop(repo: string, id: string, extra: object): void {
  const now = new Date().toISOString();
  const state = {
    id,
    pid: process.pid,
    pidStart: ownProcessStart(),
    prd: 'ralph/other.json',
    agent: 'claude',
    status: 'running',
    iteration: 1,
    maxIterations: 5,
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: {},
    ...extra,
  };
  mkdirSync(path.join(repo, 'ralph/.runs', id), { recursive: true });
  writeFileSync(path.join(repo, 'ralph/.runs', id, 'state.json'), JSON.stringify(state));
}

describe('hook start beside a --worktree loop', () => {
  it('starts while a --worktree loop runs in its own tree', () => {
    const repo = testdir();
    runningLoop(repo, 'w1', { worktree: { path: `${repo}.ralph-worktrees/w1`, branch: 'ralph/other' } });
    expect(() => refuseBusyTree(repo, 'session-1')).not.toThrow();
  });

  it('is refused while a runner loop (no worktree) runs in this tree', () => {
    const repo = testdir();
    runningLoop(repo, 'r1', {});
    expect(() => refuseBusyTree(repo, 'session-1')).toThrow(
      /a runner loop \(r1, pid \d+\) is running in this working tree/,
    );
  });
});
