// The in-session loop with the real Claude Code CLI (SPEC §12): `ralphkit install --claude-hook`, then `claude -p
// '/ralph-loop …'` against the scripted model server. The command starts the loop, and ralphkit's Stop hook verifies
// each stop as the runner does: a false claim is sent back with its rejection, honest work lets the session stop,
// and a session that never finishes stops at its limit even though every stop after a block says stop_hook_active; a
// second session's /ralph-loop in the same working tree is refused before the model is called.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, run, runCli } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { TWO_STORY_PLAN, honestWork } from '../support/model-loop.js';
import { startModelServer, requestText, type Scenario } from '../support/model-server.js';
import { bash, renderStoryCommand } from '../support/model-scenarios.js';
import {
  CLAUDE_BIN,
  CLAUDE_PRINT_ARGS,
  SKIP_CLAUDE,
  claudeEnv,
  requireClaude,
  streamEvents,
} from '../support/model-claude.js';

async function hookedRepo(): Promise<string> {
  const repo = installedRepo({ plan: TWO_STORY_PLAN, skills: false });
  const install = await runCli(['install', '--claude-hook', '--no-skills', '--yes', '--cwd', repo]);
  expect(install.code, install.stderr).toBe(0);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'chore: ralphkit Claude Code hook');
  return repo;
}

async function session(repo: string, prompt: string, scenario: Scenario) {
  const server = await startModelServer({ repo, scenario });
  onTestFinished(() => server.close());
  const res = await run(CLAUDE_BIN, [...CLAUDE_PRINT_ARGS, '--include-hook-events'], {
    cwd: repo,
    env: claudeEnv(server),
    input: prompt,
    timeoutMs: 150_000,
  });
  const events = streamEvents(res.stdout);
  const stops = events.filter((e) => e.type === 'system' && e.subtype === 'hook_response' && e.hook_event === 'Stop');
  const result = events.find((e) => e.type === 'result')!;
  const state = JSON.parse(readFileSync(path.join(repo, 'ralph/.runs', result.session_id, 'state.json'), 'utf8'));
  // What the hook's systemMessage became: Claude Code's own notice to the user (docs/agents.md).
  const notices = events.filter((e) => e.type === 'system' && e.subtype === 'informational').map((e) => e.content);
  return { res, stops, mains: server.mainRequests(), result, state, notices };
}

/** After a tool result the model ends its turn; otherwise (the command's prompt, a refused stop) it acts on `next`. */
function turns(next: (n: number) => ReturnType<typeof bash> | null): Scenario {
  let prompts = 0;
  return ({ toolResults }) => {
    if (toolResults.length) return { blocks: [{ type: 'text', text: 'Iteration finished.' }] };
    const action = next(prompts++);
    return {
      blocks: action
        ? [{ type: 'text', text: 'Working.' }, action]
        : [{ type: 'text', text: `still thinking ${prompts}` }],
    };
  };
}

describe.skipIf(SKIP_CLAUDE)('/ralph-loop with the real Claude Code CLI', () => {
  it('sends a session that claims an unfinished story back with the rejection, and lets it stop once the work is done', async () => {
    requireClaude();
    const repo = await hookedRepo();
    const [one, two] = TWO_STORY_PLAN.userStories;
    const { res, stops, mains, result, state, notices } = await session(
      repo,
      '/ralph-loop --max-iterations 5',
      turns((n) => {
        // First the false claim (no one.txt), then, sent back, the honest work on both stories.
        if (n === 0)
          return bash(renderStoryCommand(TWO_STORY_PLAN, one, { claim: true, commit: true }, 'ralph/prd.json'));
        if (n === 1)
          return bash(
            `${renderStoryCommand(TWO_STORY_PLAN, one, honestWork(one), 'ralph/prd.json')} && ${renderStoryCommand(TWO_STORY_PLAN, two, honestWork(two), 'ralph/prd.json')}`,
          );
        return null;
      }),
    );

    expect(res.code, res.stderr).toBe(0);
    // The command started the loop before the model's first request, with the loop's prompt.
    expect(requestText(mains[0])).toContain('started an in-session loop for this session');
    expect(requestText(mains[0])).not.toContain('Stop hook is not in');
    expect(stops).toHaveLength(2);
    expect(JSON.parse(stops[0].stdout)).toMatchObject({ decision: 'block' });
    expect(stops[1]).toMatchObject({ exit_code: 0 });
    // The user is told how the loop ended; the model is not called again (4 requests in all, below).
    const ended = 'ralph: the in-session loop ended (complete) after 2 stops: all stories pass under verification.';
    expect(JSON.parse(stops[1].stdout)).toEqual({ systemMessage: ended });
    expect(notices).toEqual([`Stop says: ${ended}`]);
    // The model was told why: the rejection, as Stop hook feedback.
    const feedback = requestText(mains[2]);
    expect(feedback).toContain(
      'Stop hook feedback:\nralph: the in-session loop is not done (iteration 1 of at most 5)',
    );
    expect(feedback).toContain('- US-001: check `grep -qx one one.txt` exited 2');
    expect(mains).toHaveLength(4);
    expect(result).toMatchObject({ subtype: 'success', result: 'Iteration finished.' });
    expect(state).toMatchObject({ status: 'complete', iteration: 2, inSession: true });
    expect(
      JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).userStories.map(
        (s: { passes: boolean }) => s.passes,
      ),
    ).toEqual([true, true]);
  });

  it("refuses /ralph-loop in a second session while another session's loop runs in the working tree: the user reads why, the model is never called", async () => {
    requireClaude();
    const repo = await hookedRepo();
    const first = '49b42a3f-ea60-4259-acfe-8858545d9d7a';
    const start = await run(
      process.execPath,
      [path.join(repo, 'ralph/ralph.mjs'), 'hook', 'start', '--session-id', first],
      { cwd: repo, env: { CLAUDE_PID: String(process.pid) } },
    );
    expect(start.code, start.stderr).toBe(0);
    const server = await startModelServer({ repo, scenario: turns(() => null) });
    onTestFinished(() => server.close());

    const res = await run(CLAUDE_BIN, CLAUDE_PRINT_ARGS, {
      cwd: repo,
      env: claudeEnv(server),
      input: '/ralph-loop --max-iterations 3',
      timeoutMs: 150_000,
    });
    const result = streamEvents(res.stdout).find((e) => e.type === 'result')!;
    expect(result.result).toContain('Shell command failed');
    expect(result.result).toContain(
      `an in-session loop (Claude Code session ${first}, Claude Code pid ${process.pid}) is running in this working tree`,
    );
    expect(result.result).toContain(`cancel ${first}`);
    expect(server.mainRequests()).toHaveLength(0);
    expect(existsSync(path.join(repo, 'ralph/.runs', result.session_id))).toBe(false);
  });

  it('stops a session that never finishes at its limit, though each stop after a block says stop_hook_active', async () => {
    requireClaude();
    const repo = await hookedRepo();
    const { res, stops, mains, result, state, notices } = await session(
      repo,
      '/ralph-loop --max-iterations 3',
      turns(() => null),
    );

    expect(res.code, res.stderr).toBe(0);
    // Stops 2 and 3 come with stop_hook_active: true (docs/agents.md); the count on disk decides: block, block, stop.
    expect(stops.map((s) => JSON.parse(s.stdout).decision ?? 'stop')).toEqual(['block', 'block', 'stop']);
    expect(notices).toEqual([
      "Stop says: ralph: the in-session loop ended (max-iterations) after 3 stops: stopped at the loop's limit (3 stops) with stories still open: US-001, US-002. Type /ralph-loop to start it again.",
    ]);
    expect(mains).toHaveLength(3);
    expect(result).toMatchObject({ subtype: 'success', result: 'still thinking 3' });
    expect(state).toMatchObject({ status: 'max-iterations', iteration: 3, maxIterations: 3 });
    const log = readFileSync(path.join(repo, 'ralph/.runs', result.session_id, 'hook.log'), 'utf8');
    expect(
      [...log.matchAll(/stop (\d) of at most 3 \(stop_hook_active: (\w+)\)/g)].map((m) => `${m[1]}:${m[2]}`),
    ).toEqual(['1:false', '2:true', '3:true']);
  });
});
