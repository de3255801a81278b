// The dashboard and a loop whose runner is gone: after kill -9 the OS may hand the runner's pid to another process.
// The page's live-update detector (events.ts aliveSignature) must compare the recorded start time, not only the
// pid, or the loop stays "running" on the page until something else changes on disk. The pid is reused for real:
// root can choose the next pid (/proc/sys/kernel/ns_last_pid); elsewhere these tests are skipped.
// Also: a ralph/.runs/ the dashboard cannot read shows no loops; the page keeps working (status refuses instead).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { testdir, writeFiles } from '../../support/repo.js';
import { plan, writePlan } from '../../support/view-fixtures.js';
import { getJson, openEvents } from '../../support/view-http.js';
import { createEventHub } from '../../../src/view/events.js';
import { resolveViewPaths } from '../../../src/view/snapshot.js';
import { startViewServer } from '../../../src/view/server.js';
import { procStart } from '../../support/process.js';

const NEXT_PID = '/proc/sys/kernel/ns_last_pid';

function canChooseNextPid(): boolean {
  try {
    writeFileSync(NEXT_PID, readFileSync(NEXT_PID, 'utf8'));
    return true;
  } catch {
    return false;
  }
}

function sleeper(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

/** A runner that is alive now: its pid and start recorded in a state.json that says running. */
function runningLoop(repo: string): ChildProcess & { pid: number } {
  const runner = sleeper();
  const now = new Date().toISOString();
  const state = {
    id: 'k9',
    agent: 'claude',
    prd: 'ralph/prd.json',
    iteration: 1,
    iterationDone: false,
    maxIterations: 5,
    status: 'running',
    pid: runner.pid,
    pidStart: procStart(runner.pid),
    startedAt: now,
    updatedAt: now,
    costUsd: 0,
    exitCode: null,
    noProgressStreak: 0,
    options: {},
  };
  writeFiles(repo, { 'ralph/.runs/k9/state.json': `${JSON.stringify(state, null, 2)}\n` });
  return runner;
}

/**
 * kill -9 of the runner, then its pid handed to a new process (ours, or whoever took it first). Nothing on disk
 * changes. Returns once some process other than the runner holds the pid.
 */
async function killAndReusePid(runner: ChildProcess & { pid: number }): Promise<void> {
  const pid = runner.pid;
  // Start times count clock ticks (10 ms): a pid reused within the runner's own tick would look like the runner.
  // Real reuse needs the pid space to wrap first, so it never happens that fast; the test must not either.
  const recorded = procStart(pid);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const exited = new Promise((resolve) => runner.once('exit', resolve));
  runner.kill('SIGKILL');
  await exited;
  for (let attempt = 0; attempt < 50; attempt++) {
    writeFileSync(NEXT_PID, String(pid - 1));
    const other = sleeper();
    if (other.pid === pid || existsSync(`/proc/${pid}`)) {
      // 50 ms after the runner started, its successor cannot share its start tick; say so loudly if it ever did.
      if (existsSync(`/proc/${pid}`) && procStart(pid) === recorded)
        throw new Error(`pid ${pid} was reused within the runner's clock tick`);
      return;
    }
    other.kill('SIGKILL');
  }
  throw new Error(`pid ${pid} was not reused in 50 attempts`);
}

describe.skipIf(!canChooseNextPid())('the dashboard and a runner pid reused after kill -9', () => {
  it('aliveSignature changes when the pid is alive again but is another process', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const runner = runningLoop(repo);
    const hub = createEventHub(resolveViewPaths(repo), {});
    onTestFinished(() => hub.close());
    hub.refresh();
    const before = hub.aliveSignature();
    expect(before).toBe(String(runner.pid));
    await killAndReusePid(runner);
    expect(existsSync(`/proc/${runner.pid}`)).toBe(true);
    expect(hub.aliveSignature()).toBe(`-${runner.pid}`);
  });

  it('the page gets the loop as dead without any file changing', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const runner = runningLoop(repo);
    // Poll only, and slowly: the update must come from the liveness check, not from a watched file.
    const server = await startViewServer({ cwd: repo, port: 0, pollMs: 200, fsWatch: false });
    onTestFinished(() => server.close());
    const events = await openEvents(server.url);
    onTestFinished(() => events.close());
    await events.waitFor((e) => e.event === 'loops' && e.data.loops[0]?.status === 'running');
    // A change on disk seen and sent after the connect: the watcher now compares against the live runner's pid.
    writeFiles(repo, { 'ralph/progress.txt': '# Progress log\n' });
    await events.waitFor((e) => e.event === 'progress' && e.data.exists === true, 10_000);
    await killAndReusePid(runner);
    const dead = await events.waitFor((e) => e.event === 'loops' && e.data.loops[0]?.status === 'dead', 10_000);
    expect(dead.data.loops[0]).toMatchObject({ id: 'k9', status: 'dead', alive: false, pid: runner.pid });
  });
});

describe('the dashboard on a ralph/.runs/ it cannot read', () => {
  it('a file where the folder should be: no loops, the plan still shown, live updates still sent', async () => {
    const repo = testdir();
    writePlan(repo, plan(2));
    writeFiles(repo, { 'ralph/.runs': 'not a folder\n' });
    const server = await startViewServer({ cwd: repo, port: 0, pollMs: 100 });
    onTestFinished(() => server.close());
    expect(await getJson(server.url, '/api/loops')).toEqual({ loops: [] });
    const events = await openEvents(server.url);
    onTestFinished(() => events.close());
    await events.waitFor((e) => e.event === 'loops');
    const changed = plan(2);
    changed.userStories[0].passes = true;
    writePlan(repo, changed);
    const prd = await events.waitFor((e) => e.event === 'prd' && e.data.prd?.userStories[0].passes === true, 10_000);
    expect(prd.data.file).toBe(path.join('ralph', 'prd.json'));
  });
});
