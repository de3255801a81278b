// Temp repositories with ralph installed (by the real installer) and a plan of fake stories, for the
// loop engine's e2e tests; fake agents live in test/fixtures/agents/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { FIXTURES, gitEnv, run, runnerArgs, type RunResult } from './repo.js';
import { installedRepo } from './installed-repo.js';
import { plan, planText } from './plan.js';

export const AGENTS = path.join(FIXTURES, 'agents');

export function agent(name: string): string {
  return path.join(AGENTS, `${name}.mjs`);
}

export interface PlanOptions {
  stories?: number;
  branchName?: string;
  checks?: string[];
}

/** The e2e plan (test/support/plan.ts): numbered stories, plan-level checks (default `test -f README.md`). */
export function renderPlan(opts: PlanOptions = {}): string {
  return planText(
    plan(opts.stories ?? 2, {
      branchName: opts.branchName ?? 'ralph/test',
      checks: opts.checks ?? ['test -f README.md'],
    }),
  );
}

/** A git repo with ralph installed by `ralphkit install`, the given plan written and everything committed. */
export function loopRepo(opts: PlanOptions = {}): string {
  return installedRepo({ plan: renderPlan(opts) });
}

/** Runs the installed ./ralph/ralph.sh in `dir`. */
export function ralph(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 150_000,
): Promise<RunResult> {
  return run(path.join(dir, 'ralph/ralph.sh'), args, { cwd: dir, env, timeoutMs });
}

/** Starts ./ralph/ralph.sh without waiting (for kill -9, locks and cancel); ralph.sh execs node, so pid is the runner. */
export function startRalph(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; done: Promise<RunResult> } {
  const child = spawn(path.join(dir, 'ralph/ralph.sh'), runnerArgs('ralph.sh', args), {
    cwd: dir,
    env: { ...gitEnv(), FORCE_COLOR: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  // A test that fails before it stops its loop must not leave the runner (and its agent) going on in a temp folder
  // being deleted: SIGTERM makes the runner stop its agent group and save its state; SIGKILL if it does not.
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(killer);
  });
  return { child, done };
}

export interface StateFile {
  id: string;
  status: string;
  iteration: number;
  iterationDone: boolean;
  maxIterations: number;
  pid: number;
  agentPid?: number;
  exitCode: number | null;
  costUsd: number;
  options: Record<string, unknown>;
}

export function loopStates(dir: string): StateFile[] {
  const runs = path.join(dir, 'ralph/.runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs)
    .filter((n) => existsSync(path.join(runs, n, 'state.json')))
    .map((n) => JSON.parse(readFileSync(path.join(runs, n, 'state.json'), 'utf8')) as StateFile);
}

export function onlyState(dir: string): StateFile {
  const states = loopStates(dir);
  if (states.length !== 1) throw new Error(`expected one loop, found ${states.length}`);
  return states[0];
}

export function jsonEvents(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}
