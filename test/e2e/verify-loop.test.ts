// The installed runner (ralph/ralph.sh) with fake agents that lie, forget to commit, shrink the plan or
// do honest work: what the runner lets count as done. Needs `npm run build` first (npm test does it).
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, runCli, testdir, writeFiles, type RunResult } from '../support/repo.js';
import { parseLedger, type LedgerLine } from '../../src/engine/store/ledger.js';
import type { Prd } from '../../src/prd/types.js';
import { goneWithin, pidFrom, until } from '../support/process.js';
import { startRalph } from '../support/loop-repo.js';
import { readNote } from '../support/verdict-note.js';
import { fileStory } from '../support/plan.js';

const story = fileStory;

const PLAN: Prd = {
  project: 'Demo',
  branchName: 'ralph/demo',
  checks: ['test -f README.md'],
  userStories: [story('US-1', 1), story('US-2', 2)],
};

/** A repository with ralphkit installed and `prd` as the plan, all committed. */
async function installed(prd: Prd): Promise<string> {
  const dir = installedRepo({
    skills: false,
    plan: JSON.stringify(prd, null, 2) + '\n',
    message: 'chore: install ralphkit',
  });
  return dir;
}

function ralph(dir: string, agent: string, ...args: string[]): Promise<RunResult> {
  const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', agent))}`;
  return run(
    path.join(dir, 'ralph/ralph.sh'),
    ['--agent-cmd', agentCmd, '--pause', '0', '--iteration-timeout', '30s', '--name', 'e2e', ...args],
    { cwd: dir },
  );
}

const readPrd = (dir: string): Prd => JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as Prd;
const allLines = (dir: string): LedgerLine[] =>
  parseLedger(readFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), 'utf8'));
// The claims' own lines; the final gate's (before exit 0) and the start-of-run probe's are asserted apart.
/** Each story's lines in their order, the stories in order of their first line (the gate interleaves them). */
const byStory = (lines: LedgerLine[]): LedgerLine[] => {
  const ids = [...new Set(lines.map((l) => l.story))];
  return ids.flatMap((id) => lines.filter((l) => l.story === id));
};
const ledger = (dir: string): LedgerLine[] => allLines(dir).filter((l) => !l.gate && l.kind !== 'probe');
const gateVerdicts = (dir: string) =>
  allLines(dir)
    .filter((l) => l.gate && l.kind === 'verdict')
    .map((l) => `${l.iteration}:${l.story}:${l.kind === 'verdict' ? l.status : ''}`);
const verdicts = (dir: string) =>
  ledger(dir)
    .filter((l) => l.kind === 'verdict')
    .map((l) => `${l.iteration}:${l.story}:${l.kind === 'verdict' ? l.status : ''}`);
const subjects = (dir: string) => git(dir, 'log', '--format=%s').split('\n');

describe('the runner verifies what the agent claims', () => {
  it('a liar that flips passes without the work: rejected every time, note written, loop does not exit 0', async () => {
    const dir = await installed(PLAN);
    const r = await ralph(dir, 'liar.mjs', '2');
    expect(r.code, r.stderr).toBe(1); // max iterations: the COMPLETE tag did not end the loop
    expect(r.stderr).toMatch(/COMPLETE ignored/);
    expect(readPrd(dir).userStories.map((s) => s.passes)).toEqual([false, false]);
    expect(readPrd(dir).userStories[0].notes).toBe('[ralph] rejected: check `grep -q "US-1 done" US-1.txt` exited 2'); // grep: no such file
    const progress = readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
    expect(progress).toContain('ralph: US-1 rejected (iteration 2)');
    expect(progress).toContain('Command: grep -q "US-1 done" US-1.txt\nExit code: 2\n');
    expect(verdicts(dir)).toEqual(['1:US-1:rejected', '1:US-2:rejected', '2:US-1:rejected', '2:US-2:rejected']);
    expect(subjects(dir)).toContain('chore(ralph): reject US-1 (check failed), US-2 (check failed)');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const status = await runCli(['status', '--json'], { cwd: dir });
    expect(JSON.parse(status.stdout).loops[0]).toMatchObject({ id: 'e2e', storiesPassed: 0, verified: 0, rejected: 2 });
  });

  it('an agent that does the work but does not commit it: rejected as uncommitted, loop does not exit 0', async () => {
    const dir = await installed(PLAN);
    const r = await ralph(dir, 'no-commit.mjs', '--no-progress-limit', '2', '3');
    expect(r.code, r.stderr).toBe(4); // no new commit by the agent, twice
    expect(r.stderr).toContain('US-1 rejected: uncommitted changes in the working tree (US-1.txt)');
    expect(readPrd(dir).userStories[0]).toMatchObject({
      passes: false,
      notes: expect.stringMatching(/^\[ralph\] rejected: uncommitted changes/),
    });
    expect(verdicts(dir)).toEqual(['1:US-1:rejected', '2:US-1:rejected']);
    expect(ledger(dir).filter((l) => l.kind === 'check')).toEqual([]);
    expect(readFileSync(path.join(dir, 'US-1.txt'), 'utf8')).toBe('US-1 done\n'); // the agent's work is left in place
  });

  it('an agent that deletes a story: the story is restored and a warning printed', async () => {
    const dir = await installed(PLAN);
    const r = await ralph(dir, 'deleter.mjs', '1');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/warning: .*story US-2 was deleted; restored/);
    expect(readPrd(dir).userStories.map((s) => s.id)).toEqual(['US-1', 'US-2']);
    expect(subjects(dir)[0]).toBe('chore(ralph): restore prd.json');
  });

  it('an honest agent: every story verified at its own commit, exit 0', async () => {
    const dir = await installed(PLAN);
    const r = await ralph(dir, 'honest.mjs', '5');
    expect(r.code, r.stderr).toBe(0);
    expect(readPrd(dir).userStories.map((s) => s.passes)).toEqual([true, true]);
    const shaOf = (id: string) => git(dir, 'log', '--format=%H', `--grep=^feat: ${id}$`);
    const lines = ledger(dir);
    expect(lines.map((l) => [l.iteration, l.story, l.command, l.exitCode, l.commit])).toEqual([
      [1, 'US-1', 'test -f README.md', 0, shaOf('US-1')],
      [1, 'US-1', 'grep -q "US-1 done" US-1.txt', 0, shaOf('US-1')],
      [1, 'US-1', null, null, shaOf('US-1')],
      [2, 'US-2', 'test -f README.md', 0, shaOf('US-2')],
      [2, 'US-2', 'grep -q "US-2 done" US-2.txt', 0, shaOf('US-2')],
      [2, 'US-2', null, null, shaOf('US-2')],
    ]);
    expect(verdicts(dir)).toEqual(['1:US-1:verified', '2:US-2:verified']);
    // At start, each story's check ran once on the plan commit: both fail there, so neither is weak.
    expect(
      allLines(dir)
        .filter((l) => l.kind === 'probe')
        .map((l) => [l.iteration, l.story, l.kind === 'probe' && l.weak]),
    ).toEqual([
      [0, 'US-1', false],
      [0, 'US-2', false],
    ]);
    // Before exit 0, the final gate ran every check again on the final commit: the plan's check once, shared.
    expect(gateVerdicts(dir)).toEqual(['2:US-1:verified', '2:US-2:verified']);
    // Stories' checks run side by side at the gate: each story's lines in order, the stories' interleaved.
    expect(
      byStory(allLines(dir).filter((l) => l.gate && l.kind === 'check')).map((l) => [
        l.story,
        l.command,
        l.commit,
        l.kind === 'check' && !!l.shared,
      ]),
    ).toEqual([
      ['US-1', 'test -f README.md', shaOf('US-2'), false],
      ['US-1', 'grep -q "US-1 done" US-1.txt', shaOf('US-2'), false],
      ['US-2', 'test -f README.md', shaOf('US-2'), true],
      ['US-2', 'grep -q "US-2 done" US-2.txt', shaOf('US-2'), false],
    ]);
    // grep -q prints nothing: the hash of empty output
    expect(lines[1]).toMatchObject({
      outputSha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      loop: 'e2e',
    });
    expect(subjects(dir).filter((s) => s.startsWith('chore(ralph)'))).toEqual([]);
    const status = await runCli(['status', '--json', '--cwd', dir], { cwd: dir });
    expect(JSON.parse(status.stdout).loops[0]).toMatchObject({
      id: 'e2e',
      storiesPassed: 2,
      verified: 2,
      unverified: 0,
      rejected: 0,
    });
  });

  it("a plan without checks: accepted on the agent's word, marked unverified, exit 0", async () => {
    const bare = {
      ...PLAN,
      checks: undefined,
      userStories: PLAN.userStories.map((s) => ({ ...s, checks: undefined })),
    };
    const dir = await installed(JSON.parse(JSON.stringify(bare)) as Prd);
    const r = await ralph(dir, 'honest.mjs', '5');
    expect(r.code, r.stderr).toBe(0);
    const firstIteration = r.stderr.indexOf('iteration 1/5');
    const warning = r.stderr.indexOf(
      "warning: the plan has no checks: stories will be accepted on the agent's word and marked unverified",
    );
    expect(warning).toBeGreaterThan(-1);
    expect(warning).toBeLessThan(firstIteration); // said at start, before any agent runs
    expect(r.stderr).toMatch(/US-1 unverified/);
    expect(verdicts(dir)).toEqual(['1:US-1:unverified', '2:US-2:unverified']);
    expect(gateVerdicts(dir)).toEqual(['2:US-1:unverified', '2:US-2:unverified']);
    expect(allLines(dir).every((l) => l.command === null)).toBe(true);
    const status = await runCli(['status', '--json'], { cwd: dir });
    expect(JSON.parse(status.stdout).loops[0]).toMatchObject({ id: 'e2e', verified: 0, unverified: 2 });
  });

  it('by default (and with the old --verify-in-worktree) the checks run in a throwaway checkout of the commit, removed afterwards', async () => {
    const plan: Prd = { ...PLAN, setup: 'echo prepared > .setup-ran', checks: ['test -f .setup-ran'] };
    const dir = await installed(plan);
    writeFiles(dir, { '.gitignore': '.setup-ran\n' });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'chore: ignore setup output');
    const r = await ralph(dir, 'honest.mjs', '--verify-in-worktree', '5');
    expect(r.code, r.stderr).toBe(0);
    expect(
      ledger(dir)
        .filter((l) => l.kind === 'check')
        .map((l) => (l.kind === 'check' ? `${l.story}:${l.scope}` : '')),
    ).toEqual(['US-1:setup', 'US-1:prd', 'US-1:story', 'US-2:setup', 'US-2:prd', 'US-2:story']);
    // The final gate: setup once in its own checkout, shared by both stories.
    expect(
      byStory(allLines(dir).filter((l) => l.gate && l.kind === 'check')).map((l) =>
        l.kind === 'check' ? `${l.story}:${l.scope}${l.shared ? ':shared' : ''}` : '',
      ),
    ).toEqual(['US-1:setup', 'US-1:prd', 'US-1:story', 'US-2:setup:shared', 'US-2:prd:shared', 'US-2:story']);
    expect(readdirSync(dir)).not.toContain('.setup-ran'); // setup never ran in the repository itself
    expect(git(dir, 'worktree', 'list').split('\n')).toHaveLength(1);
  });

  it('--check-timeout: a check that hangs is killed, the claim rejected, and the loop goes on', async () => {
    const dir = await installed({ ...PLAN, checks: ['sleep 120'] });
    const r = await ralph(dir, 'honest.mjs', '--check-timeout', '1s', '2');
    expect(r.code, r.stderr).toBe(1);
    expect(verdicts(dir)).toEqual(['1:US-1:rejected', '2:US-1:rejected']);
    expect(readPrd(dir).userStories[0].notes).toBe(
      '[ralph] rejected: check `sleep 120` timed out after 1s and was killed',
    );
    expect(ledger(dir)[0]).toMatchObject({ kind: 'check', command: 'sleep 120', timedOut: true, exitCode: null });
  });

  it('Ctrl-C while a check runs: the check is killed, nothing is decided (exit 130), and --resume-last accepts the claim', async () => {
    // Outside the repository: the check runs in a fresh checkout of the commit, not in the working tree.
    const side = testdir();
    const hold = path.join(side, 'hold');
    const pidFile = path.join(side, 'check.pid');
    const dir = await installed({
      ...PLAN,
      checks: [`if [ -f ${hold} ]; then echo $$ > ${pidFile}; exec sleep 120; fi`],
    });
    writeFileSync(hold, '');
    // --no-weak-check: the start-of-run probe runs the plan's checks too, and this one would hold there instead.
    const child = spawn(
      path.join(dir, 'ralph/ralph.sh'),
      [
        '--agent-cmd',
        `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`,
        '--pause',
        '0',
        '--name',
        'e2e',
        '--no-weak-check',
        '--no-sandbox',
        '3',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const checkPid = await pidFrom(pidFile); // the pid itself, not just the file (created before the pid is written)
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await goneWithin(checkPid)).toBe(true);
    // The honest claim is left as the agent made it: no rejection, no note, no runner commit, iteration not done.
    expect(readPrd(dir).userStories[0]).toMatchObject({ passes: true, notes: '' });
    expect(readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8')).not.toContain('rejected');
    expect(subjects(dir)[0]).toBe('feat: US-1');
    expect(verdicts(dir)).toEqual([]);
    expect(ledger(dir)).toEqual([expect.objectContaining({ kind: 'check', story: 'US-1', aborted: true })]);
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8'))).toMatchObject({
      status: 'interrupted',
      iteration: 1,
      iterationDone: false,
    });

    rmSync(hold);
    const resumed = await run(path.join(dir, 'ralph/ralph.sh'), ['--resume-last'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    // The resume finished iteration 1 first (US-1 verified, no agent run); the agent then did US-2 in iteration 2.
    expect(resumed.stderr).toContain(
      'iteration 1 was interrupted while its claims were checked; checking US-1 now, before the agent runs again',
    );
    expect(verdicts(dir)).toEqual(['1:US-1:verified', '2:US-2:verified']);
    expect(subjects(dir).filter((s) => s.startsWith('chore(ralph): reject'))).toEqual([]);
  });

  it('a liar that commits every time is not progress: exit 4 after --no-progress-limit iterations', async () => {
    const dir = await installed(PLAN);
    const r = await ralph(dir, 'liar.mjs', '10');
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('iteration 1 made a commit but no progress: every claim was rejected (US-1, US-2)');
    expect(r.stderr).toContain(
      'no progress: 3 iterations in a row with no claim accepted and no new work committed (exit 4)',
    );
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8'))).toMatchObject({
      status: 'no-progress',
      iteration: 3,
    });
  });

  it('a story claimed before the story it depends on passes: rejected as out of order, its checks not run', async () => {
    const dir = await installed({
      ...PLAN,
      userStories: [PLAN.userStories[0], { ...PLAN.userStories[1], dependsOn: ['US-1'] }],
    });
    const skipper = path.join(testdir(), 'skipper.mjs');
    writeFileSync(
      skipper,
      [
        `import { writeFileSync } from 'node:fs';`,
        `import { readPrd, writePrd, commitAll, drainStdin } from ${JSON.stringify(path.join(FIXTURES, 'verify', 'prd-edit.mjs'))};`,
        `drainStdin(); writeFileSync('US-2.txt', 'US-2 done\\n');`,
        `const prd = readPrd(); prd.userStories[1].passes = true; writePrd(prd); commitAll('feat: US-2');`,
      ].join('\n'),
    );
    const r = await run(
      path.join(dir, 'ralph/ralph.sh'),
      ['--agent-cmd', `node ${JSON.stringify(skipper)}`, '--pause', '0', '--name', 'e2e', '1'],
      { cwd: dir },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'US-2 rejected: out of order: it depends on US-1, which does not pass yet; finish that story first, then claim this one again',
    );
    expect(readPrd(dir).userStories[1]).toMatchObject({
      passes: false,
      notes: expect.stringMatching(/^\[ralph\] rejected: out of order/),
    });
    expect(verdicts(dir)).toEqual(['1:US-2:rejected']);
    expect(ledger(dir).filter((l) => l.kind === 'check')).toEqual([]);
    expect(subjects(dir)[0]).toBe('chore(ralph): reject US-2 (out of order)');
  });

  it('a new loop named as an earlier one writes over the SHIPs record that loop left (none is read on its resume); without one it writes none', async () => {
    const dir = await installed(PLAN);
    // What an earlier loop named e2e left behind (its ralph/.runs/ folder since removed): a record of SHIPs.
    const staleFile = path.join(testdir(), 'stale.json');
    writeFileSync(staleFile, '{"stale":true}\n');
    const stale = git(dir, 'hash-object', '-w', staleFile);
    git(dir, 'update-ref', 'refs/ralphkit/loops/e2e/shipped', stale);
    const r = await ralph(dir, 'honest.mjs', '5');
    expect(r.code, r.stderr).toBe(0);
    const now = git(dir, 'rev-parse', 'refs/ralphkit/loops/e2e/shipped');
    expect(now).not.toBe(stale);
    expect(JSON.parse(git(dir, 'cat-file', '-p', now))).toMatchObject({ loop: 'e2e', reviews: {} });
  });

  it('a weak-check probe stopped by Ctrl-C at start goes on when the loop is resumed: the story it had not reached is still named weak', async () => {
    const hold = path.join(testdir(), 'hold');
    const probing = path.join(testdir(), 'probing');
    writeFileSync(hold, '');
    // US-1's check passes before any work; while $HOLD exists it first waits, so the probe is stopped inside it.
    const check = 'if test -e "$HOLD"; then touch "$PROBING"; sleep 60; fi; test -f README.md';
    const dir = await installed({
      ...PLAN,
      userStories: [{ ...PLAN.userStories[0], checks: [check] }, PLAN.userStories[1]],
    });
    const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`;
    const first = startRalph(dir, ['--agent-cmd', agentCmd, '--pause', '0', '--name', 'e2e', '5'], {
      HOLD: hold,
      PROBING: probing,
    });
    await until("the probe is inside US-1's check", () => existsSync(probing));
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(130);
    // The stopped probe wrote no line (a ledger, if any, holds none).
    const ledgerFile = path.join(dir, 'ralph/.runs/e2e/ledger.jsonl');
    expect(existsSync(ledgerFile) ? allLines(dir).filter((l) => l.kind === 'probe') : []).toEqual([]);
    rmSync(hold);
    const r = await run(path.join(dir, 'ralph/ralph.sh'), ['--resume-last'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'the weak-check probe has no result for US-1, US-2 (stopped before it got to them, or the setup failed there); probing them now',
    );
    expect(r.stderr).toMatch(/all stories pass under verification; US-1 verified \(weak check\)/);
    expect(
      allLines(dir)
        .filter((l) => l.kind === 'probe')
        .map((l) => [l.story, l.kind === 'probe' && l.weak]),
    ).toEqual([
      ['US-1', true],
      ['US-2', false],
    ]);
  });

  it('a story check that already passes on the plan commit is named weak once, in the output, the ledger and status; --no-weak-check skips the probe', async () => {
    const weakPlan: Prd = {
      ...PLAN,
      userStories: [{ ...PLAN.userStories[0], checks: ['test -f README.md'] }, PLAN.userStories[1]],
    };
    const dir = await installed(weakPlan);
    const r = await ralph(dir, 'honest.mjs', '5');
    expect(r.code, r.stderr).toBe(0);
    expect(
      r.stderr.match(
        /US-1: its check already passes on the plan commit [0-9a-f]{7}, before any work, so passing it proves nothing about this story \(marked weak\)/g,
      ),
    ).toHaveLength(1);
    expect(r.stderr).not.toMatch(/US-2: its check/);
    // The exit line and the sealed record name it: its check proved nothing about it.
    expect(r.stderr).toMatch(
      /all stories pass under verification; US-1 verified \(weak check\): its check passed on the plan commit before any work, so read that story yourself \(exit 0\)/,
    );
    expect(JSON.parse(readNote(dir, git(dir, 'rev-parse', 'HEAD'))!)).toMatchObject({
      stories: { 'US-1': 'verified', 'US-2': 'verified' },
      weak: ['US-1'],
    });
    expect(
      allLines(dir)
        .filter((l) => l.kind === 'probe')
        .map((l) => [l.story, l.kind === 'probe' && l.weak]),
    ).toEqual([
      ['US-1', true],
      ['US-2', false],
    ]);
    const status = await runCli(['status', '--json'], { cwd: dir });
    expect(JSON.parse(status.stdout).loops[0]).toMatchObject({ id: 'e2e', weak: ['US-1'] });
    expect((await runCli(['status'], { cwd: dir })).stdout).toContain('weak checks (pass before any work): US-1');

    const skipped = await installed(weakPlan);
    const quiet = await ralph(skipped, 'honest.mjs', '--no-weak-check', '5');
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('marked weak');
    expect(allLines(skipped).filter((l) => l.kind === 'probe')).toEqual([]);
  });
});
