// One loop per working tree, whoever runs it: a runner loop and an in-session loop (or two sessions' in-session loops)
// would verify and rewrite the same plan. The engine's commands as Claude Code and a user run them, in an installed
// repository; the runner is the installed ralph/ralph.sh with fake agents.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, run, runCli, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { TWO_STORY_PLAN } from '../support/model-loop.js';
import { agent, loopStates, ralph, startRalph } from '../support/loop-repo.js';
import { until } from '../support/process.js';

const A = '49b42a3f-ea60-4259-acfe-8858545d9d7a';
const B = '7c1d2e3f-0000-4a4a-8b8b-123456789abc';

function hookStart(repo: string, session: string, claudePid: number) {
  return run(process.execPath, [path.join(repo, 'ralph/ralph.mjs'), 'hook', 'start', '--session-id', session], {
    cwd: repo,
    env: { CLAUDE_PID: String(claudePid) },
  });
}

const stateOf = (repo: string, id: string) =>
  JSON.parse(readFileSync(path.join(repo, 'ralph/.runs', id, 'state.json'), 'utf8'));
/** A pid that was Claude Code's and is gone now. */
const gonePid = (): number => spawnSync('true').pid as number;

describe('a runner loop and an in-session loop in one working tree', () => {
  it('hook start is refused while a runner loop holds the tree: nothing recorded, the cancel command in the hint', async () => {
    const repo = installedRepo({ plan: TWO_STORY_PLAN });
    const runner = startRalph(repo, [
      '--agent-cmd',
      agent('sleeper'),
      '--pause',
      '0',
      '--name',
      'night',
      '--iteration-timeout',
      '40s',
      '3',
    ]);
    await until('the runner to start its agent', () => loopStates(repo).some((s) => s.agentPid), 20_000);

    const res = await hookStart(repo, A, process.pid);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(
      /hook start: a runner loop \(night, pid \d+\) is running in this working tree, on ralph\/prd\.json; an in-session loop here would verify and write the same plan, so none was started/,
    );
    expect(res.stderr).toMatch(
      /hint: wait for it to end \(.*status\), or stop it with: .* cancel night, then type \/ralph-loop again; or start Claude Code in a separate working tree: git worktree add \.\.\/\S+-2/,
    );
    expect(res.stdout).toBe('');
    expect(existsSync(path.join(repo, 'ralph/.runs', A))).toBe(false);
    expect(git(repo, 'for-each-ref', `refs/ralphkit/loops/${A}`)).toBe('');

    runner.child.kill('SIGTERM');
    expect((await runner.done).code).toBe(130);
    expect((await hookStart(repo, A, process.pid)).code).toBe(0);
  });

  it('the runner refuses to start while a session loops in the tree, and starts once that loop is cancelled or its session is gone', async () => {
    const repo = installedRepo({ plan: TWO_STORY_PLAN });
    expect((await hookStart(repo, A, process.pid)).code).toBe(0);
    const marker = path.join(testdir(), 'agent-ran');
    const fake = ['--agent-cmd', agent('marker'), '--pause', '0', '1'];

    const refused = await ralph(repo, fake, { FAKE_MARKER: marker });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `an in-session loop (Claude Code session ${A}, Claude Code pid ${process.pid}) is running in this working tree; one working tree runs one loop at a time, so the runner did not start`,
    );
    expect(refused.stderr).toMatch(
      new RegExp(
        `hint: let that loop end, or stop it with: .* cancel ${A}; or work in a separate working tree \\(git worktree add \\.\\./\\S+-2\\)`,
      ),
    );
    expect(existsSync(marker)).toBe(false);
    expect(git(repo, 'branch', '--show-current')).toBe('main');

    expect((await runCli(['cancel', A, '--cwd', repo])).code).toBe(0);
    expect((await ralph(repo, fake, { FAKE_MARKER: marker })).stderr).not.toContain('in-session loop');
    expect(readFileSync(marker, 'utf8')).toBe('iteration 1\n');

    const other = installedRepo({ plan: TWO_STORY_PLAN });
    expect((await hookStart(other, A, gonePid())).code).toBe(0);
    const ran = path.join(testdir(), 'ran');
    expect((await ralph(other, fake, { FAKE_MARKER: ran })).stderr).not.toContain('in-session loop');
    expect(readFileSync(ran, 'utf8')).toBe('iteration 1\n');
  });
});

describe('two Claude Code sessions in one working tree', () => {
  it("the second session's /ralph-loop is refused while the first loops; the first may restart its own; a gone session is no bar", async () => {
    const repo = installedRepo({ plan: TWO_STORY_PLAN });
    expect((await hookStart(repo, A, process.pid)).code).toBe(0);

    const second = await hookStart(repo, B, process.pid);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(
      `hook start: an in-session loop (Claude Code session ${A}, Claude Code pid ${process.pid}) is running in this working tree; a second in-session loop here would verify and write the same plan (ralph/prd.json), so none was started for this session`,
    );
    expect(second.stderr).toMatch(
      new RegExp(`hint: let that loop end, or stop it with: .* cancel ${A}; or work in a separate working tree`),
    );
    expect(existsSync(path.join(repo, 'ralph/.runs', B))).toBe(false);

    const again = await hookStart(repo, A, process.pid);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`restarted the in-session loop for this session (${A})`);

    const dead = installedRepo({ plan: TWO_STORY_PLAN });
    expect((await hookStart(dead, A, gonePid())).code).toBe(0);
    expect((await hookStart(dead, B, process.pid)).code).toBe(0);
    expect(stateOf(dead, B)).toMatchObject({ status: 'running', inSession: true });
  });
});
