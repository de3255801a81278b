// `setup` once per loop for each lockfile content (verify/setup-cache.ts): on an npm project (`npm ci`, a lockfile, a
// dev dependency from a local `file:` tarball) three stories claimed one after another and the final gate run setup
// once, not once per checkout (the weak-check probe's included), with the same check runs; and what a check writes
// into node_modules (the agent's code replacing a dependency's file) does not reach the next checkout, which gets its
// own copy; nor does a change to the cache itself, which is then dropped and setup runs again.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { findExecutable } from '../../../../src/engine/agents/check.js';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { runFinalGate } from '../../../../src/engine/verify/final-gate.js';
import { probeWeakChecks } from '../../../../src/engine/verify/weak-checks.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { loopSetupCache } from '../../../../src/engine/verify/setup-cache.js';
import { keepRecordsIn } from '../../../../src/engine/store/layout.js';
import type { CheckLine } from '../../../../src/engine/store/ledger.js';
import type { CheckSandbox, StoryVerdict } from '../../../../src/engine/verify/types.js';

const bwrap = findExecutable('bwrap', process.env);
import { git } from '../../../support/repo.js';
import {
  claim,
  commitAll,
  plan,
  readLedgerLines,
  readPrd,
  story,
  verifyRepo,
  type VerifyRepo,
} from '../../../support/verify-repo.js';

const SETUP = 'npm ci --no-audit --no-fund --offline';
const IDS = ['US-1', 'US-2', 'US-3'];
// Each story's test asks the dependency (installed by setup from the tarball) whether its feature file is there.
const test = (n: number) =>
  `require('../src/s${n}.cjs');\nif (!require('dep').feature(${n})) { console.error('feature-${n}.txt missing'); process.exit(1); }\n`;

/** `files` packed as an npm package (`package/...`) into the tarball `to`. */
function packTarball(to: string, files: Record<string, string>): void {
  const src = mkdtempSync(path.join(tmpdir(), 'dep-src-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(src, 'package', name)), { recursive: true });
    writeFileSync(path.join(src, 'package', name), text);
  }
  mkdirSync(path.dirname(to), { recursive: true });
  execFileSync('tar', ['-czf', to, '-C', src, 'package']);
  rmSync(src, { recursive: true, force: true });
}

/** The plan committed with its tests first, the dependency packed into tools/ and locked; returns the repo and its pins. */
async function npmProject(): Promise<{ r: VerifyRepo; pins: Awaited<ReturnType<typeof readPins>> }> {
  const prd = plan(
    IDS.map((id, i) => story(id, { checks: [`node test/t${i + 1}.cjs`] })),
    { setup: SETUP },
  );
  const pkg = { name: 'demo', version: '1.0.0', private: true, devDependencies: { dep: 'file:tools/dep-1.0.0.tgz' } };
  const r = verifyRepo(prd, {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    '.gitignore': 'node_modules/\n',
    ...Object.fromEntries([1, 2, 3].map((n) => [`test/t${n}.cjs`, test(n)])),
  });
  packTarball(path.join(r.dir, 'tools/dep-1.0.0.tgz'), {
    'package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the package's source text, a template literal of its own
    'index.js': "exports.feature = (n) => require('node:fs').existsSync(`feature-${n}.txt`);\n",
  });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts'], {
    cwd: r.dir,
    stdio: 'ignore',
  });
  commitAll(r.dir, {}, 'chore: lockfile');
  return { r, pins: await readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), prd) };
}

/** Story `n` claimed on a commit of `work`, verified as the runner's iteration `n`. */
async function claimStory(
  r: VerifyRepo,
  pins: Awaited<ReturnType<typeof readPins>>,
  n: number,
  work: Record<string, string>,
  sandbox?: CheckSandbox,
): Promise<StoryVerdict> {
  const before = readFileSync(r.prdPath, 'utf8');
  claim(r, `US-${n}`);
  commitAll(r.dir, work, `feat: US-${n}`);
  return (await verifyIteration(r.input({ pins, prdBefore: before, iteration: n, sandbox }))).verdicts[0];
}

/** From now on `npm` (setup's) is a shim on PATH that counts its runs; returns the count so far. */
function countNpmRuns(): () => number {
  const dir = mkdtempSync(path.join(tmpdir(), 'npm-count-'));
  const counter = path.join(dir, 'runs');
  writeFileSync(counter, '');
  writeFileSync(
    path.join(dir, 'npm'),
    `#!/bin/sh\necho run >> '${counter}'\nexec '${findExecutable('npm', process.env)}' "$@"\n`,
    { mode: 0o755 },
  );
  vi.stubEnv('PATH', `${dir}:${process.env.PATH}`);
  return () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length;
}

/**
 * A `cp` first on the runner's PATH (as an agent can put one into node_modules/.bin, which `npx` puts first): it logs
 * its runs and copies as cp does. Returns the count of its runs.
 */
function plantCp(): () => number {
  const dir = mkdtempSync(path.join(tmpdir(), 'planted-'));
  const log = path.join(dir, 'runs');
  writeFileSync(log, '');
  writeFileSync(path.join(dir, 'cp'), `#!/bin/sh\necho run >> '${log}'\nexec /bin/cp "$@"\n`, { mode: 0o755 });
  vi.stubEnv('PATH', `${dir}:${process.env.PATH}`);
  return () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
}

const runs = (r: VerifyRepo, scope: CheckLine['scope']) =>
  readLedgerLines(r).filter((l): l is CheckLine => l.kind === 'check' && l.scope === scope && !l.shared).length;

describe('setup cache', () => {
  afterEach(() => void vi.unstubAllEnvs());
  // The runner removes its caches when it exits; a test worker may end without that event.
  afterAll(() =>
    readdirSync(tmpdir())
      .filter((n) => n.startsWith('ralph-setup-') && n.includes(`~${process.pid}~`))
      .forEach((n) => rmSync(path.join(tmpdir(), n), { recursive: true, force: true })),
  );

  it("honest: the weak-check probe, three stories and the final gate run `npm ci` once (was once per checkout: 5), the checks as often as before, the copies by the system's cp (not one first on PATH)", async () => {
    const { r, pins } = await npmProject();
    const count = countNpmRuns();
    const planted = plantCp();
    const probe = {
      topLevel: r.dir,
      repoRoot: r.dir,
      ledgerPath: r.ledgerPath,
      loopId: 'L1',
      checkTimeoutMs: 20_000,
      log: r.input().log,
      pins,
      prd: readPrd(r),
    };
    expect(await probeWeakChecks(probe)).toEqual([]);
    for (const n of [1, 2, 3])
      expect(await claimStory(r, pins, n, { [`feature-${n}.txt`]: 'done\n', [`src/s${n}.cjs`]: '' })).toMatchObject({
        status: 'verified',
      });
    const gate = await runFinalGate({
      ...r.input({ pins }),
      prd: readPrd(r),
      topLevel: r.dir,
      verifiedAt: new Map(),
      shipped: new Map(),
      verdictKey: null,
    });
    expect(gate.passed).toBe(true);
    const probed = readLedgerLines(r).filter((l) => l.kind === 'probe').length;
    expect({ npm: count(), setupLines: runs(r, 'setup'), checks: runs(r, 'story'), probed }).toEqual({
      npm: 1,
      setupLines: 0,
      checks: 6,
      probed: 3,
    });
    expect(r.logs.filter((l) => l.includes("copied from the loop's setup"))).toHaveLength(4);
    // The copies were made by the system's cp, never by one found on PATH (it ran outside any sandbox).
    expect(planted()).toBe(0);
  }, 120_000);

  it('attack: a check that rewrites a dependency in its node_modules, or code that rewrites the cache itself, does not reach the next checkout', async () => {
    const { r, pins } = await npmProject();
    const count = countNpmRuns();
    const forge = "require('node:fs').writeFileSync(require.resolve('dep'), 'exports.feature = () => true;\\n');\n";
    const caches = () =>
      new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('ralph-setup-') && n.includes(`~${process.pid}~`)));
    const old = caches();
    // US-1's checkout builds the cache; US-2's check runs in a copy of it and forges the dependency; US-3 did no work.
    expect(await claimStory(r, pins, 1, { 'feature-1.txt': 'done\n', 'src/s1.cjs': '' })).toMatchObject({
      status: 'verified',
    });
    expect(await claimStory(r, pins, 2, { 'feature-2.txt': 'done\n', 'src/s2.cjs': forge })).toMatchObject({
      status: 'verified',
    });
    const rejected = { status: 'rejected', reason: expect.stringContaining('check `node test/t3.cjs` exited 1') };
    expect(await claimStory(r, pins, 3, { 'src/s3.cjs': '' })).toMatchObject(rejected);
    expect(count()).toBe(1);
    // Without --sandbox the agent's code can reach the runner's temp folder: the cache is forged between claims.
    const [made] = [...caches()].filter((n) => !old.has(n));
    writeFileSync(path.join(tmpdir(), made, 'node_modules/dep/index.js'), 'exports.feature = () => true;\n');
    expect(await claimStory(r, pins, 3, { 'src/s3.cjs': '' })).toMatchObject(rejected);
    expect(count()).toBe(2);
    expect(r.logs.filter((l) => l.includes('changed after setup made it'))).toHaveLength(1);
  }, 120_000);

  it.each([
    ['from the folder npm installs (INIT_CWD)', 'process.env.INIT_CWD', false],
    ['by the absolute path of the repository, under --sandbox', 'REPO', true],
  ] as const)(
    'attack: a dependency whose install script copies the sources into node_modules %s: the cache holds none of them, so a later commit cannot lean on an earlier one',
    async (_how, from, sandboxed) => {
      if (sandboxed && !bwrap) return;
      const prd = plan(
        ['a', 'b'].map((f, i) => story(`US-${i + 1}`, { checks: [`node test/${f}.test.cjs`] })),
        { setup: SETUP },
      );
      const pkg = { name: 'demo', version: '1.0.0', private: true };
      const r = verifyRepo(prd, {
        'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
        '.gitignore': 'node_modules/\n',
        'test/a.test.cjs': "if (require('../src/a.cjs') !== 'A') process.exit(1);\n",
        'test/b.test.cjs': "if (require('../src/b.cjs')(41) !== 42) process.exit(1);\n",
      });
      const pins = await readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), prd);
      // US-1's commit: the dependency (its install script takes a copy of src/, when there is one), US-1's work, and
      // US-2's real work too; its key is the one every later checkout shares.
      packTarball(path.join(r.dir, 'vendor/snap-1.0.0.tgz'), {
        'package.json': JSON.stringify({ name: 'snap', version: '1.0.0', scripts: { postinstall: 'node copy.cjs' } }),
        'copy.cjs':
          `const fs = require('node:fs'); const src = require('node:path').join(${from === 'REPO' ? JSON.stringify(r.dir) : from}, 'src');\n` +
          "if (fs.existsSync(src)) fs.cpSync(src, 'copy', { recursive: true });\n",
      });
      writeFileSync(
        path.join(r.dir, 'package.json'),
        JSON.stringify({ ...pkg, dependencies: { snap: 'file:vendor/snap-1.0.0.tgz' } }),
      );
      mkdirSync(path.join(r.dir, 'src'));
      writeFileSync(path.join(r.dir, 'src/a.cjs'), "module.exports = 'A';\n");
      writeFileSync(path.join(r.dir, 'src/b.cjs'), 'module.exports = (x) => x + 1;\n');
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts'], {
        cwd: r.dir,
        stdio: 'ignore',
      });
      const count = countNpmRuns();
      const before = readFileSync(r.prdPath, 'utf8');
      claim(r, 'US-1');
      commitAll(r.dir, {}, 'feat: US-1');
      const sandbox: CheckSandbox | undefined = sandboxed
        ? { bwrap: bwrap!, readOnly: [r.dir, path.join(r.dir, '.git')], hidden: [], network: true }
        : undefined;
      const first = await verifyIteration(r.input({ pins, prdBefore: before, iteration: 1, sandbox }));
      expect(first.verdicts[0]).toMatchObject({ status: 'verified' });
      // US-2's commit leaves no implementation in the tree: it reads the copy an install took of an earlier commit.
      expect(
        await claimStory(r, pins, 2, { 'src/b.cjs': "module.exports = require('snap/copy/b.cjs');\n" }, sandbox),
      ).toMatchObject({ status: 'rejected' });
      // Built once where the cache is built (no src/ there), copied into both checkouts; a sandboxed npm cannot reach
      // the counter in the test's temp folder.
      if (!sandboxed) expect(count()).toBe(1);
    },
    120_000,
  );

  it('one cache per loop across its worktrees: a --worktree loop, each --parallel worker and the merge queue share one install', () => {
    const main = mkdtempSync(path.join(tmpdir(), 'ralphkit-main-'));
    const worker = `${main}.ralph-worktrees/l1--w1`;
    keepRecordsIn([worker], main);
    expect(loopSetupCache(worker, 'l1')).toBe(loopSetupCache(main, 'l1'));
    expect(loopSetupCache(worker, 'l2')).not.toBe(loopSetupCache(main, 'l1'));
    rmSync(main, { recursive: true, force: true });
  });
});
