// Trust anchors in refs (issue 26, class 6): a resume reads the loop's plan commit and its plan record from
// refs/ralphkit/loops/<id>/{pins,plan}, which an agent can move. The runner seals what it set them to
// (ralph/.runs/<id>/anchors.json, HMAC with the verdict key) and a resume whose refs differ stops with exit 6.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { git } from '../../../support/repo.js';
import { renderPlan } from '../../../support/loop-repo.js';
import { engine, planRepo, WORKER } from '../../../support/lifecycle.js';
import { keyEnv } from '../../../support/verdict-note.js';

const PINS = 'refs/ralphkit/loops/x/pins';
const PLAN = 'refs/ralphkit/loops/x/plan';

/** A loop "x" that did one of its two stories and stopped at its limit (exit 1): resumable. */
async function stoppedLoop() {
  const env = keyEnv();
  const dir = planRepo(renderPlan({ stories: 2 }));
  const first = await engine(dir, ['run', ...WORKER, '--name', 'x', '1'], env);
  expect(first.code, first.stderr).toBe(1);
  const resume = (...args: string[]) => engine(dir, ['run', '--resume', 'x', ...args, '5'], env);
  return { dir, env, resume, planCommit: git(dir, 'rev-parse', PINS), planBlob: git(dir, 'rev-parse', PLAN) };
}

const anchors = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/x/anchors.json'), 'utf8'));

/** A commit on top of HEAD that nothing else names, as an agent would make for the pins ref to point at. */
function strayCommit(dir: string): string {
  return execFileSync('git', ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'tests of my own'], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
}

describe("resume: the loop's refs are held against what the runner sealed", () => {
  it('an honest resume passes: the seal names both refs as the runner left them, and the loop finishes', async () => {
    const { dir, resume, planCommit, planBlob } = await stoppedLoop();
    expect(anchors(dir)).toMatchObject({
      loop: 'x',
      pins: planCommit,
      plan: planBlob,
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const r = await resume();
    expect(r.code, r.stderr).toBe(0);
    // Every settlement moved the plan ref, and the seal with it.
    expect(anchors(dir)).toMatchObject({ pins: planCommit, plan: git(dir, 'rev-parse', PLAN) });
  });

  it("moved pins: exit 6 naming the ref and what the loop recorded; the hint's commands put them back and the loop finishes", async () => {
    const { dir, resume, planCommit } = await stoppedLoop();
    const stray = strayCommit(dir);
    git(dir, 'update-ref', PINS, stray);
    const r = await resume();
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      `${PINS} (its plan commit: the tests checks run with) points at ${stray.slice(0, 12)}, but the loop recorded ${planCommit.slice(0, 12)}`,
    );
    expect(r.stderr).toContain(`git update-ref ${PINS} ${planCommit}`);
    expect(r.stderr).toContain('--resume x --repin');
    expect(git(dir, 'rev-parse', PINS)).toBe(stray); // nothing moved by the refusal
    git(dir, 'update-ref', PINS, planCommit);
    expect((await resume()).code).toBe(0);
  });

  it('a plan record moved to a plan whose checks were weakened (the same edit on disk, committed): exit 6, not a silent baseline', async () => {
    const { dir, resume } = await stoppedLoop();
    const plan = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
    const forged = `${JSON.stringify({ ...plan, checks: ['true'] }, null, 2)}\n`;
    writeFileSync(path.join(dir, 'ralph/prd.json'), forged);
    git(dir, 'commit', '-qam', 'plan: simpler checks');
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: dir,
      input: forged,
      encoding: 'utf8',
    }).trim();
    git(dir, 'update-ref', PLAN, blob);
    const r = await resume();
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`${PLAN} (the runner's record of the plan) points at ${blob.slice(0, 12)}`);
  });

  it('a gone ref is a moved one (exit 6)', async () => {
    const { dir, resume } = await stoppedLoop();
    git(dir, 'update-ref', '-d', PINS);
    const r = await resume();
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`${PINS} (its plan commit: the tests checks run with) is gone`);
  });

  it("--repin accepts moved pins on purpose: a warning, the tests pinned at HEAD, the plan record the runner's own again; never stored", async () => {
    const { dir, resume, planBlob } = await stoppedLoop();
    git(dir, 'update-ref', PINS, strayCommit(dir));
    const junk = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: dir,
      input: '{}\n',
      encoding: 'utf8',
    }).trim();
    git(dir, 'update-ref', PLAN, junk);
    const r = await resume('--repin');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /--repin: loop x's refs were not what the runner recorded:[\s\S]*the tests are pinned again at HEAD; the plan record is the runner's own again/,
    );
    expect(git(dir, 'cat-file', '-t', PLAN)).toBe('blob');
    expect(git(dir, 'rev-parse', PLAN)).not.toBe(junk);
    expect(planBlob).not.toBe(junk);
    const state = JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/x/state.json'), 'utf8'));
    expect(state.options).not.toHaveProperty('repin');
    expect(state.options).not.toHaveProperty('acceptPlanEdits');
  });

  it('a seal that does not check out (anchors.json edited without the key) is exit 6', async () => {
    const { dir, resume } = await stoppedLoop();
    const stray = strayCommit(dir);
    git(dir, 'update-ref', PINS, stray);
    writeFileSync(path.join(dir, 'ralph/.runs/x/anchors.json'), JSON.stringify({ ...anchors(dir), pins: stray }));
    const r = await resume();
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain('the seal of its refs in ralph/.runs/x/anchors.json does not check out');
  });

  it('no seal at all while the refs exist (a loop of an older ralphkit, or the file removed): exit 6; --repin continues', async () => {
    const { dir, resume } = await stoppedLoop();
    rmSync(path.join(dir, 'ralph/.runs/x/anchors.json'));
    const r = await resume();
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain('it has no seal of its refs');
    expect((await resume('--repin')).code).toBe(0);
    expect(existsSync(path.join(dir, 'ralph/.runs/x/anchors.json'))).toBe(true);
  });

  it('a runner killed between sealing and moving its plan ref: the ref at the sealed previous value is moved on, no stop', async () => {
    const { dir, resume } = await stoppedLoop();
    const seal = anchors(dir);
    expect(seal.previous.plan).toMatch(/^[0-9a-f]{40}$/);
    git(dir, 'update-ref', PLAN, seal.previous.plan);
    const r = await resume();
    expect(r.code, r.stderr).toBe(0);
  });
});
