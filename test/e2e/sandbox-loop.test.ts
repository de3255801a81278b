// --sandbox with the real runner and real bubblewrap (the honest agent's run is test/smoke/sandbox.test.ts):
// the writes an attacking agent depends on fail inside the sandbox, and its leftovers die with it.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src/engine/agents/sandbox.js';
import {
  bytesOrNull,
  copyRepo,
  passes,
  prepareTemplate,
  sandboxRalph as ralph,
  sandboxRalph,
  type Template,
} from '../support/attack-repo.js';
import { FIXTURES, git, run, runCli, testdir } from '../support/repo.js';
import { readNote } from '../support/verdict-note.js';
import { parseRecord } from '../../src/engine/store/verdict-record.js';
import type { Prd } from '../../src/prd/types.js';
import { ralph as ralphLoop, renderPlan } from '../support/loop-repo.js';
import { apiEnv, deliverRepo } from '../support/deliver-repo.js';
import { startGitHubServer } from '../support/github-server.js';

const probe = probeSandbox(process.env);
let plan: Template;

beforeAll(async () => {
  if (probe.ok) plan = await prepareTemplate();
});
afterAll(() => plan?.remove());

describe.skipIf(!probe.ok)(
  `./ralph/ralph.sh --sandbox under bubblewrap${probe.ok ? '' : ` (skipped: ${probe.message})`}`,
  () => {
    const agentLog = (dir: string) => readFileSync(path.join(dir, 'ralph/.runs/e2e/iteration-1.log'), 'utf8');

    it("trust anchors in refs: a sandboxed agent cannot move the loop's pins ref (refs/ralphkit is read-only); its weakened test never becomes the pinned one", async () => {
      const dir = copyRepo(plan);
      const r = await ralph(dir, 'moved-pins', ['--sandbox', '1']);
      expect(r.code, r.output).toBe(1);
      expect(agentLog(dir)).toMatch(/could not move refs\/ralphkit\/loops\/e2e\/pins: .*Read-only file system/);
      expect(git(dir, 'rev-parse', 'refs/ralphkit/loops/e2e/pins')).toBe(plan.planCommit);
      expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    });

    // The honest agent above passes on this same plan.
    it('object store: an agent that rewrites the loose objects of the pinned tests in place is refused (the store is read-only); the real tests run, not exit 0', async () => {
      const dir = copyRepo(plan);
      const oid = git(dir, 'rev-parse', 'HEAD:test/one.test.mjs');
      const loose = path.join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2));
      const before = readFileSync(loose);
      const r = await ralph(dir, 'rewrite-object', ['--sandbox', '--no-weak-check', '1']);
      expect(agentLog(dir)).toContain('could not rewrite the object of test/one.test.mjs: EROFS');
      expect(readFileSync(loose)).toEqual(before);
      expect(r.code, r.output).not.toBe(0);
      expect(r.output).not.toMatch(/the object store was rewritten/);
      expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    });

    it("--parallel under the sandbox: each worker's agent is sandboxed in its own worktree, where rewriting the pinned tests' objects in place fails (not exit 0); the honest agent exits 0 on the same plan", async () => {
      const honest = copyRepo(plan);
      const ok = await ralph(honest, 'honest', ['--sandbox', '--parallel', '2', '6']);
      expect(ok.code, ok.output).toBe(0);
      const merged = JSON.parse(git(honest, 'show', 'ralph/attack-demo:ralph/prd.json')) as Prd;
      expect(merged.userStories.map((s) => [s.id, s.passes])).toEqual([
        ['US-1', true],
        ['US-2', true],
      ]);
      const dir = copyRepo(plan);
      const oid = git(dir, 'rev-parse', 'HEAD:test/one.test.mjs');
      const loose = path.join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2));
      const before = readFileSync(loose);
      const r = await ralph(dir, 'rewrite-object', ['--sandbox', '--parallel', '2', '--no-weak-check', '2']);
      expect(r.code, r.output).not.toBe(0);
      expect(readFileSync(loose)).toEqual(before);
      const logs = readdirSync(path.join(dir, 'ralph/.runs/e2e'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.log'))
        .map((f) => readFileSync(path.join(dir, 'ralph/.runs/e2e', f), 'utf8'))
        .join('\n');
      expect(logs).toContain('could not rewrite the object of test/one.test.mjs: EROFS');
    });

    it('symlinks: a committed link out of the checkout (to the code in an ignored folder of the working tree) is refused; not exit 0', async () => {
      const dir = copyRepo(plan);
      const r = await ralph(dir, 'link-out', ['--sandbox', '--no-weak-check', '2']);
      expect(r.code, r.output).not.toBe(0);
      expect(r.output).toContain(`a symbolic link leads out of the checkout of `);
      expect(r.output).toContain(
        `: src/one.mjs -> ${path.join(dir, 'node_modules/.hidden/one.mjs')}; the checks would read files no commit holds`,
      );
      expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    });

    it("your submodule's git folder, and git's folder of submodule repositories, are read-only to the agent: a core.fsmonitor in its configuration, a commondir to a copy, or a repository planted for a submodule to come cannot be written, and your git status runs nothing of the agent's; the honest work still exits 0", async () => {
      const dir = copyRepo(plan);
      const lib = testdir();
      git(lib, 'init', '-q');
      writeFileSync(path.join(lib, 'README'), 'lib\n');
      git(lib, 'add', 'README');
      git(lib, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'lib');
      git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
      git(dir, 'commit', '-qm', 'a submodule');
      const config = readFileSync(path.join(dir, '.git/modules/lib/config'));
      const r = await ralph(dir, 'submodule-config', ['5']);
      expect(agentLog(dir)).toContain("could not write the submodule's config: EROFS");
      // Its copy's folder cannot be made in git's read-only modules folder (node's recursive mkdir says ENOENT there).
      expect(agentLog(dir)).toMatch(/could not write the submodule's commondir: (EROFS|ENOENT)/);
      expect(agentLog(dir)).toContain("could not write the submodule's modules: EROFS");
      expect(existsSync(path.join(dir, '.git/modules/evil'))).toBe(false);
      expect(readFileSync(path.join(dir, '.git/modules/lib/config')).equals(config)).toBe(true);
      git(dir, 'status');
      expect(existsSync(`${dir}.fsmonitor-ran`)).toBe(false);
      expect(r.code, r.output).toBe(0);
    });

    it("git's folder of linked worktrees is read-only to the agent but for its own git folder: a commondir written into your worktree's (git worktree add), sending your git status there to a core.fsmonitor of the agent's, cannot be; a --worktree loop's honest work still commits and exits 0", async () => {
      const dir = copyRepo(plan);
      const hotfix = path.join(testdir(), 'hotfix');
      git(dir, 'worktree', 'add', '-q', hotfix, '-b', 'hotfix');
      const commondir = readFileSync(path.join(dir, '.git/worktrees/hotfix/commondir'));
      const r = await ralph(dir, 'worktree-commondir', ['--worktree', '5']);
      // node's recursive mkdir says ENOENT in a read-only folder.
      expect(agentLog(dir)).toMatch(/could not write the copy of worktree hotfix: (EROFS|ENOENT)/);
      expect(agentLog(dir)).toContain('could not write the commondir of worktree hotfix: EROFS');
      expect(agentLog(dir)).toContain('could not write a planted worktree folder: EROFS');
      expect(readFileSync(path.join(dir, '.git/worktrees/hotfix/commondir')).equals(commondir)).toBe(true);
      git(hotfix, 'status');
      expect(existsSync(`${hotfix}.fsmonitor-ran`)).toBe(false);
      expect(r.code, r.output).toBe(0);
      expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
      const merged = JSON.parse(git(dir, 'show', 'ralph/attack-demo:ralph/prd.json')) as Prd;
      expect(merged.userStories.map((s) => [s.id, s.passes])).toEqual([
        ['US-1', true],
        ['US-2', true],
      ]);
    });

    it("a separate git dir (.git a file naming it, git init --separate-git-dir): its HEAD and index are the agent's to commit with, and the honest work exits 0", async () => {
      const dir = copyRepo(plan);
      const gitDir = path.join(testdir(), 'repo.git');
      renameSync(path.join(dir, '.git'), gitDir);
      writeFileSync(path.join(dir, '.git'), `gitdir: ${gitDir}\n`);
      const config = readFileSync(path.join(gitDir, 'config'));
      const r = await ralph(dir, 'honest', ['--sandbox', '4']);
      expect(r.code, r.output).toBe(0);
      expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
      expect(readFileSync(path.join(gitDir, 'config')).equals(config)).toBe(true);
    });

    it('an agent that appends to ralph/ralph.mjs: the write fails (read-only), the engine is untouched, not exit 0', async () => {
      const dir = copyRepo(plan);
      const r = await ralph(dir, 'engine-edit', ['--sandbox', '1']);
      expect(r.code, r.output).not.toBe(0);
      expect(readFileSync(path.join(dir, 'ralph/ralph.mjs'))).toEqual(plan.engine);
    });

    it("HOME: an agent that writes ~/.npmrc (node-options forcing exit 0), ~/.local/bin/node and a ~/.claude/settings.json hook writes its private layer: none reaches the user's HOME or the checks, US-2 stays open, not exit 0", async () => {
      const dir = copyRepo(plan);
      const home = `${dir}-home`;
      mkdirSync(path.join(home, '.local/bin'), { recursive: true });
      mkdirSync(path.join(home, '.claude'));
      writeFileSync(path.join(home, '.claude/settings.json'), '{}\n');
      // npx (which runs the tests) points npm at the real ~/.npmrc through npm_config_userconfig: a user's shell does not.
      const r = await ralph(dir, 'home-layer', ['--sandbox', '--no-weak-check', '1'], {
        HOME: home,
        npm_config_userconfig: undefined,
        NPM_CONFIG_USERCONFIG: undefined,
      });
      // The agent's own view: HOME's new files and its state are its to write, the user's toolchain folders are not.
      expect(readFileSync(path.join(dir, '.git/home-seen.txt'), 'utf8')).toBe(
        'cheat: wrote\nnpmrc: wrote\nlocal-bin-node: EROFS\nclaude-settings: wrote\n',
      );
      // ~/.config/ralphkit: the runner's key folder, made at the start.
      expect(readdirSync(home).sort()).toEqual(['.claude', '.config', '.local']);
      expect(readdirSync(path.join(home, '.config'))).toEqual(['ralphkit']);
      expect(readdirSync(path.join(home, '.local/bin'))).toEqual([]);
      expect(readFileSync(path.join(home, '.claude/settings.json'), 'utf8')).toBe('{}\n');
      expect(r.code, r.output).not.toBe(0);
      expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
    });

    it('an agent that installs .git/hooks/post-commit: the hook cannot be written, flags stay false', async () => {
      const dir = copyRepo(plan);
      const before = bytesOrNull(path.join(dir, '.git/hooks/post-commit'));
      const r = await ralph(dir, 'post-commit-hook', ['--sandbox', '2']);
      expect(r.code, r.output).not.toBe(0);
      expect(bytesOrNull(path.join(dir, '.git/hooks/post-commit'))).toEqual(before);
      expect(passes(dir)).toEqual({ 'US-1': false, 'US-2': false });
    });

    it("a setup that plants a filter in the global git configuration of its HOME: that HOME is the checks' own, so the filter never reaches the user's configuration nor runs on the host", async () => {
      const dir = copyRepo(plan);
      const home = `${dir}-home`;
      mkdirSync(home);
      const marker = `${dir}-filter-ran`;
      // Run by the runner's own git (outside the sandbox) if it reads the configuration as setup left it: the pinned
      // test file setup touches makes the runner's git look at it through the filter.
      const prd = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
      prd.setup = `mkdir -p "$HOME/.config/git" && printf '[filter "x"]\\n\\tclean = sh -c "echo ran >> ${marker}; cat"\\n' > "$HOME/.config/git/config" && printf '* filter=x\\n' > "$HOME/.config/git/attributes" && echo '// touched' >> test/one.test.mjs`;
      writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
      git(dir, 'commit', '-q', '-am', 'plan: a setup');
      const r = await ralph(dir, 'honest', ['--sandbox', '--no-weak-check', '2'], { HOME: home });
      expect(existsSync(marker), 'the filter ran on the host').toBe(false);
      expect(existsSync(path.join(home, '.config/git/config'))).toBe(false);
      // Nothing the runner trusts changed, so the honest work stands.
      expect(r.output).not.toMatch(/changed files the runner trusts/);
      expect(r.code, r.output).toBe(0);
    });

    it('a setup that plants the verdict key before the first final gate: the runner made its own at start, hidden from the sandbox; the record verifies only with it', async () => {
      const dir = copyRepo(plan);
      const home = testdir('ralphkit-home-');
      const planted = '0'.repeat(32);
      const prd = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
      prd.setup = `mkdir -p "$HOME/.config/ralphkit" && printf '%s' ${planted} > "$HOME/.config/ralphkit/verdict.key" && chmod 600 "$HOME/.config/ralphkit/verdict.key"`;
      writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
      git(dir, 'commit', '-q', '-am', 'plan: a setup that plants the key');
      const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), RALPH_KEY_DIR: '' };
      const r = await ralph(dir, 'honest', ['--sandbox', '5'], env);
      expect(r.code, r.output).toBe(0);
      const hostKey = readFileSync(path.join(home, '.config/ralphkit/verdict.key'));
      expect(hostKey.toString('latin1')).not.toBe(planted);
      const head = git(dir, 'rev-parse', 'HEAD');
      const note = readNote(dir, head)!;
      expect(note).not.toBeNull();
      expect(parseRecord(note, head, hostKey)).toMatchObject({
        loop: 'e2e',
        stories: { 'US-1': 'verified', 'US-2': 'verified' },
      });
      expect(parseRecord(note, head, Buffer.from(planted))).toBeNull();
    });

    it('the weak-check probe runs its checks in the sandbox too: one that writes into the real repository cannot', async () => {
      const dir = copyRepo(plan);
      const prd = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
      // Every run of this check tries to leave a file in the repository itself (read-only in the sandbox).
      prd.userStories[0].checks = [
        `(echo probe >> ${JSON.stringify(path.join(dir, 'PROBE-WROTE'))}) 2>/dev/null; node --test test/one.test.mjs`,
      ];
      writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
      git(dir, 'commit', '-q', '-am', 'plan: a check that writes');
      const r = await ralph(dir, 'honest', ['--sandbox', '5']);
      expect(r.code, r.output).toBe(0);
      expect(existsSync(path.join(dir, 'PROBE-WROTE')), 'a check wrote into the repository outside the sandbox').toBe(
        false,
      );
      expect(git(dir, 'log', '--all', '--format=%H', '--', 'PROBE-WROTE')).toBe('');
    });

    it("secrets without a sandbox: the runner's GH_TOKEN and webhook URL are out of a sandboxed agent's reach (its own PID namespace has no /proc of the runner); without --sandbox it reads them", async () => {
      const secrets = { GH_TOKEN: 'tok-123456', RALPH_WEBHOOK_URL: 'https://hooks.example.test/secret-42' };
      const seen = async (sandbox: boolean) => {
        const dir = copyRepo(plan);
        const r = await ralph(
          dir,
          'environ-reader',
          [sandbox ? '--sandbox' : '--no-sandbox', '--webhook', 'https://hooks.example.test/arg-secret-7', '1'],
          secrets,
        );
        expect(r.code, r.output).toBe(1); // one story of two done in the one iteration
        return readFileSync(path.join(dir, '.git/secrets-seen.txt'), 'utf8');
      };
      expect(await seen(true)).toBe('none\n');
      // Said plainly in docs/guide.md and docs/verification.md: as you, the agent reads every process of yours.
      const bare = await seen(false);
      expect(bare).toMatch(/environ: GH_TOKEN=tok-123456/);
      expect(bare).toMatch(/environ: RALPH_WEBHOOK_URL=https:\/\/hooks\.example\.test\/secret-42/);
      expect(bare).toMatch(/cmdline: https:\/\/hooks\.example\.test\/arg-secret-7/);
    });

    it('--no-network without --sandbox is bad usage; with it the agent runs', async () => {
      const dir = copyRepo(plan);
      const bad = await runCli(['run', '--no-network', '--agent-cmd', 'true', '1'], { cwd: dir });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--no-network needs the sandbox');
      // bubblewrap through a shim that notes each start: whether it works here is asked once per run (the default
      // asks, and the sandboxes after it take that answer).
      const shim = path.join(testdir('ralphkit-bwrap-'), 'bwrap');
      const starts = `${shim}.log`;
      writeFileSync(shim, `#!/bin/sh\necho "$*" >> '${starts}'\nexec '${probe.ok ? probe.bwrap : 'bwrap'}' "$@"\n`, {
        mode: 0o755,
      });
      const r = await ralph(dir, 'honest', ['--no-network', '5'], { RALPH_BWRAP_BIN: shim });
      expect(r.code, r.output).toBe(0);
      expect(existsSync(path.join(dir, 'src/two.mjs'))).toBe(true);
      const probes = readFileSync(starts, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('--unshare-pid --die-with-parent true'));
      expect(probes).toHaveLength(1);
    });

    it('checks run in the sandbox too: a check cannot write outside its checkout (and without --sandbox it can)', async () => {
      const probeTemplate = await prepareTemplate({ planChecks: ['touch "$VICTIM" 2>/dev/null; true'] });
      try {
        for (const sandboxed of [true, false]) {
          const dir = copyRepo(probeTemplate);
          const victim = path.join(path.dirname(dir), `${path.basename(dir)}-victim.txt`);
          const r = await ralph(dir, 'honest', [sandboxed ? '--sandbox' : '--no-sandbox', '5'], { VICTIM: victim });
          expect(r.code, r.output).toBe(0);
          expect(existsSync(victim)).toBe(!sandboxed);
        }
      } finally {
        probeTemplate.remove();
      }
    });
  },
);

describe.skipIf(!probe.ok)("--sandbox with --deliver pr: the gh CLI's login is hidden from the agent", () => {
  it('the agent cannot read ~/.config/gh/hosts.yml (an empty folder in its place); the runner still opens the pull request', async () => {
    const s = deliverRepo(renderPlan({ stories: 1 }));
    const home = testdir('ralphkit-home-');
    mkdirSync(path.join(home, '.config/gh'), { recursive: true });
    writeFileSync(path.join(home, '.config/gh/hosts.yml'), 'github.com:\n    oauth_token: gho_secretOfTheUser\n');
    // The agent (inside the sandbox's private /tmp, so kept in .git/) copies what it can see of gh's folder.
    // The worker fixture goes into .git/ too: this checkout may live under /tmp, private in the sandbox.
    const fixtures = path.join(s.dir, '.git', 'test-fixtures');
    cpSync(FIXTURES, fixtures, { recursive: true });
    const seen = path.join(s.dir, '.git', 'gh-seen');
    const agentCmd = path.join(s.dir, '.git', 'gh-agent.sh');
    writeFileSync(
      agentCmd,
      `#!/bin/sh\n(ls -A "$HOME/.config/gh"; cat "$HOME/.config/gh/hosts.yml") > '${seen}' 2>&1\nexec node '${path.join(fixtures, 'agents', 'worker.mjs')}'\n`,
      { mode: 0o755 },
    );
    const server = await startGitHubServer({ owner: 'acme', repo: 'demo' });
    const r = await ralphLoop(
      s.dir,
      ['--agent-cmd', agentCmd, '--sandbox', '--deliver', 'pr', '--pause', '0', '3'],
      apiEnv(server, { HOME: home, GH_CONFIG_DIR: '' }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(seen), 'the agent ran').toBe(true);
    expect(readFileSync(seen, 'utf8')).not.toContain('gho_secretOfTheUser');
    expect(readFileSync(seen, 'utf8')).toMatch(/No such file/);
    expect(server.pulls).toHaveLength(1);
    // Outside the sandbox the login is untouched.
    expect(readFileSync(path.join(home, '.config/gh/hosts.yml'), 'utf8')).toContain('gho_secretOfTheUser');
  });

  it('an agent the sandbox cannot see (under /tmp, outside the repository and HOME) is refused before iteration 1: exit 2 with a hint, no agent run', async () => {
    const dir = copyRepo(plan);
    // A fake `claude` first on PATH from a folder of /tmp: found by the runner, absent inside the sandbox.
    const bin = testdir('ralphkit-tmp-bin-', '/tmp');
    const ran = path.join(dir, '.git', 'agent-ran');
    writeFileSync(path.join(bin, 'claude'), `#!/bin/sh\ntouch '${ran}'\n`, { mode: 0o755 });
    const env = { PATH: `${bin}:${process.env.PATH}` };
    // The dry run, the check before leaving a loop running, says so too.
    const dry = await run(path.join(dir, 'ralph/ralph.sh'), ['--agent', 'claude', '--dry-run'], {
      cwd: dir,
      env,
      sandboxDefault: true,
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      `the run would refuse to start: the sandbox cannot see the agent (claude): ${path.join(bin, 'claude')} is under /tmp`,
    );
    const r = await run(path.join(dir, 'ralph/ralph.sh'), ['--agent', 'claude', '--pause', '0', '3'], {
      cwd: dir,
      env,
      sandboxDefault: true,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `the sandbox cannot see the agent (claude): ${path.join(bin, 'claude')} is under /tmp, which the sandbox replaces with its own`,
    );
    expect(r.stderr).toMatch(
      /hint: install it elsewhere \(npm install -g @anthropic-ai\/claude-code, or under your HOME\) or point RALPH_CLAUDE_BIN at a copy outside \/tmp; or run with --no-sandbox/,
    );
    expect(existsSync(ran)).toBe(false);
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
  });

  it('where bubblewrap cannot create its namespaces, the default runs unsandboxed and says so in one line; a typed --sandbox is refused (exit 2)', async () => {
    const dir = copyRepo(plan);
    const fake = path.join(testdir('ralphkit-fake-bwrap-'), 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const env = { RALPH_BWRAP_BIN: fake };
    const refused = await ralph(dir, 'honest', ['--sandbox', '5'], env);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toContain(
      '--sandbox: bubblewrap cannot create its namespaces here (bwrap: No permissions to creating new namespace)',
    );
    const r = await sandboxRalph(dir, 'honest', ['5'], env);
    expect(r.code, r.output).toBe(0);
    const said = r.stderr.split('\n').filter((l) => l.includes('not sandboxed'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /not sandboxed: bubblewrap cannot create its namespaces here .*; the agent runs with your rights .*; to sandbox it, .*userns.*; to run without it and drop this line: --no-sandbox$/,
    );
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8')).options.sandbox).toBe(false);
  });
});
