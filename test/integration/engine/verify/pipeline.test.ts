// The one verification pipeline (src/engine/verify/pipeline.ts) on real git, as the single loop, the --parallel worker,
// the merge queue and the Stop hook use it: a pass over the claims settles the runner's baseline in memory and in git
// under its seal, records where each claim was verified, and the final gate judges that baseline (never the plan on
// disk, which code a check ran can rewrite).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS } from '../../../../src/engine/cli/args.js';
import { resolvePaths } from '../../../../src/engine/plan-file.js';
import { establishTrust } from '../../../../src/engine/verify/trust.js';
import { checkAnchors } from '../../../../src/engine/verify/anchors.js';
import { readKey } from '../../../../src/engine/store/verdict-record.js';
import { finalGate, verifyClaims, verifyInput, type Pipeline } from '../../../../src/engine/verify/pipeline.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import type { RunContext } from '../../../../src/engine/types.js';
import type { CheckSandbox } from '../../../../src/engine/verify/types.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git } from '../../../support/repo.js';
import { commitAll, plan, story, verifyRepo } from '../../../support/verify-repo.js';
import { keyEnv, useKeyEnv } from '../../../support/verdict-note.js';

const PLAN = plan([story('US-1', { checks: ['sh test/one.sh'] })]);
const FILES = { 'test/one.sh': 'grep -q done src/one.txt\n', 'src/one.txt': 'todo\n' };
const PLAN_REF = 'refs/ralphkit/loops/L1/plan';

/** A new loop L1 at its plan commit: its run, its trust as the start establishes it, and its pipeline. */
async function loopAtStart(sandbox: () => CheckSandbox | undefined = () => undefined) {
  const env = { ...process.env, ...keyEnv() };
  useKeyEnv(env);
  const r = verifyRepo(PLAN, FILES);
  const options = { ...DEFAULT_OPTIONS, checkTimeoutMs: 20_000 };
  const logs: string[] = [];
  const run: RunContext = {
    id: 'L1',
    options,
    paths: resolvePaths(r.dir, r.dir, options, new Set()),
    resumed: null,
    baseline: null,
    command: 'test',
    branch: 'main',
    io: { cwd: r.dir, env, stdout: () => {}, stderr: () => {} },
    emit: (e) => void ('message' in e && logs.push(`${e.type}: ${e.message}`)),
  };
  const trust = await establishTrust(run.paths, r.dir, 'L1', false, options, null, run.emit);
  const state = { id: 'L1', costUsd: 0 } as LoopState;
  const p: Pipeline = { run, state, trust, wiring: { sandbox, retryBaseMs: 0 } };
  return { r, run, trust, p, logs };
}

/** The agent's turn: files written, US-1 flipped to passes: true, committed. Returns HEAD. */
function claim(dir: string, files: Record<string, string>): string {
  const file = path.join(dir, 'ralph/prd.json');
  const p = JSON.parse(readFileSync(file, 'utf8')) as Prd;
  p.userStories[0].passes = true;
  return commitAll(dir, { ...files, 'ralph/prd.json': `${JSON.stringify(p, null, 2)}\n` });
}

const signal = () => new AbortController().signal;

describe('the verification pipeline', () => {
  it('a pass settles the baseline in memory and in git under the seal; an accepted claim records where it was verified, a rejected one does not', async () => {
    const { r, trust, p } = await loopAtStart();
    const committed = readFileSync(r.prdPath, 'utf8');

    const liar = claim(r.dir, {});
    const rejected = await verifyClaims(p, { iteration: 1, prdBefore: committed, head: liar }, signal());
    expect(rejected.verdicts.map((v) => v.status)).toEqual(['rejected']);
    expect(JSON.parse(trust.baseline!).userStories[0].passes).toBe(false);
    expect(git(r.dir, 'cat-file', 'blob', PLAN_REF)).toBe(trust.baseline!.trimEnd());
    expect(trust.verifiedAt.size).toBe(0);
    // The plan ref moved with its seal: a resume (or the next stop of a session) finds them agreeing.
    expect((await checkAnchors(r.dir, 'L1', readKey(false))).problems).toEqual([]);

    const honest = claim(r.dir, { 'src/one.txt': 'done\n' });
    const accepted = await verifyClaims(p, { iteration: 2, prdBefore: trust.baseline!, head: honest }, signal());
    expect(accepted.verdicts.map((v) => v.status)).toEqual(['verified']);
    expect(trust.verifiedAt.get('US-1')).toBe(honest);
    // No reviewer: nothing was shipped, so a review's diff would still start at the plan commit.
    expect(trust.lastReviewed).toBeUndefined();
    expect(JSON.parse(git(r.dir, 'cat-file', 'blob', PLAN_REF)).userStories[0].passes).toBe(true);
    expect((await checkAnchors(r.dir, 'L1', readKey(false))).problems).toEqual([]);
  });

  it('the final gate judges the settled baseline, not the plan on disk: a check dropped from the file does not let a broken story through', async () => {
    const { r, trust, p } = await loopAtStart();
    const honest = claim(r.dir, { 'src/one.txt': 'done\n' });
    await verifyClaims(
      p,
      {
        iteration: 1,
        prdBefore: readFileSync(r.prdPath, 'utf8').replace('"passes": true', '"passes": false'),
        head: honest,
      },
      signal(),
    );

    const passed = await finalGate(p, 1, signal());
    expect(passed.passed).toBe(true);
    expect(trust.gatePassed).toEqual({ commit: git(r.dir, 'rev-parse', 'HEAD'), allVerified: true });

    const broke = commitAll(r.dir, { 'src/one.txt': 'todo\n' }, 'refactor');
    const onDisk = JSON.parse(readFileSync(r.prdPath, 'utf8')) as Prd;
    writeFileSync(
      r.prdPath,
      `${JSON.stringify({ ...onDisk, userStories: [{ ...onDisk.userStories[0], checks: [] }] }, null, 2)}\n`,
    );

    const gate = await finalGate(p, 2, signal());
    expect(gate.passed).toBe(false);
    expect(gate.verdicts[0]).toMatchObject({
      id: 'US-1',
      status: 'rejected',
      reason: expect.stringContaining(
        `it passed at ${honest.slice(0, 7)}, so a commit since broke it (git log --oneline ${honest.slice(0, 7)}..${broke.slice(0, 7)})`,
      ),
    });
    expect(trust.gatePassed).toBeUndefined();
    // The gate's verdict is the new baseline: the story is open again, in memory and in git.
    expect(JSON.parse(trust.baseline!).userStories[0]).toMatchObject({ passes: false, checks: ['sh test/one.sh'] });
    expect(JSON.parse(git(r.dir, 'cat-file', 'blob', PLAN_REF)).userStories[0].passes).toBe(false);
  });

  it("every verification input carries what the run wired in (the checks' sandbox) and the trust's pins and check environment", async () => {
    const sandbox: CheckSandbox = {
      bwrap: '/usr/bin/bwrap',
      home: undefined,
      readOnly: ['/x'],
      hidden: [],
      network: false,
    };
    let asked = 0;
    const { trust, p } = await loopAtStart(() => (asked++, sandbox));
    const input = verifyInput(p, 3, signal());
    expect(input).toMatchObject({
      sandbox,
      pins: trust.pins,
      checkBase: trust.checkBase,
      iteration: 3,
      loopId: 'L1',
      topLevel: trust.topLevel,
    });
    expect(asked).toBe(1);
    expect(input.review).toBeUndefined();
  });
});
