// The checks' and the reviewer's sandbox (src/engine/run/sandbox.ts) with the real bubblewrap, for a linked git
// worktree whose main repository lives inside HOME (writable in the sandbox): its .git is read-only there too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planSandboxCommand, probeSandbox } from '../../../../src/engine/agents/sandbox.js';
import { checkSandbox, sandboxCommand } from '../../../../src/engine/run/sandbox.js';
import { removeAgentHomes } from '../../../../src/engine/run/agent-home.js';
import type { RunContext } from '../../../../src/engine/types.js';
import type { RunTrust } from '../../../../src/engine/verify/trust.js';
import { git, gitdir, gitEnv, testdir } from '../../../support/repo.js';

const probe = probeSandbox(process.env);
afterAll(removeAgentHomes);

describe.skipIf(!probe.ok)(`checkSandbox${probe.ok ? '' : ` (skipped: ${probe.message})`}`, () => {
  it("keeps a linked worktree's main repository (.git hooks, config, refs, HEAD) read-only to a check", async () => {
    const home = testdir('ralphkit-home-');
    const main = path.join(home, 'main');
    mkdirSync(main);
    const made = gitdir({ 'a.txt': 'a\n' });
    git(home, 'clone', '-q', made, main);
    const worktree = path.join(home, 'wt');
    git(main, 'worktree', 'add', '-q', '-b', 'ralph/wt', worktree);
    const common = git(worktree, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    const env = { ...gitEnv(), HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), RALPH_KEY_DIR: '' };
    const run = { options: { sandbox: true, network: true }, io: { env } } as unknown as RunContext;
    const sb = checkSandbox(run, { topLevel: worktree, gitDir: common } as RunTrust)!;
    const clone = testdir('ralphkit-clone-');
    const targets = [
      path.join(common, 'hooks', 'post-checkout'),
      path.join(common, 'config'),
      path.join(common, 'refs', 'heads', 'planted'),
      path.join(common, 'HEAD'),
      path.join(common, 'worktrees', 'wt', 'HEAD'),
    ];
    const headBefore = readFileSync(path.join(common, 'HEAD'), 'utf8');
    const script = targets.map((t) => `(printf x >> '${t}') 2>/dev/null && echo wrote || echo refused`).join('; ');
    const cmd = planSandboxCommand({
      bwrap: sb.bwrap,
      file: 'sh',
      args: ['-c', `${script}; touch '${home}/ok' && echo wrote-home`],
      repoRoot: clone,
      gitDir: path.join(clone, '.git'),
      readOnly: sb.readOnly,
      scratch: [],
      network: true,
      home: sb.home,
      hidden: sb.hidden,
    });
    const r = spawnSync(cmd.file, cmd.args, { env, encoding: 'utf8' });
    expect(r.stdout.split('\n').filter(Boolean), r.stderr).toEqual([...targets.map(() => 'refused'), 'wrote-home']);
    expect(existsSync(targets[0])).toBe(false);
    expect(existsSync(targets[2])).toBe(false);
    expect(readFileSync(path.join(common, 'HEAD'), 'utf8')).toBe(headBefore);
    // The agent commits from the worktree: for it the common dir stays writable, but for its hooks and config.
    const agentRun = { ...run, paths: { repoRoot: worktree } } as unknown as RunContext;
    const { args, after } = await sandboxCommand(
      agentRun,
      {
        topLevel: worktree,
        gitDir: common,
        // A linked worktree: its own git dir, apart from the common one.
        guard: { ownGitDir: path.join(common, 'worktrees', 'wt') },
        pins: null,
      } as unknown as RunTrust,
      { file: 'sh', args: [] },
      clone,
    );
    await after();
    const flagOf = (p: string) => args[args.findIndex((a, i) => a === p && args[i + 1] === p) - 1];
    // ...nor the main tree's HEAD, index and checked-out branch (your working tree's, not the agent's).
    const branch = git(main, 'branch', '--show-current');
    const ro = ['hooks', 'config', 'HEAD', 'index', `refs/heads/${branch}`].map((f) => path.join(common, f));
    expect([common, ...ro].map(flagOf)).toEqual(['--bind', ...ro.map(() => '--ro-bind-try')]);
    // A branch only in packed-refs gets its loose file first, with the same value, so that the agent cannot make one.
    git(main, 'pack-refs', '--all');
    expect(existsSync(path.join(common, 'refs', 'heads', branch))).toBe(false);
    const again = await sandboxCommand(
      agentRun,
      {
        topLevel: worktree,
        gitDir: common,
        guard: { ownGitDir: path.join(common, 'worktrees', 'wt') },
        pins: null,
      } as unknown as RunTrust,
      { file: 'sh', args: [] },
      clone,
    );
    await again.after();
    expect(again.args).toContain(path.join(common, 'refs', 'heads', branch));
    expect(readFileSync(path.join(common, 'refs', 'heads', branch), 'utf8')).toBe(
      `${git(main, 'rev-parse', 'HEAD')}\n`,
    );
  });
});
