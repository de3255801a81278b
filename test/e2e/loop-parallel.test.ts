// --parallel <n>: one plan, n workers in worktrees of their own, a merge queue that verifies again after each merge.
// Real git, the installed ralph/ralph.sh, the real CLI, fake agents (test/fixtures/agents/story-worker.mjs).
import { describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startRalph } from '../support/loop-repo.js';
import { git, testdir } from '../support/repo.js';
import { until } from '../support/process.js';
import {
  BRANCH,
  countRuns,
  fakeEnv,
  mergeOrder,
  parallelRepo,
  planOn,
  readLog,
  parallelArgs,
  parallelRalph,
} from '../support/parallel-repo.js';

describe('--parallel', () => {
  it('runs independent and dependent stories over 3 workers; every story verified on the plan branch, in dependency order', async () => {
    const repo = parallelRepo([
      { id: 'US-001' },
      { id: 'US-002' },
      { id: 'US-003', dependsOn: ['US-001', 'US-002'] },
      { id: 'US-004', dependsOn: ['US-003'] },
      // A check that passes before any work (weak): the exit line names the story, whichever gate was the last.
      { id: 'US-005', checks: ['test -f README.md'] },
    ]);
    const head = git(repo, 'rev-parse', 'HEAD');
    // A branch of yours that US-002's first agent run also moves (adversarial pass 27): put back right after that
    // run, as a single loop does, and that attempt's claim rejected; a later attempt finds it back and passes.
    git(repo, 'branch', 'develop');
    const { log, env } = fakeEnv({ FAKE_PAR_DELAY_MS: '300', FAKE_PAR_MOVE_BRANCH: 'US-002:develop' });
    const r = await parallelRalph(repo, 3, 20, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /US-002 not accepted in iteration \d+: .*an agent of this run \(which one is not known: the workers run side by side\) moved branches other than the loop's: develop \(to [0-9a-f]{7}; put back at [0-9a-f]{7}, kept as refs\/ralphkit\/loops\/[^/]+\/moved\/develop\)/,
    );
    expect(readFileSync(path.join(env.FAKE_PAR_MARKS, 'seen-develop'), 'utf8')).toBe(head);
    expect(git(repo, 'rev-parse', 'develop')).toBe(head);
    expect(r.stderr).toMatch(/all stories pass under verification; US-005 verified \(weak check\)/);
    // Every story passes on the plan branch and its work is there.
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual(
      ['US-001', 'US-002', 'US-003', 'US-004', 'US-005'].map((id) => [id, true]),
    );
    for (const id of ['US-001', 'US-002', 'US-003', 'US-004', 'US-005'])
      expect(git(repo, 'show', `${BRANCH}:work/${id}.txt`)).toContain('done');
    // Each story arrived by a merge of its own story branch, and dependencies were merged first.
    const order = mergeOrder(repo);
    expect([...order].sort()).toEqual(['US-001', 'US-002', 'US-003', 'US-004', 'US-005']);
    expect(order.indexOf('US-003')).toBeGreaterThan(Math.max(order.indexOf('US-001'), order.indexOf('US-002')));
    expect(order.indexOf('US-004')).toBeGreaterThan(order.indexOf('US-003'));
    // A dependent story's agent started from a branch that already had its dependencies' work.
    const runs = readLog(log);
    expect(runs.find((l) => l.story === 'US-003')!.seen).toEqual(expect.arrayContaining(['US-001.txt', 'US-002.txt']));
    expect(runs.find((l) => l.story === 'US-004')!.seen).toContain('US-003.txt');
    // Agents ran in worker worktrees beside the repository, more than one of them.
    const trees = new Set(runs.map((l) => l.cwd));
    expect(trees.size).toBeGreaterThan(1);
    for (const t of trees) expect(path.dirname(t)).toBe(`${repo}.ralph-worktrees`);
    // The progress entries of every worker reached the plan branch's log.
    const progress = git(repo, 'show', `${BRANCH}:ralph/progress.txt`);
    for (const id of ['US-001', 'US-002', 'US-003', 'US-004', 'US-005'])
      expect(progress).toContain(`## ${id} (iteration`);
    // The user's tree is as it was, and a clean exit leaves no worktree and no merged story branch behind; the
    // closing lines say where the work is and what to type.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(r.stderr).toContain(
      `ralph: hint: the work is on ${BRANCH}, not in your working tree (left as it was): see it with git switch ${BRANCH}`,
    );
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(repo, 'branch', '--list', `${BRANCH}--*`)).toBe('');
    expect(r.stderr).toMatch(/\[w[123]\]|worker [123]/);
  }, 180_000);

  // The ids are ones git takes in no branch name as they are (.. and a final .lock): their story branches and the
  // kept attempt's ref are named with the ids encoded (prd/story-ref.ts).
  it('re-queues a story whose branch conflicts with one merged before it, and finishes (story ids no branch name can hold)', async () => {
    const repo = parallelRepo([{ id: 'US..1' }, { id: 'x.lock' }]);
    const { env } = fakeEnv({ FAKE_PAR_SHARED: 'US..1,x.lock', FAKE_PAR_DELAY_MS: '200' });
    const r = await parallelRalph(repo, 2, 10, env);
    expect(r.code, r.stderr).toBe(0);
    // Both sides named: the conflicting file, and the story merged since this one started; a stale base, not counted.
    expect(r.stderr).toMatch(
      /(US\.\.1|x\.lock) sent back by the merge queue: its branch does not merge onto ralph\/par at [0-9a-f]{7} \(conflict in shared\.txt with (US\.\.1|x\.lock), merged since \1 started from [0-9a-f]{7}\)/,
    );
    expect(r.stderr).toMatch(/sent back: .*; tried again on the new tip, not counted toward --no-progress-limit/);
    // Both stories' lines are in the shared file: the second attempt started from the plan branch with the first.
    expect(git(repo, 'show', `${BRANCH}:shared.txt`).split('\n').filter(Boolean).sort()).toEqual(['US..1', 'x.lock']);
    const progress = git(repo, 'show', `${BRANCH}:ralph/progress.txt`);
    expect(progress).toMatch(/ralph: (US\.\.1|x\.lock) sent back by the merge queue/);
    // The attempt that conflicted is kept, though its story branch started again from the plan's tip.
    const kept = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/ralphkit/loops/')
      .split('\n')
      .filter((r) => r.includes('/attempts/'));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/\/attempts\/(US\+2E\.1|x\+2Elock)\/[0-9a-f]{12}$/);
    expect(git(repo, 'show', `${kept[0]}:shared.txt`)).toMatch(/^(US\.\.1|x\.lock)$/);
    expect(r.stderr).toMatch(/on ralph\/par--(US\+2E\.1|x\+2Elock)\b/);
  }, 180_000);

  // Issue #29: real plans do not declare every change a story builds on, and the merge queue re-ran the checks of
  // every merged story after each merge (1 + 2 + ... + n). US-002 needs US-001's change, undeclared; the five others
  // reach the queue together. Before: US-002 failed on the old tip and, with --no-progress-limit 1, was given up
  // (exit 4); and six merges ran 6 setups and 27 checks in the queue's gates.
  it("a story that needs another's undeclared change goes again on the new tip, uncounted and told what was merged; the queue merges a batch with one run of the checks", async () => {
    const ids = ['US-001', 'US-002', 'US-003', 'US-004', 'US-005', 'US-006'];
    const repo = parallelRepo(
      ids.map((id) => ({ id })),
      ['test -f README.md'],
      'mkdir -p .deps',
    );
    const { log, env } = fakeEnv({ FAKE_PAR_NEEDS: 'US-002:US-001', FAKE_PAR_BARRIER: '5' });
    const r = await parallelRalph(repo, 6, 20, env, ['--no-progress-limit', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual(ids.map((id) => [id, true]));
    expect(mergeOrder(repo).at(-1)).toBe('US-002');
    // US-002's first attempt failed on the old tip and waited for the merge, not counted; the second started from the
    // tip with US-001's work, and its agent was told what had been merged since.
    expect(r.stderr).toMatch(
      /US-002 not accepted in iteration \d+: it was not claimed .*; tried again on the new tip after the next merge \(other stories are in flight\), not counted toward --no-progress-limit/,
    );
    const runs = readLog(log).filter((l) => l.story === 'US-002');
    expect(runs).toHaveLength(2);
    expect(runs[1].seen).toContain('US-001.txt');
    expect(runs[1].since).toEqual(expect.arrayContaining(['US-001', 'US-003', 'US-004', 'US-005', 'US-006']));
    // Runs of setup and checks: each claim's own (6 checkouts: 6 setups, the plan's check and the story's), then the
    // queue's gates, once per batch: when the five arrive together, 2 passes, 2 setups and 6 + 7 checks. A worker
    // noticed late makes a pass of its own (bounded below by the old queue's 6 passes and 27 checks).
    const counts = countRuns(repo);
    expect(counts.branch).toEqual({ setups: 6, checks: 12 });
    expect(counts.gate.setups).toBe(counts.gate.passes);
    expect(counts.gate.passes).toBeLessThanOrEqual(3);
    expect(counts.gate.checks).toBeLessThanOrEqual(16);
  }, 180_000);

  // Issue #29: a claim whose check failed only because another story's change was not merged yet is judged again,
  // as it is, on the new tip: no second agent run. Before, each such retry was an agent run out of max_iterations,
  // and a chain of undeclared needs ran out of them (the replay bench: 5 of 6 stories in 12 runs).
  it('work whose check failed for lack of a change merged meanwhile is judged again on the new tip, with no agent run', async () => {
    const repo = parallelRepo([
      { id: 'US-001' },
      { id: 'US-002', checks: ['test -f work/US-002.txt', 'test -f work/US-001.txt'] },
    ]);
    const { log, env } = fakeEnv({ FAKE_PAR_SLOW: 'US-001' });
    const r = await parallelRalph(repo, 2, 2, env, ['--no-progress-limit', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-001', true],
      ['US-002', true],
    ]);
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002']);
    // One agent run each: US-002's work, rejected on the old tip, passed once merged onto the tip with US-001's.
    expect(
      readLog(log)
        .map((l) => l.story)
        .sort(),
    ).toEqual(['US-001', 'US-002']);
    expect(r.stderr).toMatch(
      /US-002 not accepted in iteration \d+: check `test -f work\/US-001.txt` exited 1; its work judged again as it is on the new tip after the next merge/,
    );
    expect(r.stderr).toMatch(
      /US-002: the work of iteration \d+ merged onto the new tip [0-9a-f]{7} as [0-9a-f]{7}, judged again there before any agent redoes it/,
    );
    expect(r.stderr).toMatch(/US-002 verified: 3 checks passed/);
  }, 120_000);

  it('sends a story back when checks fail after its merge, although it passed on its own branch; a failing batch is split to find it', async () => {
    // US-001's check refuses work/poison.txt; US-002's first attempt writes it (its own check passes on its branch).
    const repo = parallelRepo([
      { id: 'US-001', checks: ['test -f work/US-001.txt', 'test ! -f work/poison.txt'] },
      { id: 'US-002' },
      { id: 'US-003' },
      { id: 'US-004' },
    ]);
    const { env } = fakeEnv({
      FAKE_PAR_POISON: 'US-002',
      FAKE_PAR_SLOW: 'US-002,US-003,US-004',
      FAKE_PAR_BARRIER: '3:US-002,US-003,US-004',
    });
    const r = await parallelRalph(repo, 4, 10, env);
    expect(r.code, r.stderr).toBe(0);
    // US-001 is merged first (the others are slow); US-002, US-003 and US-004 reach the queue together, and their
    // batch fails US-001's check. Split in halves, the batch is checked down to the part with US-002, which is sent
    // back alone; the others are merged, and US-002's second attempt (no poison) too: the poison never reached the
    // plan branch.
    expect(git(repo, 'ls-tree', '-r', '--name-only', BRANCH)).not.toContain('work/poison.txt');
    expect(r.stderr).toMatch(
      /merge queue: the batch (US-00[234], ){2}US-00[234] failed its checks; checking the first 2 on their own/,
    );
    expect(r.stderr).toMatch(
      /US-002 sent back by the merge queue: after the merge onto [0-9a-f]{7}, checks failed \(US-001/,
    );
    expect(r.stderr).not.toMatch(/US-00[34] sent back/);
    expect(mergeOrder(repo).sort()).toEqual(['US-001', 'US-002', 'US-003', 'US-004']);
    // Before blaming the batch, US-001's checks ran again on the tip its own merge had sealed (and passed there).
    // That pass over one story wrote no record: the tip's note was written once, by its own merge's pass.
    expect(r.stderr).toMatch(/merge queue: before blaming US-00[234], US-00[234], US-00[234], the checks of US-001/);
    const first = git(repo, 'log', '--first-parent', '--format=%H %s', BRANCH)
      .split('\n')
      .find((l) => l.includes(' ralph: merge US-001 ('))!
      .split(' ')[0];
    const writes = git(repo, 'log', '--format=%H', 'refs/notes/ralphkit', '--', first).split('\n');
    expect(writes).toEqual([expect.stringMatching(/^[0-9a-f]{40,64}$/)]);
  }, 180_000);
});

describe('--parallel: every published tip passes the checks of the stories merged before', () => {
  it('a story whose merge breaks one merged before is sent back before it is published, while stories are left to do', async () => {
    // US-002's first attempt writes work/poison.txt, which US-001's check refuses. US-001 is merged first (US-002 is
    // slow) and US-003 starts only once US-002 is merged, so US-002's merge is never the last. A queue that checked
    // only the batch there published the poison, found it at the last merge on US-001, and set US-001 back, which
    // its agent could not mend (exit 4).
    const repo = parallelRepo([
      { id: 'US-001', checks: ['test -f work/US-001.txt', 'test ! -f work/poison.txt'] },
      { id: 'US-002' },
      { id: 'US-003', dependsOn: ['US-002'] },
    ]);
    const r = await parallelRalph(repo, 2, 10, fakeEnv({ FAKE_PAR_POISON: 'US-002', FAKE_PAR_SLOW: 'US-002' }).env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /US-002 sent back by the merge queue: after the merge onto [0-9a-f]{7}, checks failed \(US-001/,
    );
    expect(r.stderr).not.toMatch(/US-001 fails on ralph\/par itself/);
    expect(git(repo, 'ls-tree', '-r', '--name-only', BRANCH)).not.toContain('work/poison.txt');
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002', 'US-003']);
  }, 120_000);
});

describe('--parallel: a plan branch that fails by itself', () => {
  it('does not blame the story being merged when a story merged before fails on the branch without it', async () => {
    // US-001's check also needs a file outside the repository, which goes away once US-001 is merged.
    const outside = path.join(testdir('ralphkit-outside-'), 'service-up');
    writeFileSync(outside, '');
    const repo = parallelRepo([
      { id: 'US-001', checks: ['test -f work/US-001.txt', `test -f ${outside}`] },
      { id: 'US-002' },
    ]);
    const { env } = fakeEnv({ FAKE_PAR_SLOW: 'US-002', FAKE_PAR_SLOW_MS: '6000' });
    const run = startRalph(repo, parallelArgs(2, 10, ['--no-progress-limit', '1']), env);
    const merged = (id: string) => {
      try {
        return mergeOrder(repo).includes(id);
      } catch {
        return false; // the plan branch is not there yet
      }
    };
    await until('US-001 merged', () => merged('US-001'), 60_000);
    rmSync(outside);
    const r = await run.done;
    // US-002 is merged; US-001, broken on the branch by itself, is set back and, failing again, given up (exit 4).
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(
      'US-001 fails on ralph/par itself, without US-002: set back to passes: false there; US-002 is merged again',
    );
    expect(mergeOrder(repo)).toEqual(['US-001', 'US-002']);
    expect(planOn(repo).userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-001', false],
      ['US-002', true],
    ]);
    expect(r.stderr).not.toMatch(/US-002 sent back/);
  }, 120_000);
});
