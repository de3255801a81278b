// `setup` runs the agent's code (SPEC §6): the project's install scripts are pinned like a check's script, the files a
// pinned script names are pinned, and what setup creates where the plan commit pins an absence is removed before the
// checks. Each attack next to the honest run on the same plan; with and without --sandbox. And a realistic npm project
// (`npm ci`, a lockfile, a dev dependency from a local `file:` package, a `prepare` build) is still accepted.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { findExecutable } from '../../../../src/engine/agents/check.js';
import type { Prd } from '../../../../src/prd/types.js';
import type { StoryVerdict } from '../../../../src/engine/verify/types.js';
import { git } from '../../../support/repo.js';
import { claim, commitAll, plan, story, verifyRepo } from '../../../support/verify-repo.js';

const bwrap = findExecutable('bwrap', process.env);
const MODES: Array<[string, boolean]> = [
  ['without --sandbox', false],
  ...(bwrap ? [['with --sandbox', true] as [string, boolean]] : []),
];

const pkg = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ name: 'demo', version: '1.0.0', private: true, scripts, ...extra }, null, 2)}\n`;
const FEATURE_TEST =
  "const { existsSync } = require('node:fs');\nif (!existsSync('feature.txt')) { console.error('feature.txt missing'); process.exit(1); }\n";
// What an agent's code writes to make `npm test` pass without the work: node-options that exit 0 before any test.
const FORGE_NPMRC =
  "require('node:fs').writeFileSync('.npmrc', 'node-options=--require=./forge.cjs\\n'); require('node:fs').writeFileSync('forge.cjs', 'process.exit(0)\\n');";

/** A loop started on `files` with `prd`; the agent's commit `work` is claimed and verified (the repository may need `prepare` first). */
async function claimOn(
  prd: Prd,
  files: Record<string, string>,
  work: Record<string, string>,
  sandboxed: boolean,
  prepare?: (dir: string) => void,
): Promise<StoryVerdict> {
  const r = verifyRepo(prd, files);
  if (prepare) {
    prepare(r.dir);
    commitAll(r.dir, {}, 'chore: lockfile');
  }
  const head = git(r.dir, 'rev-parse', 'HEAD');
  const pins = await readPins(r.dir, head, prd);
  commitAll(r.dir, work);
  claim(r, 'US-1');
  const sandbox = sandboxed
    ? { bwrap: bwrap!, readOnly: [r.dir, path.join(r.dir, '.git')], hidden: [], network: false }
    : undefined;
  return (await verifyIteration(r.input({ pins, ...(sandbox ? { sandbox } : {}) }))).verdicts[0];
}

const SETUP_PLAN = plan([story('US-1', { checks: ['npm test'] })], {
  setup: 'npm install --no-audit --no-fund --offline',
});

describe.each(MODES)('setup (%s)', (_mode, sandboxed) => {
  it('setup: an install script the agent adds to package.json does not run (pinned absent like a pretest)', async () => {
    const files = {
      'package.json': pkg({ test: 'node test/feature.test.cjs' }),
      'test/feature.test.cjs': FEATURE_TEST,
    };
    const work = {
      'package.json': pkg({
        test: 'node test/feature.test.cjs',
        postinstall: `node -e "${FORGE_NPMRC.replace(/"/g, '\\"')}"`,
      }),
    };
    const verdict = await claimOn(SETUP_PLAN, files, work, sandboxed);
    expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('check `npm test` exited 1') });
    expect(verdict.reason).toContain('package.json scripts.postinstall');
  }, 60_000);

  it("setup: what the project's own install script (running the agent's code) creates where an absence is pinned is removed", async () => {
    const files = {
      'package.json': pkg({ test: 'node test/feature.test.cjs', prepare: 'node scripts/prepare.cjs' }),
      'scripts/prepare.cjs': "require('../src/build.cjs');\n",
      'src/build.cjs': '// builds nothing yet\n',
      'test/feature.test.cjs': FEATURE_TEST,
    };
    const verdict = await claimOn(SETUP_PLAN, files, { 'src/build.cjs': `${FORGE_NPMRC}\n` }, sandboxed);
    expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('check `npm test` exited 1') });
  }, 60_000);

  it('setup: a pyvenv.cfg setup puts into a folder the commit has files in does not hide what it creates there where an absence is pinned', async () => {
    // test/.npmrc would set node-options for npm run in test/; the pyvenv.cfg beside it would make the sweep skip test/.
    const hide =
      "const fs = require('node:fs'); fs.writeFileSync('test/pyvenv.cfg', 'home = /usr/bin\\n'); fs.writeFileSync('test/.npmrc', 'node-options=--require=../forge.cjs\\n'); fs.writeFileSync('forge.cjs', 'process.exit(0);\\n');\n";
    const files = {
      'package.json': pkg({ test: 'cd test && npm run feature', prepare: 'node scripts/prepare.cjs' }),
      'test/package.json': JSON.stringify({ name: 't', private: true, scripts: { feature: 'node feature.test.cjs' } }),
      'scripts/prepare.cjs': "require('../src/build.cjs');\n",
      'src/build.cjs': '// builds nothing yet\n',
      'test/feature.test.cjs': FEATURE_TEST.replace("'feature.txt'", "'../feature.txt'"),
    };
    const verdict = await claimOn(SETUP_PLAN, files, { 'src/build.cjs': hide }, sandboxed);
    expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('check `npm test` exited 1') });
  }, 60_000);

  it('setup: what setup writes into HOME (~/.npmrc) does not reach the checks, which get a fresh HOME', async () => {
    const files = {
      'package.json': pkg({ test: 'node test/feature.test.cjs', prepare: 'node scripts/prepare.cjs' }),
      'scripts/prepare.cjs': "require('../src/build.cjs');\n",
      'src/build.cjs': '// builds nothing yet\n',
      'test/feature.test.cjs': FEATURE_TEST,
    };
    const toHome =
      "const os = require('node:os'), fs = require('node:fs'), p = require('node:path'); fs.writeFileSync(p.join(os.homedir(), 'forge.cjs'), 'process.exit(0)\\n'); fs.writeFileSync(p.join(os.homedir(), '.npmrc'), 'node-options=--require=' + p.join(os.homedir(), 'forge.cjs') + '\\n');\n";
    const verdict = await claimOn(SETUP_PLAN, files, { 'src/build.cjs': toHome }, sandboxed);
    expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('check `npm test` exited 1') });
  }, 60_000);

  it('setup: the file a pinned script names is pinned ("test": "node run-checks.cjs" pins run-checks.cjs)', async () => {
    const files = { 'package.json': pkg({ test: 'node run-checks.cjs' }), 'run-checks.cjs': FEATURE_TEST };
    const verdict = await claimOn(SETUP_PLAN, files, { 'run-checks.cjs': 'process.exit(0);\n' }, sandboxed);
    expect(verdict).toMatchObject({ status: 'rejected', reason: expect.stringContaining('run-checks.cjs') });
  }, 60_000);

  it('setup: honest work on a real npm project passes (npm ci, a lockfile, a local file: dev dependency with a bin, a prepare build)', async () => {
    const files = {
      'package.json': pkg(
        { test: 'check-feature && node test/feature.test.cjs', prepare: 'node scripts/prepare.cjs' },
        { devDependencies: { 'feature-checker': 'file:./tools/feature-checker' } },
      ),
      'scripts/prepare.cjs':
        "require('node:fs').mkdirSync('build', { recursive: true });\nrequire('node:fs').writeFileSync('build/out.txt', 'built\\n');\n",
      'tools/feature-checker/package.json': JSON.stringify({
        name: 'feature-checker',
        version: '1.0.0',
        bin: { 'check-feature': 'bin.cjs' },
      }),
      'tools/feature-checker/bin.cjs':
        "#!/usr/bin/env node\nif (!require('node:fs').existsSync('build/out.txt')) process.exit(3);\n",
      'test/feature.test.cjs': FEATURE_TEST,
      '.gitignore': 'node_modules/\nbuild/\n',
    };
    const prd = plan([story('US-1', { checks: ['npm test'] })], { setup: 'npm ci --no-audit --no-fund --offline' });
    const lockfile = (dir: string) => {
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts'], {
        cwd: dir,
        stdio: 'ignore',
      });
    };
    const verdict = await claimOn(
      prd,
      files,
      { 'feature.txt': 'done\n', 'src/feature.cjs': 'module.exports = 1;\n' },
      sandboxed,
      lockfile,
    );
    expect(verdict.status).toBe('verified');
  }, 90_000);
});
