// The property behind "exit 0 means done" (SPEC §6): after ANY exit 0 of the real runner, every check of the plan
// passes in a fresh clone of the final commit with the plan commit's tests, checked here independently of the
// runner's own code. The agent is a seeded mixture of honest work and the attacks (test/fixtures/attacks/random.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackPlan, copyRepo, prepareTemplate, ralph, readPrd, type Template } from '../support/attack-repo.js';

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

/** Runs every check of the plan the way a reviewer would: a clone of `commit`, the tests of `planCommit` put back. */
function checksHoldAt(dir: string, commit: string, planCommit: string): string[] {
  const clone = mkdtempSync(path.join(tmpdir(), 'ralphkit-property-'));
  const sh = (cmd: string, cwd = clone) =>
    execFileSync('sh', ['-c', cmd], {
      cwd,
      encoding: 'utf8',
      stdio: 'pipe',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    });
  try {
    sh(`git clone -q --no-checkout ${JSON.stringify(dir)} ${JSON.stringify(clone)}`, tmpdir());
    sh(`git -c core.hooksPath=/dev/null checkout -q --detach ${commit}`);
    sh(`git checkout -q ${planCommit} -- test package.json && rm -f .npmrc`);
    const prd = JSON.parse(sh(`git show ${planCommit}:ralph/prd.json`)) as ReturnType<typeof attackPlan>;
    const failed: string[] = [];
    for (const c of [...(prd.checks ?? []), ...prd.userStories.flatMap((s) => s.checks ?? [])]) {
      try {
        sh(c);
      } catch {
        failed.push(c);
      }
    }
    return failed;
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
}

describe("after any exit 0, every check passes on the final commit with the plan commit's tests", () => {
  let template: Template;
  beforeAll(async () => {
    template = await prepareTemplate();
  });
  afterAll(() => template?.remove());

  const codes: number[] = [];
  it.each(SEEDS)('seed %i', async (seed) => {
    const dir = copyRepo(template);
    const r = await ralph(dir, 'random', ['--no-progress-limit', '6', '6'], { RANDOM_SEED: String(seed) });
    expect([0, 1, 3, 4], `${r.stdout}\n${r.stderr}`).toContain(r.code);
    codes.push(r.code as number);
    if (r.code !== 0) return;
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    expect(readPrd(dir).userStories.every((s) => s.passes === true)).toBe(true);
    expect(checksHoldAt(dir, head, template.planCommit), r.stderr).toEqual([]);
  });

  it('the seeds reach both ends: some mixtures exit 0 (the property is exercised), some do not', () => {
    expect(codes).toHaveLength(SEEDS.length);
    expect(codes.filter((c) => c === 0).length).toBeGreaterThan(0);
    expect(codes.filter((c) => c !== 0).length).toBeGreaterThan(0);
  });
});
