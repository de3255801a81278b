// Temp repositories for the adversarial e2e tests (test/e2e/verify-attacks*.test.ts): a real little Node project
// whose tests fail at the plan commit, with ralphkit installed by the real installer. Each test file prepares
// one template per plan (install once, in beforeAll) and copies it per test, so a test costs one loop run.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { FIXTURES, git, run, runCli, testdir, writeFiles, type RunResult } from './repo.js';
import type { Prd } from '../../src/prd/types.js';
import { plan, story } from './plan.js';

export const ATTACKS = path.join(FIXTURES, 'attacks');

/** A fake agent of test/fixtures/attacks/ by name (without .mjs). */
export function attackAgent(name: string): string {
  return path.join(ATTACKS, `${name}.mjs`);
}

export interface AttackPlanOptions {
  /** US-2's checks (default `npm test`, which runs every test file). */
  us2Checks?: string[];
  /** The plan's own checks (default none). */
  planChecks?: string[];
}

/** The plan: US-1 checked by its own test file, US-2 (by default) by `npm test`. */
export function attackPlan(opts: AttackPlanOptions = {}): Prd {
  const fnStory = (id: string, priority: number, fn: string, value: number, checks: string[]) =>
    story(id, {
      title: `${fn}() returns ${value}`,
      acceptanceCriteria: [`src/${fn}.mjs exports ${fn}() returning ${value}`, `test/${fn}.test.mjs passes`],
      priority,
      notes: '',
      checks,
    });
  const stories = [
    fnStory('US-1', 1, 'one', 1, ['node --test test/one.test.mjs']),
    fnStory('US-2', 2, 'two', 2, opts.us2Checks ?? ['npm test']),
  ];
  return plan(stories, {
    project: 'Attack demo',
    branchName: 'ralph/attack-demo',
    description: 'A tiny Node project whose tests fail until the stories are done.',
    ...(opts.planChecks ? { checks: opts.planChecks } : {}),
  });
}

const testFile = (fn: string, value: number) =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${fn} } from '../src/${fn}.mjs';\n\ntest('${fn}() returns ${value}', () => {\n  assert.equal(${fn}(), ${value});\n});\n`;

/** The project at the plan commit: no src/ yet, so both tests fail. */
export const PROJECT_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'attack-demo', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test test/*.test.mjs' } }, null, 2)}\n`,
  'test/one.test.mjs': testFile('one', 1),
  'test/two.test.mjs': testFile('two', 2),
  '.gitignore': 'node_modules/\n',
};

export interface Template {
  /** The prepared repository: copy it with copyRepo, never run a loop in it. */
  dir: string;
  /** ralph/ralph.mjs exactly as `ralphkit install` wrote it (the build's dist/ralph.mjs at that moment). */
  engine: Buffer;
  /** The commit the loop starts from: plan and tests committed. */
  planCommit: string;
  remove(): void;
}

function templateGit(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/**
 * A repository with the project and ralphkit (`install --yes --no-skills`) committed, the plan written and
 * committed on top: the plan commit. For beforeAll (testdir's cleanup is per test): call remove() in afterAll.
 */
export async function prepareTemplate(
  opts: AttackPlanOptions = {},
  extra: Record<string, string> = {},
): Promise<Template> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'ralphkit-attack-template-')));
  try {
    templateGit(dir, 'init', '-q', '-b', 'main');
    for (const [k, v] of [
      ['user.name', 'Test'],
      ['user.email', 'test@example.com'],
      ['commit.gpgsign', 'false'],
    ])
      templateGit(dir, 'config', k, v);
    writeFiles(dir, { 'README.md': '# attack demo\n', ...PROJECT_FILES, ...extra });
    templateGit(dir, 'add', '-A');
    templateGit(dir, 'commit', '-q', '-m', 'initial: the project and its failing tests');
    const install = await runCli(['install', '--yes', '--no-skills', '--cwd', dir]);
    if (install.code !== 0) throw new Error(`install failed (${install.code}): ${install.stderr}`);
    writeFiles(dir, { 'ralph/prd.json': `${JSON.stringify(attackPlan(opts), null, 2)}\n` });
    templateGit(dir, 'add', '-A');
    templateGit(dir, 'commit', '-q', '-m', 'Plan: one and two');
    const engine = readFileSync(path.join(dir, 'ralph/ralph.mjs'));
    return {
      dir,
      engine,
      planCommit: templateGit(dir, 'rev-parse', 'HEAD'),
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A copy of the template for one test (removed when it finishes), .git and modes included. */
export function copyRepo(t: Template): string {
  const dir = testdir('ralphkit-attack-');
  execFileSync('cp', ['-a', `${t.dir}/.`, dir]);
  return dir;
}

export interface LoopRun extends RunResult {
  /** Every line the runner wrote, stdout and stderr. */
  output: string;
}

/** ./ralph/ralph.sh with the fake agent `agentName` and `args` (options, then max_iterations). */
export async function ralph(
  dir: string,
  agentName: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<LoopRun> {
  const agentCmd = `node ${JSON.stringify(attackAgent(agentName))}`;
  const r = await run(
    path.join(dir, 'ralph/ralph.sh'),
    ['--agent-cmd', agentCmd, '--pause', '0', '--iteration-timeout', '30s', '--name', 'e2e', ...args],
    { cwd: dir, env },
  );
  return { ...r, output: `${r.stdout}\n${r.stderr}` };
}

/**
 * ./ralph/ralph.sh --sandbox-ready (and without --sandbox or --no-sandbox, the default: sandboxed where bwrap works): the sandbox gives the agent a private /tmp, and this checkout (CI's clone) may
 * itself live under /tmp, so the fake agents are copied into the repository's .git/ (bound into the sandbox, and
 * not part of the working tree). RALPH_RETRY_MS: an attack that fails on a read-only file exits non-zero, and its
 * retries need not wait 10 s.
 */
export async function sandboxRalph(
  dir: string,
  agentName: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<LoopRun> {
  // git's folder, where a separate git dir puts it (its .git is a file then).
  const fixtures = path.join(git(dir, 'rev-parse', '--path-format=absolute', '--git-common-dir'), 'test-fixtures');
  cpSync(FIXTURES, fixtures, { recursive: true });
  const agentCmd = `node ${JSON.stringify(path.join(fixtures, 'attacks', `${agentName}.mjs`))}`;
  const r = await run(
    path.join(dir, 'ralph/ralph.sh'),
    ['--agent-cmd', agentCmd, '--pause', '0', '--iteration-timeout', '30s', '--name', 'e2e', ...args],
    { cwd: dir, env: { RALPH_RETRY_MS: '10', ...env }, sandboxDefault: true },
  );
  return { ...r, output: `${r.stdout}\n${r.stderr}` };
}

export const readPrd = (dir: string): Prd => JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as Prd;
export const passes = (dir: string): Record<string, Prd['userStories'][number]['passes'] | undefined> =>
  Object.fromEntries(readPrd(dir).userStories.map((s) => [s.id, s.passes]));
export const notesOf = (dir: string, id: string): string =>
  readPrd(dir).userStories.find((s) => s.id === id)?.notes ?? '';
export const progress = (dir: string): string => readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
export const subjects = (dir: string): string[] => git(dir, 'log', '--format=%s').split('\n');
/** The plan as committed at HEAD (what a fresh clone would say). */
export const committedPrd = (dir: string): Prd => JSON.parse(git(dir, 'show', 'HEAD:ralph/prd.json')) as Prd;

/** The loops `ralphkit status --json` lists. */
export async function statusLoops(dir: string): Promise<Array<Record<string, unknown>>> {
  const r = await runCli(['status', '--json'], { cwd: dir });
  if (r.code !== 0) throw new Error(`status --json exited ${r.code}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { loops: Array<Record<string, unknown>> }).loops;
}

/** Lines of notes and progress.txt that say a pinned file was used, and name `file`. */
export function pinnedMentions(dir: string, id: string, file: string): string[] {
  return `${notesOf(dir, id)}\n${progress(dir)}`.split('\n').filter((l) => /pinned/i.test(l) && l.includes(file));
}

/** Pids of live processes whose command line contains `marker` (Linux /proc). */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmdline.includes(marker) && !/^\d+ \(.*\) [ZX] /.test(stat)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Kills (by pid) what a test's attack left running, whatever the runner did: the test must not leak it. */
export function killLeftoversAfterTest(marker: string): void {
  onTestFinished(() => {
    for (const pid of processesWith(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** The file's bytes, or null when it does not exist. */
export function bytesOrNull(file: string): Buffer | null {
  return existsSync(file) ? readFileSync(file) : null;
}

/** The loop did not end with "done", nor because it crashed or refused to start (the attack has to have run). */
export function expectNotDone(r: LoopRun, dir: string): void {
  expect(r.code, r.output).not.toBe(0);
  const state = JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8')) as { status: string };
  expect(['complete', 'failed', 'refused'], r.output).not.toContain(state.status);
}

/** Both stories back to (or still) false, on disk and in the last commit. */
export function expectAllFalse(dir: string, r: LoopRun): void {
  expect(passes(dir), r.output).toEqual({ 'US-1': false, 'US-2': false });
  expect(committedPrd(dir).userStories.map((s) => s.passes)).toEqual([false, false]);
}
