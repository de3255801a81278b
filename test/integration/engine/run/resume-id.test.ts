// --resume-last picks a loop by what ralph/.runs/*/state.json says, a file the agent can write: an id that is not a
// loop id, or not the name of the folder it sits in, would point the loop's folders and its worktree elsewhere.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testdir } from '../../../support/repo.js';
import { findResumable } from '../../../../src/engine/run/resume.js';
import { parseRunArgs } from '../../../../src/engine/cli/args.js';
import { LoopExit } from '../../../../src/engine/errors.js';

function plantState(repo: string, folder: string, id: string): void {
  const now = new Date().toISOString();
  const state = {
    id,
    pid: 999999,
    prd: 'ralph/prd.json',
    agent: 'claude',
    status: 'max-iterations',
    iteration: 3,
    maxIterations: 3,
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: 1,
    noProgressStreak: 0,
    options: {},
    worktree: { path: path.join(path.dirname(repo), 'proj-2'), branch: 'feature' },
  };
  mkdirSync(path.join(repo, 'ralph/.runs', folder), { recursive: true });
  writeFileSync(path.join(repo, 'ralph/.runs', folder, 'state.json'), JSON.stringify(state));
}

function refusal(repo: string): LoopExit {
  try {
    findResumable(repo, parseRunArgs(['--resume-last', '9']).options);
  } catch (err) {
    return err as LoopExit;
  }
  throw new Error('resumed');
}

describe('--resume-last and the id in state.json', () => {
  it.each([['../proj-2'], ['other-loop']])("refuses a state whose id is %s, not its folder's name", (id) => {
    const repo = testdir();
    plantState(repo, 'w1', id);
    const err = refusal(repo);
    expect(err).toBeInstanceOf(LoopExit);
    expect(err.code).toBe(2);
    expect(err.message).toContain('is not the name of its folder');
  });

  it("resumes a state whose id is its folder's name", () => {
    const repo = testdir();
    plantState(repo, 'w1', 'w1');
    expect(findResumable(repo, parseRunArgs(['--resume-last', '9']).options).id).toBe('w1');
  });
});
