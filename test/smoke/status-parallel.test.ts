// `ralphkit status` of a --parallel run, from hand-written state.json files (the built CLI, spawned as a user would):
// a line per worker under the run's row, its merge queue, merged and given-up stories; --json carries `parallel` as
// the state has it; the worker worktrees of a dead run are listed as leftovers, a running run's are not.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, gitdir, runCli } from '../support/repo.js';
import { procStart } from '../support/process.js';
import { writeRunningLoop } from '../support/lifecycle.js';
import { worktreesFolder } from '../../src/engine/git/worktree.js';
import type { ParallelState } from '../../src/engine/store/state-types.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

function parallel(id: string, repo: string): ParallelState {
  const tree = (n: number) => path.join(worktreesFolder(repo), `${id}--w${n}`);
  return {
    workers: 2,
    states: [
      {
        worker: 1,
        path: tree(1),
        phase: 'agent',
        story: 'US-003',
        branch: 'ralph/x--US-003',
        iteration: 4,
        startedAt: minutesAgo(2),
      },
      {
        worker: 2,
        path: tree(2),
        phase: 'queued',
        story: 'US-002',
        branch: 'ralph/x--US-002',
        iteration: 3,
        startedAt: minutesAgo(5),
      },
    ],
    queue: [{ story: 'US-002', head: 'c'.repeat(40), worker: 2 }],
    merged: ['US-001'],
    attempts: { 'US-004': 3 },
    givenUp: { 'US-004': 'no progress after 3 attempts' },
  };
}

function repoWithRuns(): string {
  const repo = gitdir({ 'ralph/.gitignore': '.runs/\n' });
  onTestFinished(() => rmSync(worktreesFolder(repo), { recursive: true, force: true }));
  // This test process stands in for the live runner; a pid that has exited for the killed one.
  writeRunningLoop(repo, {
    id: 'live',
    pid: process.pid,
    pidStart: procStart(process.pid),
    parallel: parallel('live', repo),
  });
  writeRunningLoop(repo, { id: 'dead', pid: spawnSync('true').pid as number, parallel: parallel('dead', repo) });
  for (const name of ['live--w1', 'dead--w1'])
    git(repo, 'worktree', 'add', '--quiet', '-b', `b-${name}`, path.join(worktreesFolder(repo), name));
  return repo;
}

describe('ralphkit status of a --parallel run', () => {
  it('table: a line per worker under the run, then the merge queue, merged and given-up stories', async () => {
    const repo = repoWithRuns();
    const r = await runCli(['status', '--cwd', repo]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const live = lines.findIndex((l) => /^live\s+running\s+1\/10/.test(l));
    expect(live, r.stdout).toBeGreaterThan(0);
    expect(lines[live + 1]).toMatch(/^ {2}└ w1 {2}agent {3}US-003 {2}iteration 4 {2}2m0\ds {2}ralph\/x--US-003$/);
    expect(lines[live + 2]).toMatch(/^ {2}└ w2 {2}queued {2}US-002 {2}iteration 3 {2}5m0\ds {2}ralph\/x--US-002$/);
    expect(lines.slice(live + 3, live + 6)).toEqual([
      '  └ merge queue: US-002 (w2)',
      '  └ merged: US-001',
      '  └ given up: US-004 (no progress after 3 attempts)',
    ]);
    const dead = lines.findIndex((l) => /^dead\s+dead\s+1\/10/.test(l));
    expect(lines[dead + 1]).toBe('  └ runner gone (killed?); continue with: ./ralph/ralph.sh --resume dead');
    expect(lines[dead + 2]).toMatch(/^ {2}└ w1 {2}agent/);
    // The killed run's worker tree is a leftover, named by its loop and worker; the running run's is not.
    expect(r.stdout).toContain(`  dead w1  ${path.join(worktreesFolder(repo), 'dead--w1')} (b-dead--w1)`);
    expect(r.stdout).not.toContain('live--w1');
  });

  it('--json: each loop carries `parallel` as its state.json has it, beside the fields it had', async () => {
    const repo = repoWithRuns();
    const r = await runCli(['status', '--json', '--cwd', repo]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      loops: Array<Record<string, unknown>>;
      leftoverWorktrees: Array<Record<string, unknown>>;
    };
    const live = out.loops.find((l) => l.id === 'live')!;
    expect(live).toMatchObject({ status: 'running', alive: true, iteration: 1, maxIterations: 10, agent: 'claude' });
    expect(live.parallel).toEqual(readParallel(repo, 'live'));
    expect((live.parallel as ParallelState).states.map((w) => [w.worker, w.phase, w.story])).toEqual([
      [1, 'agent', 'US-003'],
      [2, 'queued', 'US-002'],
    ]);
    expect(out.leftoverWorktrees).toEqual([
      { id: 'dead', worker: 1, path: path.join(worktreesFolder(repo), 'dead--w1'), branch: 'b-dead--w1' },
    ]);
  });
});

function readParallel(repo: string, id: string): unknown {
  return (JSON.parse(readFileSync(path.join(repo, 'ralph/.runs', id, 'state.json'), 'utf8')) as { parallel: unknown })
    .parallel;
}
