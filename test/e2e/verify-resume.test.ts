// Ctrl-C while the runner checks a claim decides nothing (exit 130). The resumed loop must decide that claim
// before any agent runs again, as part of the interrupted iteration: no iteration is spent on the re-check.
// Needs `npm run build` first (npm test does it).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, testdir, type RunResult } from '../support/repo.js';
import { startRalph } from '../support/loop-repo.js';
import { parseLedger } from '../../src/engine/store/ledger.js';
import type { Prd, Story } from '../../src/prd/types.js';
import { pidFrom } from '../support/process.js';
import { story as baseStory } from '../support/plan.js';

// Blocks while CHECK_MODE=hold (announcing its pid), fails loudly with CHECK_MODE=fail, passes otherwise.
const CHECK =
  'case "$CHECK_MODE" in hold) echo $$ > "$CHECK_PID"; exec sleep 120;; fail) echo "boom from the check"; exit 3;; esac';
const AGENT = `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`;

const story = (id: string, priority: number): Story =>
  baseStory(id, { acceptanceCriteria: ['done'], priority, notes: '' });

interface Setup {
  dir: string;
  env: NodeJS.ProcessEnv;
  agentRuns(): Array<{ iteration: number; stories: Array<{ id: string; passes: boolean; notes: string }> }>;
}

async function installed(stories: number): Promise<Setup> {
  const prd: Prd = {
    project: 'Demo',
    branchName: 'ralph/demo',
    checks: [CHECK],
    userStories: Array.from({ length: stories }, (_, i) => story(`US-${i + 1}`, i + 1)),
  };
  const dir = installedRepo({
    skills: false,
    plan: `${JSON.stringify(prd, null, 2)}\n`,
    message: 'chore: install ralphkit',
  });
  const outside = testdir();
  const log = path.join(outside, 'agent.jsonl');
  return {
    dir,
    env: { AGENT_LOG: log, CHECK_PID: path.join(outside, 'check.pid'), TMPDIR: testdir('ralphkit-tmp-') },
    agentRuns: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [],
  };
}

/** Runs the loop until the first claim's check is running, then presses Ctrl-C. */
async function interruptFirstCheck(s: Setup, max: string): Promise<RunResult> {
  // --no-weak-check: the start-up probe would run the plan's check (held) before any claim exists.
  const loop = startRalph(s.dir, ['--agent-cmd', AGENT, '--pause', '0', '--no-weak-check', '--name', 'e2e', max], {
    ...s.env,
    CHECK_MODE: 'hold',
  });
  await pidFrom(s.env.CHECK_PID!); // the check runs
  loop.child.kill('SIGINT');
  const r = await loop.done;
  expect(r.code, r.stderr).toBe(130);
  expect(verdicts(s.dir)).toEqual([]); // nothing decided yet
  expect(readPrd(s.dir).userStories[0].passes).toBe(true); // the claim is pending
  return r;
}

function resume(s: Setup, mode: 'pass' | 'fail', ...args: string[]): Promise<RunResult> {
  return run(path.join(s.dir, 'ralph/ralph.sh'), ['--resume-last', ...args], {
    cwd: s.dir,
    env: { ...s.env, CHECK_MODE: mode },
  });
}

const readPrd = (dir: string): Prd => JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as Prd;
const readState = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8'));
function verdicts(dir: string): string[] {
  const file = path.join(dir, 'ralph/.runs/e2e/ledger.jsonl');
  if (!existsSync(file)) return [];
  return parseLedger(readFileSync(file, 'utf8')).flatMap((l) =>
    l.kind === 'verdict' && !l.gate ? [`${l.iteration}:${l.story}:${l.status}`] : [],
  );
}

describe('resuming after Ctrl-C during a check', () => {
  it('the pending claim is verified first; when every story then passes, exit 0 without running the agent again', async () => {
    const s = await installed(1);
    await interruptFirstCheck(s, '3');
    const r = await resume(s, 'pass');
    expect(r.code, r.stderr).toBe(0);
    expect(s.agentRuns().map((a) => a.iteration)).toEqual([1]);
    expect(verdicts(s.dir)).toEqual(['1:US-1:verified']);
    expect(r.stderr).toMatch(
      /iteration 1 was interrupted while its claims were checked; checking US-1 now, before the agent runs again/,
    );
    expect(readState(s.dir)).toMatchObject({ status: 'complete', exitCode: 0, iteration: 1, iterationDone: true });
  });

  it('an accepted claim: the agent runs next as iteration 2 and already sees it decided', async () => {
    const s = await installed(2);
    await interruptFirstCheck(s, '3');
    const r = await resume(s, 'pass');
    expect(r.code, r.stderr).toBe(0);
    const runs = s.agentRuns();
    expect(runs.map((a) => a.iteration)).toEqual([1, 2]);
    expect(runs[1].stories[0]).toEqual({ id: 'US-1', passes: true, notes: '' });
    expect(verdicts(s.dir)).toEqual(['1:US-1:verified', '2:US-2:verified']);
    expect(readState(s.dir)).toMatchObject({ status: 'complete', iteration: 2, noProgressStreak: 0 });
  });

  it('a failing claim: rejected with the note and the progress block before the agent runs again', async () => {
    const s = await installed(2);
    await interruptFirstCheck(s, '2');
    const r = await resume(s, 'fail');
    expect(r.code, r.stderr).toBe(1); // max iterations: the agent redid US-1 in iteration 2 and failed again
    const runs = s.agentRuns();
    expect(runs.map((a) => a.iteration)).toEqual([1, 2]);
    expect(runs[1].stories[0]).toMatchObject({
      id: 'US-1',
      passes: false,
      notes: expect.stringMatching(/^\[ralph\] rejected: check `case .*` exited 3$/),
    });
    const progress = readFileSync(path.join(s.dir, 'ralph/progress.txt'), 'utf8');
    expect(progress).toContain('ralph: US-1 rejected (iteration 1)');
    expect(progress).toContain('boom from the check');
    expect(verdicts(s.dir)).toEqual(['1:US-1:rejected', '2:US-1:rejected']);
    expect(git(s.dir, 'log', '--format=%s')).toContain('chore(ralph): reject US-1 (check failed)');
  });

  it('Ctrl-C again during the re-check: still nothing decided, and the next resume checks it again', async () => {
    const s = await installed(1);
    await interruptFirstCheck(s, '3');
    await interruptResume(s);
    const r = await resume(s, 'pass');
    expect(r.code, r.stderr).toBe(0);
    expect(s.agentRuns().map((a) => a.iteration)).toEqual([1]);
    expect(verdicts(s.dir)).toEqual(['1:US-1:verified']);
  });
});

describe('resuming after the runner was killed (-9) during a check', () => {
  it("finishes the interrupted iteration the same way: the claim is decided before the agent runs; the killed runner's checkout is removed", async () => {
    const s = await installed(2);
    const loop = startRalph(s.dir, ['--agent-cmd', AGENT, '--pause', '0', '--no-weak-check', '--name', 'e2e', '3'], {
      ...s.env,
      CHECK_MODE: 'hold',
    });
    // Not just the file: `echo $$ >` creates it before writing the pid, and an empty file read as pid 0 would make
    // the kill below `process.kill(-0, 'SIGKILL')`, which kills the test runner's own process group (CI included).
    const checkPid = await pidFrom(s.env.CHECK_PID!);
    loop.child.kill('SIGKILL');
    await loop.done;
    process.kill(-checkPid, 'SIGKILL'); // the check has its own process group; nobody is left to stop it
    // The verification checkout the check ran in, named after its loop and runner: nobody removed it.
    const checkouts = () => readdirSync(s.env.TMPDIR!).filter((n) => n.startsWith('ralph-verify-'));
    expect(checkouts()).toEqual([expect.stringMatching(new RegExp(`^ralph-verify-e2e~${loop.child.pid}~\\d*-`))]);
    expect(readState(s.dir)).toMatchObject({
      status: 'running',
      iteration: 1,
      iterationDone: false,
      verifying: { tag: null },
    });
    const r = await resume(s, 'pass');
    expect(r.code, r.stderr).toBe(0);
    expect(s.agentRuns().map((a) => a.iteration)).toEqual([1, 2]);
    expect(verdicts(s.dir)).toEqual(['1:US-1:verified', '2:US-2:verified']);
    expect(r.stderr).toMatch(
      /removed 1 verification checkout (and 1 checks' HOME folder )?of stopped runners from \S+ \(loop e2e\)/,
    );
    expect(checkouts()).toEqual([]);
  });
});

async function interruptResume(s: Setup): Promise<void> {
  const { rmSync } = await import('node:fs');
  rmSync(s.env.CHECK_PID!, { force: true });
  const loop = startRalph(s.dir, ['--resume-last'], { ...s.env, CHECK_MODE: 'hold' });
  await pidFrom(s.env.CHECK_PID!); // the check runs
  loop.child.kill('SIGINT');
  const r = await loop.done;
  expect(r.code, r.stderr).toBe(130);
  expect(verdicts(s.dir)).toEqual([]);
  expect(s.agentRuns().map((a) => a.iteration)).toEqual([1]);
  expect(readState(s.dir)).toMatchObject({ status: 'interrupted', iteration: 1, iterationDone: false });
}
