// --parallel <n>: limits over all workers, STUCK, interrupts and resumes, and agents that attack the run.
// Real git, the installed ralph/ralph.sh, the real CLI, fake agents (test/fixtures/agents/story-worker.mjs).
import { describe, expect, it, onTestFinished } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ralph, startRalph } from '../support/loop-repo.js';
import { git, testdir } from '../support/repo.js';
import { isGone, pidFrom, until } from '../support/process.js';
import {
  BRANCH,
  fakeEnv,
  mergeOrder,
  parallelRepo,
  planOn,
  readLog,
  parallelArgs,
  parallelRalph,
} from '../support/parallel-repo.js';

describe('--parallel: limits, STUCK and attacks', () => {
  it('exit 3 when every story left is stuck or waits on a stuck one; the others are merged', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002', dependsOn: ['US-001'] }, { id: 'US-003' }]);
    const { env } = fakeEnv({ FAKE_PAR_STUCK: 'US-001' });
    const r = await parallelRalph(repo, 2, 10, env);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      'every story left is stuck or waits on a stuck one (US-001: the agent said it is STUCK; US-002: waits on US-001)',
    );
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-001', false],
      ['US-002', false],
      ['US-003', true],
    ]);
    expect(mergeOrder(repo)).toEqual(['US-003']);
    // The blocker fixed, a resume tries the given-up story again and finishes the plan.
    const again = await ralph(repo, ['--resume-last'], { ...env, FAKE_PAR_STUCK: '' }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo)).toEqual(['US-003', 'US-001', 'US-002']);
  }, 120_000);

  it('max_iterations counts agent runs over all workers', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }, { id: 'US-004' }]);
    const { log, env } = fakeEnv();
    const r = await parallelRalph(repo, 3, 2, env);
    expect(r.code, r.stderr).toBe(1);
    expect(readLog(log)).toHaveLength(2);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002']);
    expect(r.stderr).toMatch(/max iterations/i);
  }, 120_000);

  it("a claim of another worker's story is rejected; that story is still done by its own worker; its edit to the prompt never reaches the plan branch", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { log, env } = fakeEnv({
      FAKE_PAR_CLAIM_ALSO: 'US-001:US-002',
      FAKE_PAR_SLOW: 'US-002',
      FAKE_PAR_PROMPT: 'US-001',
    });
    const r = await parallelRalph(repo, 2, 10, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("US-002 rejected: story US-002 is not this agent's: it works on US-001 only");
    // US-002 was merged from its own branch (its own worker's work), not from US-001's claim.
    expect(readLog(log).filter((l) => l.story === 'US-002')).toHaveLength(1);
    expect(git(repo, 'log', '--first-parent', '--format=%s', BRANCH)).toContain(
      'ralph: merge US-002 (Story US-002) from ralph/par--US-002',
    );
    // US-001's commit changed the prompt: the merge keeps the plan side of it, as of the runner's other files.
    expect(git(repo, 'log', '--first-parent', '--format=%s', BRANCH)).toContain(
      'ralph: merge US-001 (Story US-001) from ralph/par--US-001',
    );
    expect(git(repo, 'show', `${BRANCH}:ralph/prompt.md`)).not.toContain('Mark every story passed');
  }, 120_000);

  it('an agent that moves the plan branch to its unverified work stops the run (exit 6); nothing more is merged', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }]);
    const { env } = fakeEnv({ FAKE_PAR_MOVE_PLAN: `US-001:${BRANCH}`, FAKE_PAR_SLOW: 'US-002' });
    const r = await parallelRalph(repo, 2, 10, env);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(
      /the plan branch ralph\/par moved from [0-9a-f]{7} to [0-9a-f]{7} behind the runner's back/,
    );
    expect(r.stderr).toContain(`git update-ref refs/heads/${BRANCH}`);
    // No merge commit of the queue is on the branch: the runner never built on the moved tip.
    expect(mergeOrder(repo)).toEqual([]);
  }, 120_000);

  it('a rate limit one worker hits holds every new start until its wait is over', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const { env } = fakeEnv({ FAKE_PAR_LIMIT: 'US-001', RALPH_RETRY_MS: '5000' });
    const r = await parallelRalph(repo, 2, 10, env, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { type: string; time: string; iteration?: number; waitMs?: number; worker?: number },
      );
    const limit = events.find((e) => e.type === 'rate-limit')!;
    expect(limit.worker).toBeGreaterThan(0);
    // US-002's worker was free long before the wait ended, yet the third agent started only after it.
    const third = events.find((e) => e.type === 'iteration-start' && e.iteration === 3)!;
    expect(Date.parse(third.time)).toBeGreaterThanOrEqual(Date.parse(limit.time) + limit.waitMs!);
    expect(r.stderr).toContain("no worker starts another agent until this rate limit's wait is over");
  }, 120_000);

  it("one worker's change to .git/config is undone, and never put back by another worker's guard", async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const config = readFileSync(path.join(repo, '.git/config'), 'utf8');
    // US-001 sets the key, then works 3 s more: US-003 starts on the worker US-002 freed while the key is set.
    const { log, env } = fakeEnv({ FAKE_PAR_CONFIG: 'US-001', FAKE_PAR_SLOW: 'US-001' });
    const r = await parallelRalph(repo, 2, 10, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/changed files the runner trusts \(\S*config \(core\.fsmonitor\)\)/);
    expect(readFileSync(path.join(repo, '.git/config'), 'utf8')).toBe(config);
    // US-002's guard found the key (it cannot tell whose agent set it): both claims made while it was set are
    // rejected and done again; US-003, started after it was undone, went through once.
    expect(r.stderr).toMatch(
      /US-00[12] rejected: while its agent ran, worker [12]'s guard found that an agent changed files the runner trusts/,
    );
    const runs = readLog(log);
    expect(runs.filter((l) => l.story === 'US-001')).toHaveLength(2);
    expect(runs.filter((l) => l.story === 'US-002')).toHaveLength(2);
    expect(runs.filter((l) => l.story === 'US-003')).toHaveLength(1);
  }, 120_000);

  it('Ctrl-C stops every worker; --resume-last continues the whole set and finishes', async () => {
    const repo = parallelRepo([{ id: 'US-001' }, { id: 'US-002' }, { id: 'US-003' }]);
    const started = testdir('ralphkit-started-');
    const { env } = fakeEnv({ FAKE_PAR_STARTED: started, FAKE_PAR_DELAY_MS: '60000' });
    const run = startRalph(repo, parallelArgs(2, 10, ['--name', 'par']), env);
    // Both workers' agents running: their pids written (a file can exist before its pid is in it).
    const pids = await Promise.all(['US-001', 'US-002'].map((id) => pidFrom(path.join(started, id), 60_000)));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    // Both agents are gone (their process groups were stopped), not only the one a single loop would have.
    for (const pid of pids) expect(isGone(pid)).toBe(true);
    const state = JSON.parse(readFileSync(path.join(repo, 'ralph/.runs/par/state.json'), 'utf8')) as {
      status: string;
      parallel: { states: Array<{ phase: string }> };
    };
    expect(state.status).toBe('interrupted');
    expect(state.parallel.states.map((w) => w.phase)).toEqual(['idle', 'idle']);
    const again = await ralph(repo, ['--resume-last'], { ...env, FAKE_PAR_DELAY_MS: '0' }, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002', 'US-003']);
  }, 180_000);

  it("kill -9 of the runner during a merge's checks, then --resume-last: no verified commit lost, every story merged", async () => {
    const hold = path.join(testdir('ralphkit-hold-'), 'held');
    const holder = path.join(testdir('ralphkit-holder-'), 'hold.mjs');
    // US-002's check holds (once) when it runs where US-001's work is too: only a merge commit has both.
    writeFileSync(
      holder,
      `import { existsSync, writeFileSync } from 'node:fs';\nif (existsSync('work/US-001.txt') && existsSync('work/US-002.txt') && !existsSync(${JSON.stringify(hold)})) { writeFileSync(${JSON.stringify(hold)}, String(process.pid)); setInterval(() => {}, 1000); }\n`,
    );
    const repo = parallelRepo([
      { id: 'US-001' },
      { id: 'US-002', checks: ['test -f work/US-002.txt', `node ${holder}`] },
    ]);
    const { env } = fakeEnv({ FAKE_PAR_SLOW: 'US-002' });
    const run = startRalph(repo, parallelArgs(2, 10, ['--name', 'k9']), env);
    await until('the merge of US-002 being verified', () => existsSync(hold), 90_000);
    const verifiedHead = git(repo, 'rev-parse', `${BRANCH}--US-002`);
    const tipBefore = git(repo, 'rev-parse', BRANCH);
    run.child.kill('SIGKILL');
    await run.done;
    // The held check outlives the runner it belonged to; the test stops it.
    const checkPid = Number(readFileSync(hold, 'utf8'));
    onTestFinished(() => {
      try {
        process.kill(checkPid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    });
    // The branch did not move to the merge under verification.
    expect(git(repo, 'rev-parse', BRANCH)).toBe(tipBefore);
    const again = await ralph(repo, ['--resume-last'], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002']);
    // The commit verified on the story branch before the kill is in the plan branch's history.
    expect(() => git(repo, 'merge-base', '--is-ancestor', verifiedHead, BRANCH)).not.toThrow();
  }, 180_000);
});
