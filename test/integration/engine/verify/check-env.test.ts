// The check environment (SPEC §6): checks run with a HOME the runner made and the PATH of the loop's start, so what
// the agent writes into the user's HOME or into a writable PATH folder after the loop started does not decide a
// verdict. Each attack is paired with the honest run on the same plan; with and without --sandbox.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { buildCheckEnv, takeCheckEnvBase } from '../../../../src/engine/verify/check-env.js';
import {
  pythonPathFolders,
  repoPathFolders,
  withCheckoutPath,
  withRepoVars,
} from '../../../../src/engine/verify/repo-env.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { findExecutable } from '../../../../src/engine/agents/check.js';
import type { CheckEnvBase, CheckSandbox } from '../../../../src/engine/verify/types.js';
import { git, testdir } from '../../../support/repo.js';
import { claim, commitAll, plan, story, verifyRepo, type VerifyRepo } from '../../../support/verify-repo.js';

const bwrap = findExecutable('bwrap', process.env);
const MODES: Array<[string, boolean]> = [
  ['without --sandbox', false],
  ...(bwrap ? [['with --sandbox', true] as [string, boolean]] : []),
];

// An npm project whose test fails until feature.txt exists; `npm test` runs the pinned script.
const PROJECT = {
  'package.json': JSON.stringify(
    { name: 'demo', version: '1.0.0', private: true, scripts: { test: 'node test/feature.test.mjs' } },
    null,
    2,
  ),
  'test/feature.test.mjs':
    "import { existsSync } from 'node:fs';\nif (!existsSync('feature.txt')) { console.error('feature.txt missing'); process.exit(1); }\n",
};

function sandboxOf(r: VerifyRepo): CheckSandbox {
  return {
    bwrap: bwrap!,
    home: process.env.HOME,
    readOnly: [r.dir, path.join(r.dir, '.git')],
    hidden: [],
    network: true,
  };
}

/** A user's HOME (with a git identity) and a writable folder first on PATH, as many setups have (~/.local/bin). */
function userEnv(): { home: string; bin: string } {
  const home = testdir('ralphkit-home-');
  const bin = path.join(home, '.local', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Owner Of The Loop\n\temail = owner@example.com\n');
  vi.stubEnv('HOME', home);
  vi.stubEnv('PATH', `${bin}${path.delimiter}${process.env.PATH}`);
  // Not what a user's shell has (npx, which runs this test, points npm at the real ~/.npmrc through it).
  for (const name of ['XDG_CONFIG_HOME', 'npm_config_userconfig', 'NPM_CONFIG_USERCONFIG']) vi.stubEnv(name, undefined);
  return { home, bin };
}

afterEach(() => vi.unstubAllEnvs());

describe.each(MODES)('check environment (%s)', (_mode, sandboxed) => {
  const run = async (r: VerifyRepo, base: ReturnType<typeof takeCheckEnvBase>) =>
    (await verifyIteration(r.input({ checkBase: base, ...(sandboxed ? { sandbox: sandboxOf(r) } : {}) }))).verdicts[0];

  it('check environment: a ~/.npmrc the agent writes (node-options) does not reach the checks', async () => {
    const { home } = userEnv();
    const r = verifyRepo(plan([story('US-1', { checks: ['npm test'] })]), PROJECT);
    const base = takeCheckEnvBase(process.env); // the loop starts
    const forge = path.join(home, 'forge.cjs');
    writeFileSync(forge, 'process.exit(0);\n');
    writeFileSync(path.join(home, '.npmrc'), `node-options=--require=${forge}\n`);
    commitAll(r.dir, { 'src.txt': 'no feature\n' });
    claim(r, 'US-1');
    expect(await run(r, base)).toMatchObject({ status: 'rejected', reason: 'check `npm test` exited 1' });
  }, 60_000);

  it('check environment: a node the agent puts first on PATH after the loop started does not run in the checks', async () => {
    const { bin } = userEnv();
    const r = verifyRepo(plan([story('US-1', { checks: ['node test/feature.test.mjs'] })]), PROJECT);
    const base = takeCheckEnvBase(process.env);
    writeFileSync(path.join(bin, 'node'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(bin, 'node'), 0o755);
    commitAll(r.dir, { 'src.txt': 'no feature\n' });
    claim(r, 'US-1');
    expect(await run(r, base)).toMatchObject({ status: 'rejected' });
    expect(r.logs.join('\n')).toContain(`PATH folders changed since the loop started: ${bin} (added node)`);
  }, 60_000);

  it("check environment: a PATH folder inside the repository (node_modules/.bin under npx) is the checkout's own copy for a check: the working tree's, whose tool the agent rewrote, is never run; honest work finds the one setup installed", async () => {
    // A tool of the project's: committed under tools/, installed into node_modules/.bin by setup (as npm ci would).
    const tool = 'feature-test';
    const prd = {
      ...plan([story('US-1', { checks: [tool] })]),
      setup: `mkdir -p node_modules/.bin && cp tools/${tool} node_modules/.bin/`,
    };
    const files = {
      ...PROJECT,
      '.gitignore': 'node_modules/\n',
      [`tools/${tool}`]: '#!/bin/sh\nexec node test/feature.test.mjs\n',
    };
    const attack = verifyRepo(prd, files);
    chmodSync(path.join(attack.dir, 'tools', tool), 0o755);
    // The working tree's copy, first on PATH as `npm run ralph` puts it; the agent then makes it pass anything.
    const bin = path.join(attack.dir, 'node_modules/.bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, tool), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    vi.stubEnv('PATH', `${bin}${path.delimiter}${process.env.PATH}`);
    const base = takeCheckEnvBase(process.env, realpathSync(attack.dir)); // the loop starts
    expect(base.leftOut).toEqual([bin]);
    expect(base.path.map((p) => p.dir)).not.toContain(bin);
    commitAll(attack.dir, { 'src.txt': 'no feature\n' });
    claim(attack, 'US-1');
    expect(await run(attack, base)).toMatchObject({ status: 'rejected', reason: `check \`${tool}\` exited 1` });
    commitAll(attack.dir, { 'feature.txt': 'done\n' });
    claim(attack, 'US-1');
    expect(await run(attack, base)).toMatchObject({ status: 'verified' });
  }, 60_000);

  it('check environment: a program a commit puts into a PATH folder of the repository (`bin/` from direnv) is not what a check runs: the folder is pinned as the plan commit has it; honest work runs its committed tools from there', async () => {
    const check = 'node test/feature.test.mjs && test "$(hello)" = hi';
    const prdFile = plan([story('US-1', { checks: [check] })]);
    const r = verifyRepo(prdFile, { ...PROJECT, 'bin/hello': '#!/bin/sh\necho hi\n' });
    chmodSync(path.join(r.dir, 'bin', 'hello'), 0o755);
    const top = realpathSync(r.dir);
    git(r.dir, 'add', '-A');
    git(r.dir, 'commit', '-qm', 'tools');
    vi.stubEnv('PATH', `${path.join(r.dir, 'bin')}${path.delimiter}${process.env.PATH}`);
    const base = takeCheckEnvBase(process.env, top); // the loop starts
    const pins = await readPins(
      r.dir,
      git(r.dir, 'rev-parse', 'HEAD'),
      prdFile,
      repoPathFolders(process.env, top).map((f) => f.rel),
    );
    expect(pins.pathFolders).toEqual(['bin']);
    expect(pins.paths).toContain('bin/hello');
    // The agent's node, and hello made to pass too: neither is what the check runs.
    writeFileSync(path.join(r.dir, 'bin', 'node'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(path.join(r.dir, 'bin', 'hello'), '#!/bin/sh\necho hi\n# changed\n');
    commitAll(r.dir, { 'src.txt': 'no feature\n' });
    claim(r, 'US-1');
    const input = { checkBase: base, pins, ...(sandboxed ? { sandbox: sandboxOf(r) } : {}) };
    expect((await verifyIteration(r.input(input))).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining(
        `check \`${check}\` exited 1; the agent changed pinned test inputs bin/hello, bin/node:`,
      ),
    });
    commitAll(r.dir, { 'feature.txt': 'done\n' });
    claim(r, 'US-1');
    expect((await verifyIteration(r.input(input))).verdicts[0]).toMatchObject({ status: 'verified' });
  }, 60_000);

  it("check environment: a variable naming an ignored file of the working tree (Yarn's NODE_OPTIONS --require <repo>/.pnp.cjs) is left out of the checks: the agent's rewrite of that file does not decide; one naming a folder (PYTHONPATH) names the checkout's", async () => {
    const check = 'node test/feature.test.mjs && test "$LIBS" = "$PWD/lib:/opt/x"';
    const r = verifyRepo(plan([story('US-1', { checks: [check] })]), {
      ...PROJECT,
      '.gitignore': '.pnp.cjs\n',
      'lib/a.txt': 'a\n',
    });
    writeFileSync(path.join(r.dir, '.pnp.cjs'), '/* yarn pnp runtime */\n');
    vi.stubEnv('NODE_OPTIONS', `--max-old-space-size=512 --require ${r.dir}/.pnp.cjs`);
    vi.stubEnv('LIBS', `${r.dir}/lib:/opt/x`);
    const base = takeCheckEnvBase(process.env, realpathSync(r.dir));
    expect(kinds(base.repoVars)).toEqual({ NODE_OPTIONS: 'drop', LIBS: 'rewrite' });
    // The agent rewrites the ignored file so that any node passes; nothing of it is committed.
    writeFileSync(path.join(r.dir, '.pnp.cjs'), 'process.exit(0);\n');
    commitAll(r.dir, { 'src.txt': 'no feature\n' });
    claim(r, 'US-1');
    expect(await run(r, base)).toMatchObject({ status: 'rejected', reason: `check \`${check}\` exited 1` });
    commitAll(r.dir, { 'feature.txt': 'done\n' });
    claim(r, 'US-1');
    expect(await run(r, base)).toMatchObject({ status: 'verified' });
  }, 60_000);

  it("check environment: honest work passes, with the user's git identity, the tools on PATH at loop start, and a TMPDIR it can write (the sandbox's /tmp when yours is elsewhere)", async () => {
    const { bin } = userEnv();
    writeFileSync(path.join(bin, 'greet'), '#!/bin/sh\necho hello\n');
    chmodSync(path.join(bin, 'greet'), 0o755);
    // A TMPDIR outside /tmp, which the sandbox would leave read-only to the checks (jest writes its cache there).
    vi.stubEnv('TMPDIR', testdir('ralphkit-tmpdir-', existsSync('/var/tmp') ? '/var/tmp' : undefined));
    const check =
      'npm test && test "$(git config --global user.name)" = "Owner Of The Loop" && test "$(greet)" = hello && touch "$TMPDIR/check-$$"';
    const r = verifyRepo(plan([story('US-1', { checks: [check] })]), PROJECT);
    const base = takeCheckEnvBase(process.env);
    commitAll(r.dir, { 'feature.txt': 'done\n' });
    claim(r, 'US-1');
    expect(await run(r, base)).toMatchObject({ status: 'verified' });
  }, 60_000);
});

describe("check environment: npm's cache", () => {
  it("the checks get an npm cache of their own, nothing of the user's (a tarball a check puts into a shared store under its own hash would be installed by a later npm ci of a lockfile naming it)", () => {
    const home = testdir('ralphkit-home-');
    const cache = path.join(home, '.npm');
    mkdirSync(path.join(cache, '_npx/abc/node_modules/prettier'), { recursive: true });
    mkdirSync(path.join(cache, '_cacache/content-v2/sha512'), { recursive: true });
    const base = takeCheckEnvBase({ HOME: home, PATH: '/usr/bin:/bin' });
    const checkHome = testdir('ralphkit-check-home-');
    const { env } = buildCheckEnv(base, { HOME: home, PATH: '/usr/bin:/bin' }, checkHome);
    const own = env.npm_config_cache!;
    expect(own).toBe(path.join(checkHome, '.ralph', 'npm-cache'));
    expect(readdirSync(own)).toEqual([]);
  });
});

describe('check environment: a PATH folder named twice, once through a link (/bin and /usr/bin)', () => {
  it('is one folder under both names, listed once: an entry changed in it is seen, and neither name brings it back', () => {
    const { home, bin } = userEnv();
    const link = path.join(home, 'bin-link');
    symlinkSync(bin, link);
    writeFileSync(path.join(bin, 'greet'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
    vi.stubEnv('PATH', `${bin}${path.delimiter}${link}${path.delimiter}${process.env.PATH}`);
    const base = takeCheckEnvBase(process.env);
    // The link is taken for where it leads at loop start: the one folder, once.
    expect(base.path.map((p) => p.dir).filter((d) => d === bin || d === link)).toEqual([bin]);
    expect(Object.keys(base.path[0].listing ?? {})).toEqual(['greet']);
    writeFileSync(path.join(bin, 'node'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const checks = testdir('ralphkit-checks-home-');
    const { env, changed } = buildCheckEnv(base, process.env, checks);
    expect(changed).toEqual([`${bin} (added node)`]);
    // Neither name brings the new node onto the checks' PATH; greet stays, through the runner's folder of links.
    const dirs = (env.PATH ?? '').split(path.delimiter);
    expect(dirs).not.toContain(bin);
    expect(dirs).not.toContain(link);
    expect(findExecutable('node', env)).not.toBe(path.join(bin, 'node'));
    expect(findExecutable('greet', env)).toMatch(new RegExp(`^${checks}/`));
  });
});

describe('check environment: PATH folders under --sandbox', () => {
  it("are listed only inside what the sandboxed agent can write on the host (its repository's worktrees, git folder): HOME and system folders are read-only to it, and a program you install there during the loop stays on the checks' PATH", () => {
    const { bin } = userEnv();
    const repo = testdir('ralphkit-repo-');
    const trees = `${repo}.ralph-worktrees`;
    const treeBin = path.join(trees, 'w1', 'bin');
    mkdirSync(treeBin, { recursive: true });
    vi.stubEnv('PATH', `${bin}${path.delimiter}${treeBin}${path.delimiter}${process.env.PATH}`);
    const writable = [repo, path.join(repo, '.git'), trees];
    const base = takeCheckEnvBase(process.env, repo, { sandboxWritable: writable });
    expect(base.path.find((p) => p.dir === bin)).toEqual({ dir: bin });
    expect(base.path.find((p) => p.dir === treeBin)?.listing).toEqual({});
    // Without the sandbox the agent writes what you can: your ~/.local/bin is listed.
    expect(takeCheckEnvBase(process.env, repo).path.find((p) => p.dir === bin)?.listing).toEqual({});
    // A tool you install into HOME while the loop runs is kept; one added among the worktrees is left out.
    writeFileSync(path.join(bin, 'greet'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
    writeFileSync(path.join(treeBin, 'node'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const { env, changed } = buildCheckEnv(base, process.env, testdir('ralphkit-checks-home-'));
    expect(changed).toEqual([`${treeBin} (added node)`]);
    expect(findExecutable('greet', env)).toBe(path.join(bin, 'greet'));
    expect(findExecutable('node', env)).not.toBe(path.join(treeBin, 'node'));
  });
});

describe('check environment: variables naming the repository', () => {
  it('are found where a path starts (after a separator, `=`, a quote), by where it leads however it is spelled, and only then', () => {
    const repo = realpathSync(testdir('ralphkit-repo-'));
    mkdirSync(path.join(repo, 'src'));
    const link = path.join(testdir('ralphkit-links-'), 'here');
    symlinkSync(repo, link);
    const env = {
      PATH: `${repo}/bin`,
      A: `--require=${repo}/.pnp.cjs`,
      B: `${link}/src:/usr/lib`,
      C: `"${repo}"`,
      D: `${repo}-other/x`,
      E: `/x${repo}/src`,
      F: `${repo}/src ${repo}/missing`,
      G: `--import file://${repo}/loader.mjs`,
      // A URL with an escape (a space in the repository's path), through the link.
      H: `--import ${pathToFileURL(`${link}/My Dir/loader.mjs`).href}`,
      I: `${repo}//src/./`,
      // A library folder of the repository's would load into every program, the runner's git included.
      LD_LIBRARY_PATH: `${repo}/src`,
      OPENSSL_MODULES: `${repo}/src`,
    };
    const base = takeCheckEnvBase(env, repo);
    expect(kinds(base.repoVars)).toEqual({
      A: 'drop',
      B: 'rewrite',
      C: 'rewrite',
      F: 'drop',
      G: 'drop',
      H: 'drop',
      I: 'rewrite',
      LD_LIBRARY_PATH: 'drop',
      OPENSSL_MODULES: 'drop',
    });
    // A PATH folder not made yet, named through the link, is the repository's too.
    const viaLink = takeCheckEnvBase({ PATH: `${link}/nm/.bin:/usr/bin` }, repo);
    expect(viaLink.leftOutRel).toEqual(['nm/.bin']);
    expect(viaLink.path.map((p) => p.dir)).toEqual(['/usr/bin']);
    // A folder named inside the repository that leads out of it (an ignored link, as devbox makes): the folder it led
    // to at loop start, whatever the link is made to lead to later.
    const outside = realpathSync(testdir('ralphkit-profile-'));
    mkdirSync(path.join(outside, 'bin'));
    symlinkSync(outside, path.join(repo, '.devbox'));
    const viaDevbox = takeCheckEnvBase({ PATH: `${repo}/.devbox/bin:/usr/bin` }, repo);
    expect(viaDevbox.leftOutRel).toEqual([]);
    expect(viaDevbox.path.map((p) => p.dir)).toEqual([path.join(outside, 'bin'), '/usr/bin']);
    // PYTHONPATH folders likewise, relative ones as they are; none above the repository.
    const py = { PYTHONPATH: `${link}/gen:./lib:../up:${repo}/src:/usr/lib/python3` };
    expect(pythonPathFolders(py, repo)).toEqual(['gen', 'lib', 'src']);
    const out = withRepoVars(env, base, '/tmp/co');
    expect(out).toEqual({
      PATH: env.PATH,
      B: '/tmp/co/src:/usr/lib',
      C: '"/tmp/co"',
      D: env.D,
      E: env.E,
      I: '/tmp/co/src',
    });
    // A value that changed since loop start is left out.
    expect(withRepoVars({ ...env, B: `${repo}/other` }, base, '/tmp/co').B).toBeUndefined();
    // --verify-in-place checks run in your tree, with them as they are.
    expect({ ...withCheckoutPath(env, base, repo), PATH: env.PATH }).toEqual(env);
    // --on-exit runs in your tree, with none of them.
    expect(Object.keys(withRepoVars(env, base)).sort()).toEqual(['D', 'E', 'PATH']);
  });
});

/** What each variable naming the repository becomes for a check. */
function kinds(vars: CheckEnvBase['repoVars']): Record<string, string> {
  return Object.fromEntries(Object.entries(vars ?? {}).map(([name, v]) => [name, v.how]));
}

describe('check environment: a repository folder on PATH, in the checkout', () => {
  it('is where it was at loop start, whatever the working tree has made of it since, and only as real folders down from the checkout', () => {
    const repo = testdir('ralphkit-repo-');
    const bin = path.join(repo, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    mkdirSync(path.join(repo, 'tools', '.bin'), { recursive: true });
    const env = { PATH: `${bin}${path.delimiter}/usr/bin` };
    const base = takeCheckEnvBase(env, repo);
    expect(base.leftOutRel).toEqual(['node_modules/.bin']);
    // The agent makes the ignored node_modules a link to a folder its commit holds.
    rmSync(path.join(repo, 'node_modules'), { recursive: true });
    symlinkSync(path.join(repo, 'tools'), path.join(repo, 'node_modules'));
    const checkout = testdir('ralphkit-checkout-');
    expect(withCheckoutPath(env, base, checkout).PATH).toBe(
      `${path.join(checkout, 'node_modules', '.bin')}${path.delimiter}${env.PATH}`,
    );
    // A link there in the checkout (a commit's, or setup's) keeps the folder off the check's PATH.
    mkdirSync(path.join(checkout, 'tools', '.bin'), { recursive: true });
    symlinkSync(path.join(checkout, 'tools'), path.join(checkout, 'node_modules'));
    expect(withCheckoutPath(env, base, checkout).PATH).toBe(env.PATH);
  });
});
