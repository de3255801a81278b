// The start of a run through the installed ./ralph/ralph.sh: stories that already say passes: true, a change of
// branchName, uncommitted work, a second loop in the same working tree, refusals before side effects, and
// --resume-last on loops that cannot go on.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { git, testdir, writeFiles } from '../support/repo.js';
import { agent, jsonEvents, loopRepo, loopStates, onlyState, ralph, startRalph } from '../support/loop-repo.js';
import { startUsageServer, unreachableUsageUrl, usageBody } from '../support/usage-server.js';
import { until } from '../support/process.js';

const FAST = ['--pause', '0'];
const worker = ['--agent-cmd', agent('worker'), ...FAST];

interface StoryPlan {
  branchName?: string;
  baseBranch?: string;
  passes: boolean[];
}

/** Stories whose own check needs the file the worker agent writes for them (work/<id>.txt). */
function planText(p: StoryPlan): string {
  const userStories = p.passes.map((passes, i) => ({
    id: `US-00${i + 1}`,
    title: `Story ${i + 1}`,
    acceptanceCriteria: ['it is done'],
    priority: i + 1,
    passes,
    checks: [`test -f work/US-00${i + 1}.txt`],
  }));
  return `${JSON.stringify({ project: 'Start', branchName: p.branchName ?? 'ralph/test', ...(p.baseBranch ? { baseBranch: p.baseBranch } : {}), checks: ['test -f README.md'], userStories }, null, 2)}\n`;
}

function commitPlan(dir: string, text: string, message = 'plan'): void {
  writeFiles(dir, { 'ralph/prd.json': text });
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), 'utf8');
const passes = (dir: string) =>
  (JSON.parse(read(dir, 'ralph/prd.json')).userStories as { passes: boolean }[]).map((s) => s.passes);
const ledgerVerdicts = (dir: string, id: string) =>
  read(dir, `ralph/.runs/${id}/ledger.jsonl`)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((l) => l.kind === 'verdict' && !l.gate)
    .map((l) => `${l.iteration}:${l.story}:${l.status}`);

describe('stories that already say passes: true', () => {
  it('are verified before iteration 1; the false ones are set back with a note and the agent works on them', async () => {
    const dir = loopRepo();
    commitPlan(dir, planText({ passes: [true, true] }));
    const r = await ralph(dir, [...worker, '--name', 'claims', '--json', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 stories say passes: true \(US-001, US-002\); verifying before the first iteration/);
    // Nothing was done yet, so both claims fail their own check and the agent does both stories.
    expect(ledgerVerdicts(dir, 'claims')).toEqual([
      '0:US-001:rejected',
      '0:US-002:rejected',
      '1:US-001:verified',
      '2:US-002:verified',
    ]);
    expect(git(dir, 'log', '--format=%s')).toMatch(/chore\(ralph\): reject US-001 \(check failed\)/);
    expect(jsonEvents(r.stdout).filter((e) => e.type === 'iteration-start')).toHaveLength(2);
    expect(passes(dir)).toEqual([true, true]);
  });

  it('exit 0 without running the agent only when every claim survives the checks', async () => {
    const dir = loopRepo();
    writeFiles(dir, { 'work/US-001.txt': 'done\n', 'work/US-002.txt': 'done\n' });
    commitPlan(dir, planText({ passes: [true, true] }));
    const marker = path.join(testdir(), 'agent-ran');
    const r = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '--name', 'done', '5'], {
      FAKE_MARKER: marker,
    });
    expect(r.code, r.stderr).toBe(0);
    // The work is in the plan commit, so the start's probe found both checks passing there: said, not hidden.
    expect(r.stderr).toMatch(
      /all stories pass under verification; US-001, US-002 verified \(weak check\): their checks passed on the plan commit before any work, so read those stories yourself; nothing for the agent to do \(exit 0\)/,
    );
    expect(existsSync(marker)).toBe(false);
    expect(ledgerVerdicts(dir, 'done')).toEqual(['0:US-001:verified', '0:US-002:verified']);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', iteration: 0, exitCode: 0 });
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a resumed loop verifies passes: true set by hand while it was stopped, not the stories it verified itself', async () => {
    const dir = loopRepo();
    commitPlan(dir, planText({ passes: [false, false] }));
    expect((await ralph(dir, [...worker, '--name', 'r', '1'])).code).toBe(1);
    const plan = JSON.parse(read(dir, 'ralph/prd.json'));
    plan.userStories[1].passes = true;
    commitPlan(dir, `${JSON.stringify(plan, null, 2)}\n`, 'claim US-002 by hand');
    const r = await ralph(dir, ['--resume', 'r', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 story says passes: true \(US-002\)/);
    expect(ledgerVerdicts(dir, 'r')).toEqual(['1:US-001:verified', '0:US-002:rejected', '2:US-002:verified']);
  });
});

describe('a change of branchName', () => {
  /** A finished loop on ralph/first, then a new plan for ralph/second committed on ralph/first. */
  async function finishedThenNext(
    baseBranch = 'main',
  ): Promise<{ dir: string; firstPlan: string; firstLog: string; next: string }> {
    const dir = loopRepo();
    commitPlan(dir, planText({ branchName: 'ralph/first', baseBranch, passes: [false] }));
    expect((await ralph(dir, [...worker, '5'])).code).toBe(0);
    const firstPlan = read(dir, 'ralph/prd.json');
    const firstLog = read(dir, 'ralph/progress.txt');
    const next = planText({ branchName: 'ralph/second', baseBranch, passes: [false, false] });
    return { dir, firstPlan, firstLog, next };
  }

  it('creates the branch from baseBranch, runs the plan the user started with, archives once, leaves a clean tree', async () => {
    const { dir, firstPlan, firstLog, next } = await finishedThenNext();
    commitPlan(dir, next, 'next plan');
    const marker = path.join(testdir(), 'prd-seen');
    const r = await ralph(dir, ['--agent-cmd', `cp ralph/prd.json ${JSON.stringify(marker)}`, ...FAST, '1']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/created ralph\/second from main/);
    expect(git(dir, 'branch', '--show-current')).toBe('ralph/second');
    // The agent saw the new plan, not main's copy of the old one.
    expect(readFileSync(marker, 'utf8')).toBe(next);
    expect(read(dir, 'ralph/prd.json')).toBe(next);
    const archives = readdirSync(path.join(dir, 'ralph/archive'));
    expect(archives).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}-first$/)]);
    expect(read(dir, `ralph/archive/${archives[0]}/prd.json`)).toBe(firstPlan);
    expect(read(dir, `ralph/archive/${archives[0]}/progress.txt`)).toBe(firstLog);
    expect(read(dir, 'ralph/progress.txt')).not.toMatch(/US-001: Story 1/);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'log', '-1', '--format=%s', 'HEAD')).toMatch(
      /^chore\(ralph\): start ralph\/second with the plan the loop was started with; archive the previous run/,
    );
  });

  it("does not archive again what the ralph skill archived, and commits the skill's uncommitted files", async () => {
    const { dir, firstPlan, firstLog, next } = await finishedThenNext();
    // What skills/ralph.md §1 does: copy both into the archive, reset the log, write the new plan; nothing committed.
    const skillDir = `ralph/archive/${new Date().toISOString().slice(0, 10)}-first`;
    writeFiles(dir, {
      [`${skillDir}/prd.json`]: firstPlan,
      [`${skillDir}/progress.txt`]: firstLog,
      'ralph/progress.txt': git(dir, 'show', 'main:ralph/progress.txt') + '\n',
      'ralph/prd.json': next,
    });
    const r = await ralph(dir, [...worker, '1']);
    expect(r.code, r.stderr).toBe(1);
    expect(readdirSync(path.join(dir, 'ralph/archive'))).toEqual([path.basename(skillDir)]);
    expect(r.stderr).toMatch(/nothing new to archive/);
    expect(git(dir, 'ls-files', 'ralph/archive')).toBe(`${skillDir}/prd.json\n${skillDir}/progress.txt`);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it("same branchName from a stale clean copy of the plan (back on main): the branch keeps the loop's progress", async () => {
    const dir = loopRepo();
    commitPlan(dir, planText({ passes: [false, false] }));
    expect((await ralph(dir, [...worker, '1'])).code).toBe(1);
    git(dir, 'checkout', '-q', 'main');
    const r = await ralph(dir, [...worker, '--name', 'again', '--json', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/kept ralph\/prd\.json as it is on ralph\/test: the same plan, with the loop's progress/);
    expect(ledgerVerdicts(dir, 'again')).toEqual(['0:US-001:verified', '1:US-002:verified']);
    expect(jsonEvents(r.stdout).filter((e) => e.type === 'iteration-start')).toHaveLength(1);
  });

  it('a failure half-way puts the tree back: branch, uncommitted plan and all', async () => {
    const { dir, next } = await finishedThenNext('');
    // ralph/archive is a file, so the archive folder cannot be made after the new branch is created.
    writeFiles(dir, { 'ralph/archive': 'not a folder\n' });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'block the archive');
    writeFiles(dir, { 'ralph/prd.json': next });
    const before = {
      plan: read(dir, 'ralph/prd.json'),
      status: git(dir, 'status', '--porcelain'),
      head: git(dir, 'rev-parse', 'HEAD'),
    };
    const r = await ralph(dir, [...worker, '1']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/could not prepare branch ralph\/second: .*ENOTDIR/);
    expect(git(dir, 'branch', '--show-current')).toBe('ralph/first');
    expect(git(dir, 'branch', '--list', 'ralph/second')).toBe('');
    expect(read(dir, 'ralph/prd.json')).toBe(before.plan);
    expect(git(dir, 'status', '--porcelain')).toBe(before.status);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(before.head);
  });
});

describe('refused before anything is touched (exit 2)', () => {
  it('uncommitted changes: lists them (at most 10) with a hint, writes no state, stays on the branch', async () => {
    const dir = loopRepo();
    writeFiles(dir, {
      'README.md': 'edited\n',
      ...Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`notes/n${String(i).padStart(2, '0')}.md`, 'x\n'])),
    });
    const r = await ralph(dir, [...worker, '3']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /uncommitted changes in the working tree; the agent would be blamed for them:\n {2}README\.md\n {2}notes\/n00\.md\n/,
    );
    expect(r.stderr).toMatch(/notes\/n08\.md\n {2}\.\.\. and 2 more/);
    expect(r.stderr).not.toMatch(/n09/);
    expect(r.stderr).toMatch(/hint: commit them, or put them aside with `git stash -u`/);
    expect(r.stderr).not.toMatch(/started/);
    expect(loopStates(dir)).toEqual([]);
    expect(git(dir, 'branch', '--show-current')).toBe('main');
  });

  it("except for a resumed loop whose iteration was cut short: its agent's half-done work stays for the agent", async () => {
    const dir = loopRepo({ stories: 1 });
    const marker = path.join(testdir(), 'hold');
    const env = { FAKE_HOLD_AT: '1', FAKE_HOLD_MARKER: marker };
    const first = startRalph(dir, [...worker, '3'], env);
    await until('iteration 1 to start', () => existsSync(marker) && readFileSync(marker, 'utf8').trim() !== '', 20_000);
    first.child.kill('SIGKILL');
    await first.done;
    writeFiles(dir, { 'work/half-done.txt': 'partial\n' });
    const r = await ralph(dir, ['--resume-last'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /warning: uncommitted changes from the interrupted iteration 1 stay for the agent to finish and commit: work\/half-done\.txt/,
    );
    expect(git(dir, 'log', '-1', '--name-only', '--format=%s')).toMatch(/^feat: US-001[\s\S]*work\/half-done\.txt/);
  });

  it('an uncommitted plan is not in the way: it goes to the new branch, committed there, not on main', async () => {
    const dir = loopRepo();
    const onMain = read(dir, 'ralph/prd.json');
    writeFiles(dir, { 'ralph/prd.json': planText({ passes: [false] }) });
    const r = await ralph(dir, [...worker, '--json', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonEvents(r.stdout).filter((e) => e.type === 'iteration-start')).toHaveLength(1);
    expect(git(dir, 'log', '--format=%s', 'main..ralph/test')).toMatch(
      /chore\(ralph\): start ralph\/test with the plan the loop was started with/,
    );
    expect(git(dir, 'show', 'main:ralph/prd.json')).toBe(onMain.trimEnd());
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('--max-usage with usage unknown or over the ceiling: no loop recorded, no checkout, no "started"', async () => {
    const dir = loopRepo();
    const unknown = await ralph(dir, [...worker, '--max-usage', '80', '3'], {
      RALPH_USAGE_URL: await unreachableUsageUrl(),
      RALPH_USAGE_TOKEN: 't',
    });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toMatch(/\nralph: hint: .*add --allow-unknown-usage to run without the usage ceiling\n/);
    const server = await startUsageServer([{ body: usageBody(95, 10) }]);
    const over = await ralph(dir, [...worker, '--max-usage', '80', '3'], {
      RALPH_USAGE_URL: server.url,
      RALPH_USAGE_TOKEN: 't',
    });
    expect(over.code, over.stderr).toBe(2);
    for (const r of [unknown, over]) expect(r.stderr).not.toMatch(/loop \S+ started|created ralph/);
    expect(
      existsSync(path.join(dir, 'ralph/.runs'))
        ? readdirSync(path.join(dir, 'ralph/.runs')).filter((n) => n !== 'locks')
        : [],
    ).toEqual([]);
    expect(git(dir, 'branch', '--show-current')).toBe('main');
    expect(git(dir, 'branch', '--list', 'ralph/test')).toBe('');
  });

  it('a second loop in the same working tree, on another plan: refused with a hint to use --worktree', async () => {
    const dir = loopRepo();
    writeFiles(dir, { 'ralph/other.json': planText({ branchName: 'ralph/other', passes: [false] }) });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'second plan');
    const first = startRalph(dir, [
      '--agent-cmd',
      agent('sleeper'),
      ...FAST,
      '--name',
      'first',
      '--iteration-timeout',
      '40s',
      '3',
    ]);
    await until('the first loop to start its agent', () => loopStates(dir).some((s) => s.agentPid), 20_000);
    const marker = path.join(testdir(), 'second-ran');
    const second = await ralph(dir, ['--agent-cmd', agent('marker'), ...FAST, '--prd', 'ralph/other.json', '3'], {
      FAKE_MARKER: marker,
    });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      /another loop \(first, pid \d+\) is running in this working tree, on ralph\/prd\.json/,
    );
    expect(second.stderr).toMatch(
      /hint: run this plan in a worktree of its own, beside the running loop: \.\/ralph\/ralph\.sh --worktree --prd ralph\/other\.json;/,
    );
    expect(existsSync(marker)).toBe(false);
    expect(git(dir, 'branch', '--show-current')).toBe('ralph/test');
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(130);
  });
});

describe('--resume-last on a loop that cannot go on', () => {
  it('a complete loop is not resumed (exit 2)', async () => {
    const dir = loopRepo({ stories: 1 });
    expect((await ralph(dir, [...worker, '--name', 'all-done'])).code).toBe(0);
    const r = await ralph(dir, ['--resume-last']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the last loop all-done is complete; start a new one with \.\/ralph\/ralph\.sh/);
  });

  it('a loop that ran all its iterations is refused (exit 2, nothing ran) with a higher max, and runs with one', async () => {
    const dir = loopRepo({ stories: 3 });
    const first = await ralph(dir, [...worker, '--name', 'short', '2']);
    expect(first.code).toBe(1);
    // The max-iterations stop and the refused resume suggest the same concrete max, never a placeholder.
    expect(first.stderr).toMatch(/hint: raise the limit and continue: \.\/ralph\/ralph\.sh --resume-last 7\n/);
    const r = await ralph(dir, ['--resume-last']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /loop short already ran its 2 iterations \(exit 2\)\nralph: hint: give a higher max: \.\/ralph\/ralph\.sh --resume-last 7/,
    );
    expect(r.stderr).not.toMatch(/iterations 3\.\.2/);
    expect(onlyState(dir)).toMatchObject({ status: 'max-iterations', iteration: 2 });
    expect((await ralph(dir, ['--resume-last', '3'])).code).toBe(0);
  });

  it('skips a loop that was refused before its first iteration', async () => {
    const dir = loopRepo({ stories: 2 });
    expect((await ralph(dir, [...worker, '--name', 'real', '1'])).code).toBe(1);
    const real = JSON.parse(read(dir, 'ralph/.runs/real/state.json'));
    writeFiles(dir, {
      'ralph/.runs/refused-one/state.json': JSON.stringify({
        ...real,
        id: 'refused-one',
        status: 'refused',
        iteration: 0,
        updatedAt: new Date(Date.now() + 60_000).toISOString(),
      }),
    });
    const r = await ralph(dir, ['--resume-last', '--json', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonEvents(r.stdout).find((e) => e.type === 'start')).toMatchObject({ loop: 'real', resumed: true });
  });
});
