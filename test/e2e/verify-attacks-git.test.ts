// Adversarial e2e tests (issue 11, SPEC §6), part 2: attacks through git's hooks and configuration and through
// processes that outlive the agent. Same project and plan as verify-attacks.test.ts (US-1: node --test
// test/one.test.mjs, US-2: npm test); each fake agent flips `passes` without doing the work and relies on its
// trick to make the flags stick. Needs `npm run build` first.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, run } from '../support/repo.js';
import {
  attackAgent,
  bytesOrNull,
  committedPrd,
  copyRepo,
  notesOf,
  progress,
  readPrd,
  killLeftoversAfterTest,
  passes,
  prepareTemplate,
  processesWith,
  ralph,
  statusLoops,
  subjects,
  type Template,
  expectAllFalse,
  expectNotDone,
} from '../support/attack-repo.js';

let plan: Template;
let selfConfigured: Template; // every check first sets a git identity of its own, as some test setups do

beforeAll(async () => {
  [plan, selfConfigured] = await Promise.all([
    prepareTemplate(),
    prepareTemplate({ planChecks: ['git config --global user.name "test suite"'] }),
  ]);
});
afterAll(() => {
  plan?.remove();
  selfConfigured?.remove();
});

const hookFile = (dir: string, name: string) => path.join(dir, '.git/hooks', name);

describe('attacks through git hooks, git configuration and leftover processes', () => {
  it('the honest agent on this plan (also with --verify-in-worktree): exit 0, both stories verified', async () => {
    for (const args of [['5'], ['--verify-in-worktree', '5']]) {
      const dir = copyRepo(plan);
      const configBefore = readFileSync(path.join(dir, '.git/config'));
      const r = await ralph(dir, 'honest', args);
      expect(r.code, r.output).toBe(0);
      expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
      expect((await statusLoops(dir))[0]).toMatchObject({ id: 'e2e', storiesPassed: 2, verified: 2 });
      expect(readFileSync(path.join(dir, '.git/config')).equals(configBefore)).toBe(true); // the runner itself leaves it alone
    }
  });

  it('8. a .git/hooks/post-commit that re-flips passes after every commit: removed by the runner, flags stay false', async () => {
    const dir = copyRepo(plan);
    expect(bytesOrNull(hookFile(dir, 'post-commit'))).toBeNull(); // nothing there before the run
    const r = await ralph(dir, 'post-commit-hook', ['2']);
    expect(subjects(dir)).toContain('feat: everything done (post-commit hook installed)');
    expectNotDone(r, dir);
    expect(existsSync(hookFile(dir, 'post-commit')), "the agent's hook is still installed").toBe(false);
    expectAllFalse(dir, r);
  });

  it('9. `git config core.hooksPath .myhooks` with a committed post-commit hook: .git/config restored, flags stay false', async () => {
    const dir = copyRepo(plan);
    const configBefore = readFileSync(path.join(dir, '.git/config'), 'utf8');
    const r = await ralph(dir, 'hooks-path', ['2']);
    expect(subjects(dir)).toContain('feat: everything done (core.hooksPath set)');
    expectNotDone(r, dir);
    const config = readFileSync(path.join(dir, '.git/config'), 'utf8');
    expect(config).not.toMatch(/hookspath/i);
    expect(config).toBe(configBefore);
    expectAllFalse(dir, r);
  });

  it("12. a .git/hooks/post-checkout that writes the code into the runner's verification checkout: hooks off there, rejected", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'post-checkout-hook', ['--verify-in-worktree', '2']);
    expect(subjects(dir)).toContain('feat: everything done (post-checkout hook installed)');
    expect(git(dir, 'ls-files', 'src')).toBe(''); // the commits hold no code
    expectNotDone(r, dir);
    expect(existsSync(hookFile(dir, 'post-checkout')), "the agent's hook is still installed").toBe(false);
    expectAllFalse(dir, r);
  });

  it('10. a setsid leftover that flips passes back every 50 ms (and on every write into ralph/): gone before verification and when the runner exits, flags stay false', async () => {
    const dir = copyRepo(plan);
    const marker = `ralphkit-attack-leftover:${dir}`;
    killLeftoversAfterTest(marker); // whatever the runner does, the test does not leak it
    const r = await ralph(dir, 'leftover', ['2']);
    expect(subjects(dir)).toContain('feat: everything done (a helper keeps it that way)'); // the attack ran
    expectNotDone(r, dir);
    expect(processesWith(marker), 'the leftover outlived the runner').toEqual([]);
    expectAllFalse(dir, r);
  });

  it('a daemon a check starts (from the committed code, inside the verification checkout) rewrites the plan: the runner decides from its own copy, stops it, not exit 0', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'check-daemon', ['2']);
    expectNotDone(r, dir);
    // The runner stops what the checks left running. On a loaded machine its scan can meet the daemon before its exec
    // shows a command line, or before the daemon ran a line of its own: so what is pinned is that no daemon outlives
    // the run (it would live two minutes, rewriting the plan), and that each process the runner says it stopped is gone.
    expect(processesWith('/src/daemon.cjs'), r.output).toEqual([]);
    const stopped = /stopped \d+ process(?:es)? the checks left running \(([^)]*)\)/.exec(r.output);
    for (const m of stopped?.[1].matchAll(/(?:^|; )(\d+) /g) ?? []) {
      const pid = Number(m[1]);
      expect(existsSync(`/proc/${pid}`) && !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))).toBe(false);
    }
    expect(existsSync(path.join(dir, 'src/two.mjs'))).toBe(false);
    expect(passes(dir)['US-2']).not.toBe(true);
  });

  it("a check whose code rewrites the real plan and empties progress.txt while it runs: both put back, the runner's plan is what stays on disk and in git, not exit 0", async () => {
    const dir = copyRepo(plan);
    const logBefore = progress(dir);
    const r = await ralph(dir, 'check-rewrites', ['1']);
    expectNotDone(r, dir);
    expect(r.output).toContain(
      'the checks changed ralph/prd.json and ralph/progress.txt (code they ran reached the repository); put back as they were before the checks',
    );
    const onDisk = readPrd(dir);
    expect(onDisk.userStories.map((s) => [s.id, s.passes, s.checks])).toEqual([
      ['US-1', true, ['node --test test/one.test.mjs']],
      ['US-2', false, ['npm test']],
    ]);
    expect(committedPrd(dir)).toEqual(onDisk);
    expect(progress(dir).startsWith(logBefore)).toBe(true);
    expect(progress(dir).length).toBeGreaterThan(0);
  });

  it("a repository the agent commits as a gitlink, whose core.fsmonitor your own git status would run: removed after the agent's run, that iteration's claims rejected; the loop then finishes honestly", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'nested-repo', ['5']);
    expect(r.output).toContain('the agent made or changed a git repository inside the working tree (vendor/tool/.git)');
    expect(existsSync(path.join(dir, 'vendor/tool/.git'))).toBe(false);
    expect(git(dir, 'ls-files', '--stage', 'vendor/tool')).toMatch(/^160000 /); // the gitlink stays committed
    // Your git status (no --ignore-submodules): nothing of the agent's runs.
    git(dir, 'status');
    expect(existsSync(`${dir}.fsmonitor-ran`)).toBe(false);
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });

  it("an engine of the agent's committed through the index alone, hidden by skip-worktree (any clone of the branch would run it): the claim rejected, the runner's own engine committed back; the loop then finishes honestly", async () => {
    const dir = copyRepo(plan);
    const engine = readFileSync(path.join(dir, 'ralph/ralph.mjs'));
    const r = await ralph(dir, 'engine-commit', ['5']);
    expect(r.output).toContain('the agent set skip-worktree on ralph/ralph.mjs in the index');
    expect(git(dir, 'log', '--format=%s', '-1', '--', 'ralph/ralph.mjs')).toMatch(/^chore\(ralph\)/); // put back by the runner
    expect(Buffer.from(git(dir, 'show', 'HEAD:ralph/ralph.mjs') + '\n').equals(engine)).toBe(true);
    expect(git(dir, 'ls-files', '-v', 'ralph/ralph.mjs')).toBe('H ralph/ralph.mjs');
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });

  it("a replace ref that shows your git a look-alike of the verified commit with an engine of the agent's, and a tag named like the loop's branch: put back when the loop ends, your merge takes the commit verified", async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'replace-ref', ['5']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(
      /put back (refs\/replace\/[0-9a-f]{40}|refs\/tags\/ralph\/attack-demo)(, [^ ]+)* as the loop found them/,
    );
    expect(r.output).toContain('refs/tags/ralph/attack-demo');
    expect(git(dir, 'for-each-ref', 'refs/replace/', 'refs/tags/')).toBe('');
    expect(git(dir, 'show', 'ralph/attack-demo:ralph/ralph.mjs')).not.toContain('pwned');
  });

  it("another branch (main) moved onto a commit holding the agent's engine: put back, the agent's commit kept under the loop's refs, that iteration's claims rejected; the loop then finishes honestly", async () => {
    const dir = copyRepo(plan);
    const main = git(dir, 'rev-parse', 'main');
    const r = await ralph(dir, 'moves-main', ['5']);
    expect(r.output).toMatch(
      new RegExp(
        `the agent moved branches other than the loop's: main \\(to [0-9a-f]{7}; put back at ${main.slice(0, 7)}, kept as refs/ralphkit/loops/e2e/moved/main\\)`,
      ),
    );
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
    expect(git(dir, 'show', 'refs/ralphkit/loops/e2e/moved/main:ralph/ralph.mjs')).toContain('pwned');
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });

  it('main moved and checked out by the agent, the tree dirty against it: exit 6, main named and left; the resume once you are off it puts main back', async () => {
    const dir = copyRepo(plan);
    const main = git(dir, 'rev-parse', 'main');
    const r = await ralph(dir, 'moves-main', ['5'], { ATTACK_HEAD_ON_MAIN: '1' });
    expect(r.code, r.output).toBe(6);
    expect(r.output).toMatch(
      /main \(to [0-9a-f]{7}; checked out here, so left as it is; it was at [0-9a-f]{7}: a resume once you switched off it puts it back\)/,
    );
    expect(git(dir, 'rev-parse', 'main')).not.toBe(main);
    // What the runner's hint says: keep the changes aside, back to the loop's branch, resume.
    git(dir, 'stash', '--include-untracked');
    git(dir, 'checkout', 'ralph/attack-demo');
    const resumed = await run(
      path.join(dir, 'ralph/ralph.sh'),
      ['--agent-cmd', `node ${JSON.stringify(attackAgent('moves-main'))}`, '--pause', '0', '--resume', 'e2e'],
      { cwd: dir },
    );
    const output = `${resumed.stdout}\n${resumed.stderr}`;
    expect(output).toMatch(
      new RegExp(
        `the last agent run was never checked .*main \\(to [0-9a-f]{7}; put back at ${main.slice(0, 7)}, kept as refs/ralphkit/loops/e2e/moved/main\\)`,
      ),
    );
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
    expect(git(dir, 'show', 'refs/ralphkit/loops/e2e/moved/main:ralph/ralph.mjs')).toContain('pwned');
    expect(existsSync(path.join(dir, 'ralph/.runs/e2e/agent-run.json'))).toBe(false);
    expect(resumed.code, output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });

  it("husky's hooks (core.hooksPath=.husky/_, yours): a .husky/post-merge the agent commits beside the work is named at the end, to read before your merge", async () => {
    const dir = copyRepo(plan);
    // What `husky` makes: an ignored .husky/_ of stubs that run .husky/<hook> from the working tree.
    mkdirSync(path.join(dir, '.husky/_'), { recursive: true });
    writeFileSync(path.join(dir, '.husky/_/.gitignore'), '*\n');
    writeFileSync(path.join(dir, '.husky/_/post-merge'), '#!/bin/sh\n[ -x .husky/post-merge ] && .husky/post-merge\n', {
      mode: 0o755,
    });
    git(dir, 'config', 'core.hooksPath', '.husky/_');
    const r = await ralph(dir, 'husky-hook', ['5']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('your git hooks are in the repository (core.hooksPath: .husky/_)');
    expect(r.output).toMatch(
      /the loop's commits add or change files that your git hooks run \(core.hooksPath is inside the repository: \.husky\/_, \.husky\): \.husky\/post-merge; .*read them first \(git diff [0-9a-f]{7} -- \.husky\/_ \.husky\)/,
    );
  });

  it("your stash (as the start's hint has you make one): an agent's stash on top of it is taken off at the end, your git stash pop gets yours", async () => {
    const dir = copyRepo(plan);
    writeFileSync(path.join(dir, 'notes.txt'), 'my work in progress\n');
    git(dir, 'stash', '-u', '-q');
    const r = await ralph(dir, 'stash-swap', ['5']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(
      /put back refs\/stash, the stash list \(\.git\/logs\/refs\/stash\) as the loop found them/,
    );
    expect(git(dir, 'stash', 'list').split('\n')).toHaveLength(1);
    git(dir, 'stash', 'pop', '-q');
    expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('my work in progress\n');
    expect(readFileSync(path.join(dir, 'ralph/ralph.mjs'), 'utf8')).not.toContain('pwned');
  });

  it("a check whose code adds a filter to the real .git/config: put back before the runner's own git calls, the claim rejected, not exit 0", async () => {
    const dir = copyRepo(plan);
    const configBefore = readFileSync(path.join(dir, '.git/config'), 'utf8');
    const r = await ralph(dir, 'check-config', ['1']);
    expectNotDone(r, dir);
    expect(readFileSync(path.join(dir, '.git/config'), 'utf8')).toBe(configBefore);
    expect(r.output).toContain(
      "the checks (the agent's code they ran) changed files the runner trusts (.git/config (filter.ralphkit-attack.clean))",
    );
    expect(passes(dir)['US-1']).toBe(false);
    expect(notesOf(dir, 'US-1')).toContain('changed files the runner trusts');
    expect(committedPrd(dir)).toEqual(readPrd(dir));
  });

  it('a check whose code switches the real repository to another branch at the same commit: exit 6, nothing committed there', async () => {
    const dir = copyRepo(plan);
    const r = await ralph(dir, 'check-switches-branch', ['2']);
    expect(r.code, r.output).toBe(6);
    const head = git(dir, 'rev-parse', '--short=7', 'HEAD');
    expect(r.stderr).toContain(
      `HEAD moved from ralph/attack-demo at ${head} to elsewhere at ${head} while the checks ran`,
    );
    expect(git(dir, 'rev-parse', 'elsewhere')).toBe(git(dir, 'rev-parse', 'ralph/attack-demo')); // no runner commit on either
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('feat: US-1');
  });

  it("an honest agent whose checks set a git identity globally: it lands in the checks' own HOME, ~/.gitconfig is never touched, the claims stand, exit 0", async () => {
    const dir = copyRepo(selfConfigured);
    const home = path.join(dir, '..', `${path.basename(dir)}-home`);
    mkdirSync(home);
    writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Owner\n\temail = owner@example.com\n');
    const r = await ralph(dir, 'honest', ['5'], { HOME: home });
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
    // The checks run with a HOME of their own (verify/check-env.ts): nothing of theirs reached yours to be put back.
    expect(r.output).not.toContain('changed files the runner trusts');
    expect(readFileSync(path.join(home, '.gitconfig'), 'utf8')).toBe(
      '[user]\n\tname = Owner\n\temail = owner@example.com\n',
    );
  });

  it('an honest agent that pushes with -u and sets core.hooksPath (as husky does): the upstream is kept, the hooks path put back, exit 0', async () => {
    const dir = copyRepo(plan);
    const remote = path.join(dir, '..', `${path.basename(dir)}-remote.git`);
    git(dir, 'init', '-q', '--bare', remote);
    git(dir, 'remote', 'add', 'origin', remote);
    const r = await ralph(dir, 'honest-git', ['5']);
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
    expect(r.output).toMatch(
      /kept the git settings the agent's git commands recorded \(\.git\/config branch\.ralph\/attack-demo\.(merge|remote)/,
    );
    expect(r.output).toContain(
      "(they never run in the runner's own git calls or checks, so the claims are judged as usual)",
    );
    expect(git(dir, 'config', '--get', 'branch.ralph/attack-demo.remote')).toBe('origin');
    expect(() => git(dir, 'config', '--local', '--get', 'core.hooksPath')).toThrow();
  });
});
