// ralphkit's Stop hook as a user gets it: `ralphkit install --claude-hook` into a repository whose path has a space,
// the real Claude Code CLI in -p mode runs `node ralph/ralph.mjs hook stop` at the end of the turn, the session stops
// normally; `--no-claude-hook` gives the user's settings back byte for byte. The engine's `hook stop` on its own below.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, run, runCli, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { startModelServer } from '../support/model-server.js';
import {
  CLAUDE_BIN,
  CLAUDE_PRINT_ARGS,
  SKIP_CLAUDE,
  claudeEnv,
  requireClaude,
  streamEvents,
} from '../support/model-claude.js';

// The user's own settings, in their own layout, with a hook of another event.
const USER_SETTINGS = `{
  "permissions": { "allow": ["Bash(npm test)"] },
  "env": { "USER_SETTING": "kept" },
  "hooks": {
    "PreToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "true" }] }]
  }
}
`;

/** A git repository at `…/my project/`, with the user's settings committed. */
function repoWithSpace(): string {
  const repo = path.join(testdir('ralphkit-space-'), 'my project');
  mkdirSync(path.join(repo, '.claude'), { recursive: true });
  writeFileSync(path.join(repo, '.claude/settings.json'), USER_SETTINGS);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'user settings');
  return repo;
}

async function claudeSession(repo: string, extraEnv: Record<string, string> = {}) {
  const server = await startModelServer({
    repo,
    scenario: ({ call }) => ({ blocks: [{ type: 'text', text: `answer ${call}` }] }),
  });
  onTestFinished(() => server.close());
  const res = await run(CLAUDE_BIN, [...CLAUDE_PRINT_ARGS, '--include-hook-events'], {
    cwd: repo,
    env: claudeEnv(server, extraEnv),
    input: 'Say hi.',
    timeoutMs: 120_000,
  });
  const events = streamEvents(res.stdout);
  const stopHooks = events.filter(
    (e) => e.type === 'system' && e.subtype === 'hook_response' && e.hook_event === 'Stop',
  );
  return { res, stopHooks, mains: server.mainRequests(), result: events.find((e) => e.type === 'result')! };
}

describe.skipIf(SKIP_CLAUDE)('the Stop hook installed by ralphkit, run by the real Claude Code CLI', () => {
  it.each([
    ['a session', {}],
    ["the runner's own agent run (RALPH_RUNNER=1)", { RALPH_RUNNER: '1' }],
  ])(
    'lets %s stop at once when no in-session loop was started, in a repository path with a space',
    async (_name, env) => {
      requireClaude();
      const repo = repoWithSpace();
      const install = await runCli(['install', '--claude-hook', '--no-skills', '--yes', '--cwd', repo]);
      expect(install.code, install.stderr).toBe(0);
      expect(install.stdout).toMatch(/create\s+\.claude\/settings\.json|merge\s+\.claude\/settings\.json/);

      const { res, stopHooks, mains, result } = await claudeSession(repo, env);

      expect(res.code, res.stderr).toBe(0);
      // Claude Code ran ralphkit's hook: the engine exited 0 and said nothing (no decision: the stop goes through).
      expect(stopHooks.map((h) => ({ exit: h.exit_code, stdout: h.stdout, stderr: h.stderr }))).toEqual([
        { exit: 0, stdout: '', stderr: '' },
      ]);
      expect(mains).toHaveLength(1);
      expect(result).toMatchObject({ subtype: 'success', result: 'answer 1' });

      const uninstall = await runCli(['install', '--no-claude-hook', '--no-skills', '--yes', '--cwd', repo]);
      expect(uninstall.code, uninstall.stderr).toBe(0);
      expect(readFileSync(path.join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    },
  );

  it('reaches the engine through $CLAUDE_PROJECT_DIR: without ralph/ralph.mjs the hook fails, and the session still stops', async () => {
    requireClaude();
    const repo = repoWithSpace();
    expect((await runCli(['install', '--claude-hook', '--no-skills', '--yes', '--cwd', repo])).code).toBe(0);
    rmSync(path.join(repo, 'ralph/ralph.mjs'));

    const { res, stopHooks, mains } = await claudeSession(repo);

    expect(res.code, res.stderr).toBe(0);
    expect(stopHooks).toHaveLength(1);
    expect(stopHooks[0].exit_code).toBe(1);
    expect(stopHooks[0].stderr).toContain(`Cannot find module '${path.join(repo, 'ralph/ralph.mjs')}'`);
    expect(mains).toHaveLength(1);
  });
});

describe('ralph.mjs hook stop, in a session that started no loop', () => {
  const INPUT = JSON.stringify({
    session_id: '49b42a3f-ea60-4259-acfe-8858545d9d7a',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/tmp',
    hook_event_name: 'Stop',
    stop_hook_active: false,
  });

  it.each([
    ['the Stop hook input', INPUT, {}, 0, ''],
    [
      'the input again with stop_hook_active',
      INPUT.replace('"stop_hook_active":false', '"stop_hook_active":true'),
      {},
      0,
      '',
    ],
    ['garbage in a runner agent run', 'not json', { RALPH_RUNNER: '1' }, 0, ''],
    [
      'garbage',
      'not json',
      {},
      1,
      'ralph: hook stop: the hook input on stdin is not JSON (8 characters); Claude Code sends a JSON object; letting the session stop\n',
    ],
    [
      'no input',
      '',
      {},
      1,
      'ralph: hook stop: the hook input on stdin is not JSON (it is empty); Claude Code sends a JSON object; letting the session stop\n',
    ],
    [
      'a session id that is a path',
      JSON.stringify({ session_id: '../../x', hook_event_name: 'Stop' }),
      {},
      1,
      'ralph: hook stop: the hook input has no usable session_id; letting the session stop\n',
    ],
    [
      'another event',
      JSON.stringify({ session_id: 'abc', hook_event_name: 'SubagentStop' }),
      {},
      1,
      'ralph: hook stop: the hook input is for "SubagentStop", not Stop: configure `ralph.mjs hook stop` under "Stop" only; letting the session stop\n',
    ],
  ])('given %s: never blocks (no stdout, never exit 2)', async (_name, input, env, code, stderr) => {
    const repo = installedRepo({ skills: false });
    const res = await run(process.execPath, ['ralph/ralph.mjs', 'hook', 'stop'], { cwd: repo, input, env });
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({ code, stdout: '', stderr });
  });

  it('names what it expected for another subcommand', async () => {
    const repo = installedRepo({ skills: false });
    const res = await run(process.execPath, ['ralph/ralph.mjs', 'hook', 'resume'], { cwd: repo, input: '{}' });
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 1, stdout: '' });
    expect(res.stderr).toBe(
      "ralph: hook: expected `hook start` (what /ralph-loop runs) or `hook stop` (what ralphkit's Stop hook runs), not `hook resume`; a session may stop\n",
    );
  });
});
