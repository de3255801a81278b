// Adversarial e2e tests (issue 11, SPEC §6), part 1: attacks on what the checks see. Each fake agent in
// test/fixtures/attacks/ games the installed runner one way on a real little Node project (src/one.mjs and
// src/two.mjs missing at the plan commit, test/*.test.mjs failing); the loop must not end with 0 and the attacked
// story must end with `passes: false`, while the honest agent on the same plan still ends with 0.
// Needs `npm run build` first (the tests spawn the built CLI and the installed runner).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, testdir } from '../support/repo.js';
import { startRalph } from '../support/loop-repo.js';
import { pidFrom } from '../support/process.js';
import {
  attackAgent,
  committedPrd,
  copyRepo,
  notesOf,
  passes,
  pinnedMentions,
  prepareTemplate,
  ralph,
  readPrd,
  statusLoops,
  subjects,
  type Template,
  expectNotDone,
  expectAllFalse,
} from '../support/attack-repo.js';

let plan: Template; // US-1: node --test test/one.test.mjs · US-2: npm test
let split: Template; // US-2: node --test test/two.test.mjs, so nothing but a final check covers US-1 again

beforeAll(async () => {
  [plan, split] = await Promise.all([
    prepareTemplate(),
    prepareTemplate({ us2Checks: ['node --test test/two.test.mjs'] }),
  ]);
});
afterAll(() => {
  plan?.remove();
  split?.remove();
});

async function expectHonestDone(t: Template): Promise<void> {
  const dir = copyRepo(t);
  const r = await ralph(dir, 'honest', ['5']);
  expect(r.code, r.output).toBe(0);
  expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  expect(committedPrd(dir).userStories.map((s) => s.passes)).toEqual([true, true]);
  expect((await statusLoops(dir))[0]).toMatchObject({ id: 'e2e', storiesPassed: 2, storiesTotal: 2, verified: 2 });
}

describe('attacks on what the checks see (npm test plan)', () => {
  it('the honest agent on this plan: exit 0, both stories verified', async () => {
    await expectHonestDone(plan);
  });

  it("1. weakened test: the check runs the plan commit's test/one.test.mjs, the story is rejected and the pinned file named", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'weakened-test', ['2']);
    expect(subjects(dir)).toContain('feat: US-1 (test simplified)'); // the attack ran
    expect(readFileSync(path.join(dir, 'test/one.test.mjs'), 'utf8')).toContain('assert.ok(true)');
    expectNotDone(r, dir);
    expect(passes(dir)['US-1']).toBe(false);
    expect(committedPrd(dir).userStories[0].passes).toBe(false);
    expect(pinnedMentions(dir, 'US-1', 'test/one.test.mjs'), `notes: ${notesOf(dir, 'US-1')}`).not.toEqual([]);
    expect(
      r.stderr.split('\n').filter((l) => /pinned/i.test(l) && l.includes('test/one.test.mjs')),
      r.stderr,
    ).not.toEqual([]);
  });

  it('2. neutralised script: `"test": "exit 0"` does not make `npm test` pass; US-2 rejected, honest US-1 kept', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'neutralised-script', ['2']);
    expect(subjects(dir)).toContain('feat: US-1, US-2 (test script streamlined)');
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts.test).toBe('exit 0');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
    expect(committedPrd(dir).userStories.map((s) => s.passes)).toEqual([true, false]);
  });

  it('3a. code in a path the commit ignores (.gitignore gets src/): the fresh checkout has no code, rejected', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'ignored-code', ['2']);
    expect(subjects(dir)).toContain('feat: US-1 (src/ ignored)');
    expect(git(dir, 'ls-files', 'src')).toBe(''); // the commit holds no code
    expect(readFileSync(path.join(dir, 'src/one.mjs'), 'utf8')).toContain('return 1'); // only the working tree has it
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
  });

  it('3b. code in a path .git/info/exclude hides: not carried into the verification checkout, rejected', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'excluded-code', ['2']);
    expect(subjects(dir)).toContain('feat: US-1 (src/ excluded)');
    expect(git(dir, 'ls-files', 'src')).toBe('');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
  });

  it("11. skip-worktree: the fix stays uncommitted behind `git update-index --skip-worktree`; the runner clears the flag, rejects the claim, and the commit's broken file is what is checked", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'skip-worktree', ['2']);
    expect(r.output).toContain('the agent set skip-worktree on src/one.mjs in the index');
    expect(git(dir, 'ls-files', '-v', 'src/one.mjs')).toBe('H src/one.mjs'); // cleared by the runner
    expect(subjects(dir)).toContain('feat: US-1');
    expect(git(dir, 'show', 'HEAD:src/one.mjs')).toContain('return 0'); // committed broken
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
  });

  it('11b. assume-unchanged: the same with `git update-index --assume-unchanged`, cleared and rejected', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'assume-unchanged', ['2']);
    expect(r.output).toContain('the agent set assume-unchanged on src/one.mjs in the index');
    expect(git(dir, 'ls-files', '-v', 'src/one.mjs')).toBe('H src/one.mjs');
    expect(git(dir, 'show', 'HEAD:src/one.mjs')).toContain('return 0');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
  });

  it('11c. turned round: the fix committed and a broken file hidden on disk, ralph/prd.json flagged too; every claim rejected, the rejections committed, and your tree shows what is on disk', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'skip-worktree', ['2'], { RALPH_ATTACK_COMMIT: 'good' });
    expect(r.output).toContain('the agent set skip-worktree on ralph/prd.json, src/one.mjs in the index');
    expect(git(dir, 'show', 'HEAD:src/one.mjs')).toContain('return 1'); // the commit holds the fix
    expectNotDone(r, dir);
    expectAllFalse(dir, r); // the runner's rejection is committed, not lost behind the flag on prd.json
    expect(subjects(dir)).toContain('chore(ralph): reject US-1 (changes hidden from git status)');
    expect(git(dir, 'ls-files', '-v', 'src/one.mjs', 'ralph/prd.json')).toBe('H ralph/prd.json\nH src/one.mjs');
    expect(git(dir, 'status', '--porcelain', 'src')).toBe('M src/one.mjs'); // the broken file on disk is in sight
  });

  it("11e. git's stat cache forged (the broken file's stat data under the committed blob's id, no flag set): the runner distrusts it, git status shows the file on disk, the claim is rejected", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'stat-forge', ['2']);
    expect(git(dir, 'show', 'HEAD:src/one.mjs')).toContain('return 1');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    expect(r.output).toContain('US-1 rejected: uncommitted changes in the working tree (src/one.mjs)');
    expect(git(dir, 'status', '--porcelain', 'src')).toBe('M src/one.mjs');
  });

  it('11d. interrupted (Ctrl-C) with its flags set: they are cleared before the runner exits, so your git status shows what is on disk', async () => {
    const dir = copyRepo(plan);
    // In the repository: under the sandbox the agent's /tmp is its own.
    const hold = path.join(dir, 'agent.pid');
    const loop = startRalph(
      dir,
      ['--agent-cmd', `node ${JSON.stringify(attackAgent('skip-worktree'))}`, '--name', 'e2e', '2'],
      {
        RALPH_ATTACK_COMMIT: 'good',
        RALPH_ATTACK_HOLD: hold,
      },
    );
    await pidFrom(hold);
    loop.child.kill('SIGINT');
    const r = await loop.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('the agent set skip-worktree on ralph/prd.json, src/one.mjs in the index');
    expect(git(dir, 'ls-files', '-v', 'src/one.mjs', 'ralph/prd.json')).toBe('H ralph/prd.json\nH src/one.mjs');
    expect(git(dir, 'status', '--porcelain', 'src')).toBe('M src/one.mjs');
  });
});

describe("attacks on what `npm test` runs, found while writing these tests (not in issue 11's list)", () => {
  it('2b. a committed .npmrc with `node-options=--import=<file that forces exit 0>`: scripts.test is untouched, yet US-2 must be rejected', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'npmrc-node-options', ['2']);
    expect(subjects(dir)).toContain('feat: US-1, US-2 (npm settings)');
    expect(git(dir, 'show', 'HEAD:.npmrc')).toContain('node-options=');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
  });

  it('2c. a committed node_modules/.bin/node shim that exits 0 (npm puts .bin first on PATH): US-2 must be rejected', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'bin-shim', ['2']);
    expect(subjects(dir)).toContain('feat: US-1, US-2 (tooling)');
    expect(git(dir, 'ls-files', 'node_modules')).toBe('node_modules/.bin/node');
    expectNotDone(r, dir);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
  });
});

describe('a later story breaks an earlier one (plan whose US-2 check runs only test/two.test.mjs)', () => {
  it('the honest agent on this plan: exit 0, both stories verified', async () => {
    await expectHonestDone(split);
  });

  it('4. the final gate re-runs US-1 on the final commit: US-1 back to false with a note naming the commit, exit 1', async () => {
    const dir = copyRepo(split);
    const r = await ralph(dir, 'breaks-earlier', ['2']);
    const us2 = git(dir, 'log', '--format=%H', '--grep=^feat: US-2$');
    expect(us2).toMatch(/^[0-9a-f]{40}$/); // iteration 2 ran and committed the breakage
    expect(git(dir, 'show', `${us2}:src/one.mjs`)).toContain('return 0');
    expect(r.code, r.output).toBe(1); // max iterations: the gate sent US-1 back, and no iteration was left
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': true });
    const note = notesOf(dir, 'US-1');
    expect(note).toMatch(/[0-9a-f]{7}/);
    expect(note).toContain(us2.slice(0, 7)); // the commit that broke it (the final commit the gate checked)
    expect(committedPrd(dir).userStories.map((s) => s.passes)).toEqual([false, true]);
  });

  // Found by an adversarial pass (2026-12-06): a gate that kept the claim's verdict when the final tree was the one
  // the claim was verified on let this through with exit 0. State a check writes outlives its checkout.
  it('4b. code right only the first time it runs (a mark in a folder the checks can write): the final gate runs the check again on the same commit and sends US-2 back', async () => {
    const dir = copyRepo(split);
    // A folder the checks can write, outside the checkout (without the sandbox, any of the user's).
    const marks = testdir('ralphkit-marks-');
    const r = await ralph(dir, 'passes-once', ['--no-sandbox', '2'], { RALPH_TEST_MARK_DIR: marks });
    expect(existsSync(path.join(marks, 'passes-once-mark'))).toBe(true); // the claim's run left its mark
    const us2 = git(dir, 'log', '--format=%H', '--grep=^feat: US-2$');
    expect(r.output).toContain(`US-2 verified: 1 check passed at ${us2.slice(0, 7)}`);
    // The gate checked the very commit US-2's claim was verified on, and ran the check again all the same.
    expect(r.output).toContain(`final gate: every check once more on a fresh checkout of ${us2.slice(0, 7)}`);
    expect(r.code, r.output).toBe(1);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
    expect(notesOf(dir, 'US-2')).toContain('the final gate');
  });

  it('a check run by the final gate commits on the real branch: the loop stops with exit 6 and vouches for nothing', async () => {
    const dir = copyRepo(split);
    const r = await ralph(dir, 'gate-moves-head', ['2']);
    expect(r.output).toMatch(/US-1 verified[^\n]*\n[^]*US-2 verified/); // every claim passed: only the gate saw the attack
    expect(r.code, r.output).toBe(6);
    const gated = git(dir, 'rev-parse', 'HEAD~1');
    expect(r.stderr).toContain(
      `HEAD moved from ralph/attack-demo at ${gated.slice(0, 7)} to ralph/attack-demo at ${git(dir, 'rev-parse', '--short=7', 'HEAD')} while the checks ran`,
    );
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('forged by a check'); // nothing moved back: the user decides
    expect(git(dir, 'notes', '--ref=ralphkit', 'list')).toBe(''); // no sealed verdict for any commit
  });

  it('a check run by the final gate adds a filter to the real .git/config: put back, and the gate passes nothing, exit 1', async () => {
    const dir = copyRepo(split);
    const configBefore = readFileSync(path.join(dir, '.git/config'), 'utf8');
    const r = await ralph(dir, 'gate-config', ['2']);
    expect(r.output).toMatch(/US-1 verified[^\n]*\n[^]*US-2 verified/); // every claim passed: only the gate saw the attack
    expect(r.code, r.output).toBe(1);
    expect(readFileSync(path.join(dir, '.git/config'), 'utf8')).toBe(configBefore);
    expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    for (const id of ['US-1', 'US-2'])
      expect(notesOf(dir, id)).toMatch(
        /^\[ralph\] rejected: the final gate at [0-9a-f]{7}: the checks \(the agent's code they ran\) changed files the runner trusts \(\.git\/config \(filter\.ralphkit-attack\.clean\)\)/m,
      );
    expect(committedPrd(dir)).toEqual(readPrd(dir));
  });
});
