// Checks run on the commit (SPEC §6): a fresh checkout of the claimed commit, with the tests pinned at the plan
// commit. Each case is an agent trick that fools a check run in the working tree, next to the honest version.
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git, testdir, writeFiles } from '../../../support/repo.js';
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

// Ignored build output in the repository root makes a check pass although the committed sources would not produce it.
const CHECK = 'test "$(cat dist/out.txt)" = "built from v2"';
const SETUP = 'mkdir -p dist && echo "built from $(cat src.txt)" > dist/out.txt';

function repo() {
  const r = verifyRepo(plan([story('US-1')], { checks: [CHECK], setup: SETUP }), {
    '.gitignore': 'dist/\n',
    'src.txt': 'v1\n',
  });
  writeFiles(r.dir, { 'dist/out.txt': 'built from v2\n' }); // stale, ignored output the agent built by hand
  claim(r, 'US-1');
  return r;
}

const worktrees = (dir: string) =>
  git(dir, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '));

async function pinsOf(r: VerifyRepo, prd: Prd) {
  const head = git(r.dir, 'rev-parse', 'HEAD');
  return readPins(r.dir, head, prd);
}

describe('verifyIteration runs the checks on the commit', () => {
  it('--verify-in-place is fooled by ignored output in the working tree (why it is not the default)', async () => {
    const r = repo();
    commitAll(r.dir, {});
    expect((await verifyIteration(r.input({ inPlace: true }))).verdicts[0].status).toBe('verified');
  });

  it('the default rejects the same claim: a fresh checkout built by setup from the committed sources', async () => {
    const r = repo();
    commitAll(r.dir, {});
    const res = await verifyIteration(r.input());
    expect(res.verdicts[0]).toMatchObject({ status: 'rejected', reason: `check \`${CHECK}\` exited 1` });
    expect(readPrd(r).userStories[0].passes).toBe(false);
    expect(
      readLedgerLines(r).map((l) =>
        l.kind === 'check' ? `${l.scope}:${l.exitCode}` : l.kind === 'verdict' ? l.status : l.kind,
      ),
    ).toEqual(['setup:0', 'prd:1', 'rejected']);
    expect(worktrees(r.dir)).toHaveLength(1);
  });

  it('verifies once the committed sources are right, and leaves no checkout behind', async () => {
    const r = repo();
    commitAll(r.dir, { 'src.txt': 'v2\n' });
    // A temp folder of its own: other test files make checkouts in the shared one at the same time.
    const own = testdir();
    vi.stubEnv('TMPDIR', own);
    const res = await verifyIteration(r.input());
    vi.unstubAllEnvs();
    expect(res.verdicts[0].status).toBe('verified');
    expect(r.logs.some((l) => l.includes('verifying in a fresh checkout of'))).toBe(true);
    expect(readdirSync(own)).toEqual([]);
    expect(worktrees(r.dir)).toHaveLength(1);
  });

  it('rejects every claim when setup fails, with the setup command in progress.txt', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['true'], setup: 'echo cannot install; exit 7' }));
    claim(r, 'US-1');
    commitAll(r.dir, {});
    const res = await verifyIteration(r.input());
    expect(res.verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: 'setup `echo cannot install; exit 7` exited 7',
    });
    const progress = readFileSync(path.join(r.dir, 'ralph/progress.txt'), 'utf8');
    expect(progress).toContain('Command: echo cannot install; exit 7\nExit code: 7\n');
    expect(progress).toContain('cannot install');
  });

  it('an uncommitted fix hidden with skip-worktree is not in the checkout', async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['grep -q fixed code.txt'] }), { 'code.txt': 'broken\n' });
    git(r.dir, 'update-index', '--skip-worktree', 'code.txt');
    writeFiles(r.dir, { 'code.txt': 'fixed\n' });
    claim(r, 'US-1');
    commitAll(r.dir, {});
    expect(git(r.dir, 'status', '--porcelain')).toBe('');
    expect((await verifyIteration(r.input({ inPlace: true }))).verdicts[0].status).toBe('verified');
    claim(r, 'US-1');
    expect((await verifyIteration(r.input())).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: 'check `grep -q fixed code.txt` exited 1',
    });
  });

  it("the repository's hooks never run in the checkout (a post-checkout hook that writes the fix)", async () => {
    const r = verifyRepo(plan([story('US-1')], { checks: ['test -f fix.txt'] }));
    const hook = path.join(r.dir, '.git/hooks/post-checkout');
    writeFileSync(hook, '#!/bin/sh\necho fixed > fix.txt\n');
    chmodSync(hook, 0o755);
    claim(r, 'US-1');
    commitAll(r.dir, {});
    expect((await verifyIteration(r.input())).verdicts[0].status).toBe('rejected');
  });
});

describe('pinned tests', () => {
  const TEST = 'test/one.test.sh';
  const pinned = (extra: Partial<Prd['userStories'][number]> = {}) =>
    plan([story('US-1', { checks: [`sh ${TEST}`], ...extra })]);

  it('a weakened test is run as it was at the plan commit; the note names the pinned file', async () => {
    const prd = pinned();
    const r = verifyRepo(prd, { [TEST]: 'grep -q one src.txt\n', 'src.txt': 'zero\n' });
    const pins = await pinsOf(r, prd);
    expect(pins.paths).toContain(TEST);
    claim(r, 'US-1');
    commitAll(r.dir, { [TEST]: 'true\n' });
    const res = await verifyIteration(r.input({ pins }));
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toMatch(
      new RegExp(
        `check \`sh ${TEST}\` exited 1; the agent changed pinned test input ${TEST}: the checks ran with the version from the plan commit ${pins.commit.slice(0, 7)}`,
      ),
    );
    expect(readPrd(r).userStories[0].notes).toContain('pinned test input test/one.test.sh');
    expect(readFileSync(r.progressPath, 'utf8')).toContain('pinned test input test/one.test.sh');
    // The agent cannot allow it (its edit of "mayChange" is undone): the owner is told what to edit and how to go on.
    expect(res.verdicts[0].reason).toMatch(
      /\(if US-1 is meant to change it, that is the owner's to allow \(the agent's own edit of "mayChange" is undone\): add "test\/one\.test\.sh" to US-1's "mayChange" in ralph\/prd\.json, commit, and continue with \.\/ralph\/ralph\.sh --resume \S+ \d+ --accept-plan-edits\)$/,
    );
    expect(readFileSync(path.join(r.dir, TEST), 'utf8')).toBe('true\n'); // the agent's commit is left as it is
  });

  it("a setup that plants a filter in the checkout's own git configuration: the runner puts that back before its git reads the pinned files", async () => {
    const marker = path.join(testdir(), 'filter-ran');
    const setup = `git config filter.x.clean "sh -c 'echo ran >> ${marker}; cat'" && mkdir -p .git/info && echo '* filter=x' > .git/info/attributes && echo '# touched' >> ${TEST}`;
    const prd = plan([story('US-1', { checks: [`sh ${TEST}`] })], { setup });
    const r = verifyRepo(prd, { [TEST]: 'grep -q one src.txt\n', 'src.txt': 'zero\n' });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { 'src.txt': 'one\n' });
    const res = await verifyIteration(r.input({ pins }));
    expect(
      r.logs.some((l) => l.includes(`setup changed pinned test inputs (${TEST}); put back before the checks`)),
    ).toBe(true);
    expect(existsSync(marker), "the runner's git ran the filter setup planted").toBe(false);
    expect(res.verdicts[0]).toMatchObject({ id: 'US-1', status: 'verified' });
  });

  it('honest work passes with the pinned test; a new test file is allowed and runs', async () => {
    const prd = plan([story('US-1', { checks: [`sh ${TEST}`, 'sh test/new.test.sh'] })]);
    const r = verifyRepo(prd, { [TEST]: 'grep -q one src.txt\n', 'src.txt': 'zero\n' });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { 'src.txt': 'one\n', 'test/new.test.sh': 'grep -q one src.txt\n' });
    const res = await verifyIteration(r.input({ pins }));
    expect(res.verdicts[0]).toEqual({ id: 'US-1', status: 'verified' });
    expect(readPrd(r).userStories[0].notes).toBe('');
  });

  it('a story may change a pinned file it lists in mayChange', async () => {
    const prd = pinned({ mayChange: ['test/'] });
    const r = verifyRepo(prd, { [TEST]: 'exit 1\n' });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { [TEST]: 'true\n' });
    expect((await verifyIteration(r.input({ pins }))).verdicts[0].status).toBe('verified');
  });

  it('"test": "exit 0" in package.json: npm test runs the script as the plan commit defined it', async () => {
    const prd = plan([story('US-1', { checks: ['npm test --silent'] })]);
    const pkg = (test: string, extra = {}) =>
      `${JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test }, ...extra }, null, 2)}\n`;
    const r = verifyRepo(prd, { 'package.json': pkg('grep -rq one src'), 'src/app.txt': 'zero\n' });
    const pins = await pinsOf(r, prd);
    expect(pins.manifests).toEqual([
      {
        file: 'package.json',
        scripts: { test: 'grep -rq one src', pretest: null, posttest: null },
        keys: {
          jest: null,
          mocha: null,
          ava: null,
          c8: null,
          nyc: null,
          tap: null,
          babel: null,
          bin: null,
          directories: null,
          prettier: null,
          eslintConfig: null,
          eslintIgnore: null,
        },
      },
    ]);
    claim(r, 'US-1');
    commitAll(r.dir, { 'package.json': pkg('exit 0', { dependencies: { leftpad: '1.0.0' } }) });
    const res = await verifyIteration(r.input({ pins }));
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toContain('package.json scripts.test');
    // Honest: the code, plus a new dependency (the rest of the manifest is the story's to change). The script names a
    // folder, not a file: a file it named would be pinned like a test.
    claim(r, 'US-1');
    commitAll(r.dir, {
      'src/app.txt': 'one\n',
      'package.json': pkg('grep -rq one src', { dependencies: { leftpad: '1.0.0' } }),
    });
    expect(
      (
        await verifyIteration(
          r.input({ pins, prdBefore: readFileSync(r.prdPath, 'utf8').replace('"passes": true', '"passes": false') }),
        )
      ).verdicts[0].status,
    ).toBe('verified');
  });

  it('a pretest script the plan commit does not have is removed before npm test runs', async () => {
    const prd = plan([story('US-1', { checks: ['npm test --silent'] })]);
    const pkg = (scripts: Record<string, string>) =>
      `${JSON.stringify({ name: 'x', version: '1.0.0', scripts }, null, 2)}\n`;
    const r = verifyRepo(prd, {
      'package.json': pkg({ test: 'sh test/t.sh' }),
      'test/t.sh': 'grep -q one src.txt\n',
      'src.txt': 'zero\n',
    });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { 'package.json': pkg({ pretest: 'echo one > src.txt', test: 'sh test/t.sh' }) });
    expect((await verifyIteration(r.input({ pins }))).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('package.json scripts.pretest'),
    });
    expect(existsSync(path.join(r.dir, 'src.txt'))).toBe(true);
  });

  it('an .npmrc or node_modules/ the plan commit did not have is left out of the checkout, unless the story may change it', async () => {
    const check = 'test ! -e .npmrc && test ! -e node_modules/.bin/node && test ! -e vitest.config.ts';
    const prd = plan([
      story('US-1', { checks: [check] }),
      story('US-2', { checks: ['test -e vitest.config.ts'], mayChange: ['vitest.config.ts'] }),
    ]);
    const r = verifyRepo(prd);
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1', 'US-2');
    commitAll(r.dir, {
      '.npmrc': 'node-options=--import=./cheat.mjs\n',
      'node_modules/.bin/node': '#!/bin/sh\nexit 0\n',
      'vitest.config.ts': 'export default {}\n',
    });
    expect((await verifyIteration(r.input({ inPlace: true }))).verdicts.map((v) => v.status)).toEqual([
      'rejected',
      'verified',
    ]);
    claim(r, 'US-1');
    const res = await verifyIteration(
      r.input({ pins, prdBefore: readFileSync(r.prdPath, 'utf8').replace(/"passes": true/g, '"passes": false') }),
    );
    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'verified'],
      ['US-2', 'verified'],
    ]);
    expect(res.verdicts[0].reason).toMatch(/pinned test inputs .npmrc, node_modules\/.bin\/node, vitest.config.ts/);
  });

  it("a setup whose install hook (the agent's code) rewrites a pinned test: the pinned version is put back before the checks", async () => {
    const prd = plan([story('US-1', { checks: [`sh ${TEST}`] })], { setup: 'sh setup.sh' });
    const r = verifyRepo(prd, {
      [TEST]: 'grep -q one src.txt\n',
      'src.txt': 'zero\n',
      'setup.sh': '[ -f hook.sh ] && sh hook.sh || true\n',
    });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { 'hook.sh': `echo true > ${TEST}\n` });
    const res = await verifyIteration(r.input({ pins }));
    expect(res.verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining(`check \`sh ${TEST}\` exited 1; the agent changed pinned test input ${TEST}`),
    });
    expect(r.logs.join('\n')).toContain(`setup changed pinned test inputs (${TEST}); put back before the checks`);
  });

  it('a folder a check names pins only the test files in it, not the code beside them (node --test src/)', async () => {
    const prd = plan([story('US-1', { checks: ['test "$(cat src/one.txt)" = one && sh src/one.test.sh'] })]);
    const r = verifyRepo(prd, { 'src/one.txt': 'zero\n', 'src/one.test.sh': 'grep -q one src/one.txt\n' });
    const pins = await pinsOf(r, { ...prd, userStories: [{ ...prd.userStories[0], checks: ['node --test src/'] }] });
    expect(pins.paths).toEqual(['src/one.test.sh']);
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/one.txt': 'one\n' });
    expect((await verifyIteration(r.input({ pins }))).verdicts[0]).toEqual({ id: 'US-1', status: 'verified' });
  });

  it("npm --prefix app test runs app/package.json's test script as the plan commit defined it", async () => {
    const prd = plan([story('US-1', { checks: ['npm --prefix app test --silent'] })]);
    const app = (test: string) => `${JSON.stringify({ name: 'app', version: '1.0.0', scripts: { test } }, null, 2)}\n`;
    const r = verifyRepo(prd, { 'app/package.json': app('grep -q one src.txt'), 'app/src.txt': 'zero\n' });
    const pins = await pinsOf(r, prd);
    expect(pins.manifests.map((m) => [m.file, m.scripts.test])).toEqual([['app/package.json', 'grep -q one src.txt']]);
    claim(r, 'US-1');
    commitAll(r.dir, { 'app/package.json': app('exit 0') });
    expect((await verifyIteration(r.input({ pins }))).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('app/package.json scripts.test'),
    });
  });

  it('a script run in a subshell, ( cd app && npm test ), and after cd .. is pinned in the folder it runs in', async () => {
    const prd = plan([
      story('US-1', { checks: ['(cd app && npm test --silent) && cd app && cd .. && npm test --silent'] }),
    ]);
    const pkg = (name: string, test: string) =>
      `${JSON.stringify({ name, version: '1.0.0', scripts: { test } }, null, 2)}\n`;
    const r = verifyRepo(prd, {
      'app/package.json': pkg('app', 'grep -q one src.txt'),
      'app/src.txt': 'zero\n',
      'package.json': pkg('x', 'true'),
    });
    const pins = await pinsOf(r, prd);
    expect(pins.manifests.map((m) => [m.file, m.scripts.test])).toEqual([
      ['app/package.json', 'grep -q one src.txt'],
      ['package.json', 'true'],
    ]);
    claim(r, 'US-1');
    commitAll(r.dir, { 'app/package.json': pkg('app', 'exit 0') });
    expect((await verifyIteration(r.input({ pins }))).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('app/package.json scripts.test'),
    });
  });

  it("pytest options in pyproject.toml are pinned; the rest of the file (dependencies) is the story's", async () => {
    // The check reads the file through a script, so the command itself does not name (and pin) all of it.
    const prd = plan([story('US-1', { checks: ['sh check.sh'] })]);
    const py = (addopts: string, deps: string) =>
      `[project]\nname = "x"\ndependencies = [${deps}]\n\n[tool.pytest.ini_options]\naddopts = "${addopts}"\n`;
    const r = verifyRepo(prd, {
      'pyproject.toml': py('-q', ''),
      'check.sh': 'grep -q \'addopts = "-q"\' pyproject.toml && grep -q requests pyproject.toml\n',
    });
    const pins = await pinsOf(r, prd);
    claim(r, 'US-1');
    commitAll(r.dir, { 'pyproject.toml': py('--ignore=tests', '"requests"') });
    const res = await verifyIteration(r.input({ pins }));
    expect(res.verdicts[0]).toMatchObject({
      status: 'verified',
      reason: expect.stringContaining('pyproject.toml [tool.pytest.ini_options]'),
    });
  });
});
