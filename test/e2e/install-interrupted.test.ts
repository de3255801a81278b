// `ralphkit install` killed with SIGKILL, at deterministic steps (the test pause hook) and at random moments:
// the repository must hold the old install or the new one, never a half install, and the next install must
// finish cleanly. Spawns the built CLI (run `npm run build` first).
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { BIN, gitEnv, runCli, testdir } from '../support/repo.js';
import { ageInstall, fakeRepo, snapshotTree } from '../support/fake-package.js';
import { random } from '../support/random.js';

const STAGING = '.ralphkit-staging';
const LOCK = '.ralphkit-install.lock';
const SEED = Number(process.env.RALPHKIT_TEST_SEED) || 1313;

type Tree = Record<string, string>;

/** The repository as a user sees it: everything but .git/, the staging folder and the install lock (leftovers, not the install). */
function tree(repo: string): Tree {
  return Object.fromEntries(
    Object.entries(snapshotTree(repo)).filter(
      ([p]) => !p.startsWith('.git/') && !p.startsWith(`${STAGING}/`) && p !== LOCK,
    ),
  );
}

/**
 * old / new: exactly the install before or after. decided: the journal marks the install as decided and each
 * file is whole, old or new (the few renames of the commit); the next install finishes it. half: anything else.
 */
function classify(repo: string, before: Tree, after: Tree): 'old' | 'new' | 'decided' | 'half' {
  const now = tree(repo);
  const same = (a: Tree, b: Tree) => JSON.stringify(a) === JSON.stringify(b);
  if (same(now, before)) return 'old';
  if (same(now, after)) return 'new';
  const paths = new Set([...Object.keys(now), ...Object.keys(before), ...Object.keys(after)]);
  const whole = [...paths].every((p) => now[p] === before[p] || now[p] === after[p]);
  return whole && existsSync(path.join(repo, STAGING, 'journal.json')) ? 'decided' : 'half';
}

/** After a kill, the next install exits 0 and leaves exactly the new install: no staging folder, no lock, no temp file. */
async function expectFinishes(repo: string, after: Tree, context: string): Promise<void> {
  const rerun = await runCli(['install', '--yes'], { cwd: repo });
  expect(rerun.code, `${context}\n${rerun.stderr}`).toBe(0);
  expect(tree(repo), context).toEqual(after);
  expect(
    Object.keys(snapshotTree(repo)).filter((p) => p.startsWith(STAGING) || p === LOCK || p.endsWith('.tmp')),
    context,
  ).toEqual([]);
}

const OLD = {
  'ralph/ralph.sh': '#!/bin/sh\n# old runner\n',
  'ralph/ralph.mjs': '// old engine\n',
  'ralph/.gitignore': '.runs/\n# old\n',
  '.claude/skills/prd/SKILL.md': '---\nname: prd\ndescription: old\n---\n',
};

/** A maker of repositories in the state before the install: empty, or holding an older ralphkit's install. */
async function scenario(name: string): Promise<() => string> {
  if (name === 'first install') return () => fakeRepo();
  const template = fakeRepo();
  expect((await runCli(['install', '--yes'], { cwd: template })).code).toBe(0);
  ageInstall(template, OLD);
  return () => copyOf(template);
}

function copyOf(dir: string): string {
  const copy = testdir('ralphkit-repo-');
  cpSync(dir, copy, { recursive: true, preserveTimestamps: true });
  return copy;
}

/** The state after a complete install from `make()`'s state, side by side. */
async function reference(make: () => string): Promise<{ before: Tree; after: Tree }> {
  const repo = make();
  const before = tree(repo);
  expect((await runCli(['install', '--yes'], { cwd: repo })).code).toBe(0);
  return { before, after: tree(repo) };
}

/** Spawn install; `kill` decides when to SIGKILL it. Resolves whether the kill landed before the process ended. */
function installKilled(
  cwd: string,
  env: NodeJS.ProcessEnv,
  kill: (child: ReturnType<typeof spawn>, stderr: () => string) => void,
): Promise<{ killed: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'install', '--yes'], {
      cwd,
      env: { ...gitEnv(), FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr!.on('data', (d) => (stderr += d));
    kill(child, () => stderr);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(guard);
      resolve({ killed: signal === 'SIGKILL', stderr });
    });
  });
}

/** Kill once the pause hook reports `steps` steps done; `paused: false` when the install finished first. */
async function killAfterSteps(cwd: string, steps: number): Promise<boolean> {
  const { killed } = await installKilled(cwd, { RALPHKIT_TEST_PAUSE_AFTER_WRITES: String(steps) }, (child, stderr) => {
    child.stderr!.on('data', () => {
      if (stderr().includes('paused after')) child.kill('SIGKILL');
    });
  });
  return killed;
}

/**
 * Kill `delayMs` after the install's first change in the folder (or in ralph/): the random point falls in the part
 * of the run that writes, not in Node's start-up. With no delay given, measure how long that part lasts.
 */
async function killAfterFirstChange(cwd: string, delayMs?: number): Promise<{ killed: boolean; writingMs: number }> {
  const watchers: FSWatcher[] = [];
  let first: number | undefined;
  const result = await installKilled(cwd, {}, (child) => {
    const onChange = () => {
      if (first !== undefined) return;
      first = performance.now();
      if (delayMs !== undefined) setTimeout(() => child.kill('SIGKILL'), delayMs);
    };
    for (const dir of [cwd, path.join(cwd, 'ralph')]) if (existsSync(dir)) watchers.push(watch(dir, onChange));
  });
  const writingMs = first === undefined ? 0 : performance.now() - first;
  for (const w of watchers) w.close();
  return { killed: result.killed, writingMs };
}

describe('install killed at every step (the test pause hook)', () => {
  it.each(['first install', 'upgrade'])(
    '%s: every step leaves the old or the new install, and the next install finishes',
    async (name) => {
      const make = await scenario(name);
      const { before, after } = await reference(make);
      const seen: string[] = [];
      for (let steps = 1; ; steps++) {
        const repo = make();
        if (!(await killAfterSteps(repo, steps))) break;
        const state = classify(repo, before, after);
        seen.push(state);
        expect(state, `${name}: killed after step ${steps}`).not.toBe('half');
        await expectFinishes(repo, after, `${name}: killed after step ${steps}`);
      }
      // Staging (a step per file) and the journal change nothing; then the renames, the last one completing the install.
      expect(seen.join(' ')).toMatch(/^(old ){4,}(decided )*new$/);
    },
    180_000,
  );
});

// The deterministic kills above cover every step; the random ones add moments between them. CI bounds them to 4 per
// scenario (each kill is an install, a classification and a finishing install); a local run makes 12.
const RANDOM_KILLS = process.env.CI ? 4 : 12;

describe('install killed at random moments (seeded)', () => {
  it.each(['first install', 'upgrade'])(
    `%s: ${RANDOM_KILLS} SIGKILLs of the real CLI, never a half install, the next install finishes`,
    async (name) => {
      const make = await scenario(name);
      const { before, after } = await reference(make);
      // How long the writing part of an install lasts on this machine, measured here, not assumed; an install that
      // finished before its kill measures it again, since a loaded machine's first measure can be far too long.
      let { writingMs } = await killAfterFirstChange(make());
      const next = random(SEED + name.length);
      const counts: Record<string, number> = { old: 0, decided: 0, new: 0 };
      let kills = 0;
      for (let attempt = 0; kills < RANDOM_KILLS && attempt < 5 * RANDOM_KILLS; attempt++) {
        const repo = make();
        const delay = next() * writingMs * 1.2;
        const run = await killAfterFirstChange(repo, delay);
        if (!run.killed) {
          if (run.writingMs > 0) writingMs = run.writingMs;
          continue;
        }
        kills++;
        const context = `${name}: seed ${SEED}, attempt ${attempt}, killed ${delay.toFixed(1)} ms after the first change (writing takes ${writingMs.toFixed(1)} ms)`;
        const state = classify(repo, before, after);
        expect(state, context).not.toBe('half');
        counts[state]++;
        await expectFinishes(repo, after, context);
      }
      expect(kills).toBe(RANDOM_KILLS);
      console.info(`${name}: ${kills} random kills (writing ${writingMs.toFixed(1)} ms): ${JSON.stringify(counts)}`);
    },
    180_000,
  );
});
