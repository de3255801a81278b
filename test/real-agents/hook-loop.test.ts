// The in-session loop's engine commands as Claude Code runs them, without Claude Code: `hook start` (what /ralph-loop
// runs, with the session id Claude Code gives it) and `hook stop` (the Stop hook, with hook input JSON on stdin), in an
// installed repository. The real CLI runs them in test/real-agents/claude-hook-loop.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, run, runCli, testdir } from '../support/repo.js';
import { until } from '../support/process.js';
import { installedRepo } from '../support/installed-repo.js';
import { TWO_STORY_PLAN } from '../support/model-loop.js';

const SESSION = '49b42a3f-ea60-4259-acfe-8858545d9d7a';

function engine(repo: string, args: string[], env: NodeJS.ProcessEnv = {}, input = '') {
  return run(process.execPath, [path.join(repo, 'ralph/ralph.mjs'), ...args], {
    cwd: repo,
    env: { CLAUDE_CODE_SESSION_ID: SESSION, ...env },
    input,
  });
}

const stateOf = (repo: string, id = SESSION) =>
  JSON.parse(readFileSync(path.join(repo, 'ralph/.runs', id, 'state.json'), 'utf8'));

describe('hook start', () => {
  it('records the plan commit and the baseline under refs/ralphkit/, the loop under the session id, and prints the prompt', async () => {
    const repo = installedRepo({
      plan: {
        ...TWO_STORY_PLAN,
        userStories: [{ ...TWO_STORY_PLAN.userStories[0], passes: true }, TWO_STORY_PLAN.userStories[1]],
      },
    });
    const head = git(repo, 'rev-parse', 'HEAD');

    const res = await engine(repo, ['hook', 'start', '--max-iterations', '20', '--completion-promise', 'DONE'], {
      CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '5',
    });

    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`started an in-session loop for this session (${SESSION}): at most 5 stops`);
    expect(res.stdout).toContain('the completion tag is <promise>DONE</promise>');
    expect(res.stdout).toContain('# Your task: one story from the plan');
    // This repository was installed without --claude-hook: nothing would verify the stops.
    expect(res.stdout).toContain("ralph: warning: ralphkit's Stop hook is not in .claude/settings.json");
    expect(git(repo, 'rev-parse', `refs/ralphkit/loops/${SESSION}/pins`)).toBe(head);
    // A story that already says passes: true is a claim the first stop verifies.
    const baseline = JSON.parse(git(repo, 'cat-file', 'blob', `refs/ralphkit/loops/${SESSION}/plan`));
    expect(baseline.userStories.map((s: { passes: boolean }) => s.passes)).toEqual([false, false]);
    expect(stateOf(repo)).toMatchObject({
      id: SESSION,
      inSession: true,
      status: 'running',
      iteration: 0,
      maxIterations: 5,
      agent: 'claude (in-session)',
      options: { maxIterations: 20, completionPromise: 'DONE' },
    });
  });

  it.each([
    ['no session id', ['hook', 'start'], { CLAUDE_CODE_SESSION_ID: '' }, 1, /no Claude Code session to loop in/],
    ['a session id that is a path', ['hook', 'start', '--session-id', '../x'], {}, 1, /is not a session id/],
    ["the runner's own agent run", ['hook', 'start'], { RALPH_RUNNER: '1' }, 2, /run by ralphkit's runner/],
    [
      '--max-iterations 0',
      ['hook', 'start', '--max-iterations', '0'],
      {},
      1,
      /--max-iterations must be a whole number ≥ 1/,
    ],
    ['an unknown option', ['hook', 'start', '--agent', 'codex'], {}, 1, /Unknown option '--agent'/],
  ])('refuses %s with a hint, and records no loop', async (_name, args, env, code, message) => {
    const repo = installedRepo({ plan: TWO_STORY_PLAN });
    const res = await engine(repo, args, env);
    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).toMatch(/ralph: hint: /);
    expect(git(repo, 'for-each-ref', 'refs/ralphkit')).toBe('');
  });
});

/** The Stop hook input Claude Code sends (docs/agents.md), for this session. */
function hookInput(lastMessage = 'done for now', stopHookActive = false, session = SESSION): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: `/tmp/${session}.jsonl`,
    cwd: '/tmp',
    hook_event_name: 'Stop',
    stop_hook_active: stopHookActive,
    last_assistant_message: lastMessage,
  });
}

function stop(repo: string, input = hookInput(), env: NodeJS.ProcessEnv = {}) {
  return engine(repo, ['hook', 'stop'], env, input);
}

/** The session's work on a story of TWO_STORY_PLAN: `honest` writes the file its check needs; either way the claim is committed. */
function claim(repo: string, id: string, honest: boolean): void {
  const word = id === 'US-001' ? 'one' : 'two';
  if (honest) writeFileSync(path.join(repo, `${word}.txt`), `${word}\n`);
  const file = path.join(repo, 'ralph/prd.json');
  const plan = JSON.parse(readFileSync(file, 'utf8'));
  plan.userStories.find((s: { id: string }) => s.id === id).passes = true;
  writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', `feat: ${id}`);
}

async function startedLoop(args: string[] = [], env: NodeJS.ProcessEnv = {}, plan: object = TWO_STORY_PLAN) {
  const repo = installedRepo({ plan });
  const res = await engine(repo, ['hook', 'start', ...args], env);
  expect(res.code, res.stderr).toBe(0);
  return repo;
}

const blockOf = (stdout: string): { decision: string; reason: string } => JSON.parse(stdout);
/** What a stop that ends the loop tells the user: `{"systemMessage": …}` on stdout, exit 0 (docs/agents.md). */
const noticeOf = (res: { code: number | null; stdout: string }): string => {
  expect(res.code).toBe(0);
  const out = JSON.parse(res.stdout);
  expect(Object.keys(out)).toEqual(['systemMessage']);
  return out.systemMessage;
};

describe('hook stop', () => {
  it('sends a session that claims an unfinished story back with the rejection, and lets it stop once the work is verified', async () => {
    const repo = await startedLoop(['--max-iterations', '5']);

    claim(repo, 'US-001', false);
    const first = await stop(repo, hookInput('US-001 is done.\n<promise>COMPLETE</promise>'));
    expect(first.code, first.stderr).toBe(0);
    const block = blockOf(first.stdout);
    expect(block.decision).toBe('block');
    expect(block.reason).toContain('iteration 1 of at most 5');
    expect(block.reason).toContain('- US-001: check `grep -qx one one.txt` exited 2');
    expect(block.reason).toContain(
      'You ended with <promise>COMPLETE</promise>, but these stories are not verified: US-001, US-002.',
    );
    expect(block.reason).toContain('# Your task: one story from the plan');
    expect(JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).userStories[0].passes).toBe(false);
    expect(stateOf(repo)).toMatchObject({ status: 'running', iteration: 1, iterationDone: true });

    claim(repo, 'US-001', true);
    claim(repo, 'US-002', true);
    const second = await stop(repo, hookInput('All done.', true));
    expect(noticeOf(second)).toBe(
      'ralph: the in-session loop ended (complete) after 2 stops: all stories pass under verification.',
    );
    expect(stateOf(repo)).toMatchObject({ status: 'complete', exitCode: 0, iteration: 2 });
    const ledger = readFileSync(path.join(repo, 'ralph/.runs', SESSION, 'ledger.jsonl'), 'utf8');
    expect(ledger).toMatch(/"iteration":2,"story":"US-002"[^\n]*"kind":"verdict"[^\n]*"status":"verified"/);

    // The loop is over: later stops of the session go through untouched.
    expect(await stop(repo)).toMatchObject({ code: 0, stdout: '' });
    expect(stateOf(repo).iteration).toBe(2);
  });

  it.each([
    ['--max-iterations', ['--max-iterations', '2'], {}, 2],
    ["Claude Code's block cap", ['--max-iterations', '9'], { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '3' }, 3],
  ])(
    'lets a session that never finishes stop at the limit set by %s, whatever stop_hook_active says',
    async (_name, args, env, limit) => {
      const repo = await startedLoop(args, env);
      const decisions: string[] = [];
      for (let n = 1; n <= limit + 1; n++) {
        const res = await stop(repo, hookInput('still working', n % 2 === 0), env);
        expect(res.code, res.stderr).toBe(0);
        const out = res.stdout ? JSON.parse(res.stdout) : {};
        decisions.push(out.decision ?? (out.systemMessage ? `told: ${out.systemMessage}` : 'stop'));
      }
      const told = `told: ralph: the in-session loop ended (max-iterations) after ${limit} stops: stopped at the loop's limit (${limit} stops) with stories still open: US-001, US-002. Type /ralph-loop to start it again.`;
      expect(decisions).toEqual([...Array(limit - 1).fill('block'), told, 'stop']);
      expect(stateOf(repo)).toMatchObject({ status: 'max-iterations', iteration: limit, maxIterations: limit });
      expect(stateOf(repo).message).toContain(
        `stopped at the loop's limit (${limit} stops) with stories still open: US-001, US-002`,
      );
    },
  );

  it('a plan edit the owner commits mid-session is undone, and said in the block reason with the in-session way to change the plan (never --resume-last)', async () => {
    const repo = await startedLoop(['--max-iterations', '5']);
    const file = path.join(repo, 'ralph/prd.json');
    const plan = JSON.parse(readFileSync(file, 'utf8'));
    plan.userStories[1].title = 'Renamed by the owner';
    writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
    git(repo, 'commit', '-q', '-am', 'plan: rename US-002');
    const res = await stop(repo);
    expect(res.code, res.stderr).toBe(0);
    const { reason } = blockOf(res.stdout);
    expect(reason).toContain(
      'Undone in ralph/prd.json (only passes and notes may change during the loop; the plan is as the loop started it):',
    );
    expect(reason).toContain('- story US-002: field "title" was changed; restored');
    expect(reason).toContain(
      `If the user changed the plan, tell them: end this loop (node ralph/ralph.mjs cancel ${SESSION}), commit the plan, then type /ralph-loop to start a new one from it.`,
    );
    expect(reason).not.toContain('--resume');
    const log = readFileSync(path.join(repo, 'ralph/.runs', SESSION, 'hook.log'), 'utf8');
    expect(log).toContain('so those edits were undone (if you edited the plan yourself: end this loop');
    expect(log).not.toContain('--resume-last');
  });

  it('lets a session stop on STUCK', async () => {
    const repo = await startedLoop();
    expect(noticeOf(await stop(repo, hookInput('Blocked on credentials.\n<promise>STUCK</promise>')))).toBe(
      'ralph: the in-session loop ended (stuck) after 1 stop: the session said it is STUCK at iteration 1; open: US-001, US-002. Type /ralph-loop to start it again.',
    );
    expect(stateOf(repo)).toMatchObject({ status: 'stuck', iteration: 1 });
  });

  it.each([
    ['another session', hookInput('x', false, 'another-session'), {}],
    ["the runner's own agent run", hookInput(), { RALPH_RUNNER: '1' }],
  ])('does nothing for %s', async (_name, input, env) => {
    const repo = await startedLoop();
    expect(await stop(repo, input, env)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(stateOf(repo)).toMatchObject({ status: 'running', iteration: 0 });
  });

  it('lets the session stop when verification outlives its deadline, and records why', async () => {
    const plan = { ...TWO_STORY_PLAN, checks: ['sleep 30'] };
    const repo = await startedLoop([], {}, plan);
    claim(repo, 'US-001', true);
    const res = await stop(repo, hookInput(), { RALPH_HOOK_DEADLINE_MS: '1500' });
    expect(noticeOf(res)).toMatch(
      new RegExp(
        `^ralph: the in-session loop ended \\(interrupted\\) after 1 stop: verification timed out after 2 s .* what each stop checked is in ralph/\\.runs/${SESSION}/hook\\.log\\.$`,
      ),
    );
    expect(stateOf(repo)).toMatchObject({ status: 'interrupted', iteration: 1 });
    expect(stateOf(repo).message).toMatch(/^verification timed out after 2 s at iteration 1/);
  });

  it('says why and lets the session stop when its state.json is damaged', async () => {
    const repo = await startedLoop();
    const file = path.join(repo, 'ralph/.runs', SESSION, 'state.json');
    writeFileSync(file, JSON.stringify({ ...stateOf(repo), iteration: '0' }));
    const res = await stop(repo);
    expect(noticeOf(res)).toMatch(
      /^ralph: the in-session loop ended \(failed\) after 0 stops: the stop hook failed at iteration 0: .*state\.json is damaged/,
    );
    expect(res.stderr).toContain(`state.json is damaged (its iteration count is "0", not a whole number)`);
    expect(stateOf(repo)).toMatchObject({ status: 'failed' });
  });

  it('says why and lets the session stop when its plan record in git is gone (not what hook start sealed: exit 6)', async () => {
    const repo = await startedLoop();
    const planRef = `refs/ralphkit/loops/${SESSION}/plan`;
    const blob = git(repo, 'rev-parse', planRef);
    git(repo, 'update-ref', '-d', planRef);
    const res = await stop(repo);
    expect(noticeOf(res)).toMatch(
      /^ralph: the in-session loop ended \(protected\) after 1 stop: loop \S+'s own refs are not what the runner recorded/,
    );
    expect(res.stderr).toContain(
      `${planRef} (the runner's record of the plan) is gone, but the loop recorded ${blob.slice(0, 12)}`,
    );
    expect(res.stderr).toContain(`ralph: hint: if you did not move them, put the loop's own back (`);
    expect(stateOf(repo)).toMatchObject({ status: 'protected', exitCode: 6, iteration: 1 });
  });
});

describe('status and cancel see in-session loops', () => {
  it('lists a running loop, and `ralphkit cancel` lets its next stop through without signalling Claude Code', async () => {
    const repo = await startedLoop(['--max-iterations', '4'], { CLAUDE_PID: String(process.pid) });
    expect(blockOf((await stop(repo)).stdout).decision).toBe('block');

    const status = JSON.parse((await engine(repo, ['status', '--json'])).stdout);
    expect(status.loops).toEqual([
      expect.objectContaining({
        id: SESSION,
        status: 'running',
        alive: true,
        pid: process.pid,
        iteration: 1,
        maxIterations: 4,
        agent: 'claude (in-session)',
        inSession: true,
      }),
    ]);
    const table = (await runCli(['status', '--cwd', repo])).stdout;
    expect(table).toMatch(new RegExp(`${SESSION}\\s+running\\s+1/4\\s+claude \\(in-session\\)\\s+yes\\s+n/a`));

    const cancel = await runCli(['cancel', SESSION, '--cwd', repo]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout + cancel.stderr).toContain(
      `loop ${SESSION} runs inside a Claude Code session: cancelled; its next stop is let through`,
    );
    // This process is the loop's "Claude Code": it was not signalled (it would have died), and the stop goes through,
    // telling the user once.
    expect(noticeOf(await stop(repo))).toBe(
      'ralph: the in-session loop ended (cancelled) after 1 stop: cancelled by ralphkit cancel; the session was let stop. Type /ralph-loop to start it again.',
    );
    expect(await stop(repo)).toMatchObject({ code: 0, stdout: '' });
    expect(stateOf(repo)).toMatchObject({ status: 'cancelled', iteration: 1 });
  });

  it('a cancel while a stop is verifying wins: the stop ends the loop instead of blocking over the cancellation', async () => {
    // The plan's check says it started, then waits for the test to let it finish: cancel lands mid-verification.
    const gate = testdir('ralphkit-gate-');
    const [started, release] = [path.join(gate, 'started'), path.join(gate, 'release')];
    const plan = {
      ...TWO_STORY_PLAN,
      checks: [`touch '${started}'; while [ ! -f '${release}' ]; do sleep 0.05; done`],
    };
    const repo = await startedLoop(['--max-iterations', '5'], { CLAUDE_PID: String(process.pid) }, plan);
    claim(repo, 'US-001', false);
    // The gate's files are in /tmp, which a sandboxed check does not share with the host: this stop verifies as on a
    // machine without bubblewrap (the hook's checks follow the runner's default: sandboxed where bwrap works).
    const stopping = stop(repo, hookInput(), { RALPH_BWRAP_BIN: '/nonexistent/bwrap' });
    await until('the check to start', () => existsSync(started));
    const cancel = await runCli(['cancel', SESSION, '--cwd', repo]);
    expect(cancel.code, cancel.stderr).toBe(0);
    writeFileSync(release, '');
    const res = await stopping;
    expect(noticeOf(res)).toMatch(
      /^ralph: the in-session loop ended \(cancelled\) after 1 stop: cancelled by ralphkit cancel/,
    );
    expect(stateOf(repo)).toMatchObject({ status: 'cancelled', iteration: 1 });
    expect(await stop(repo)).toMatchObject({ code: 0, stdout: '' });
  });

  it('options slipped into state.json beyond what hook start takes change nothing: no reviewer runs, no re-pinning', async () => {
    const repo = await startedLoop(['--max-iterations', '5']);
    const reviewed = path.join(testdir('ralphkit-review-'), 'reviewed');
    const file = path.join(repo, 'ralph/.runs', SESSION, 'state.json');
    const state = stateOf(repo);
    writeFileSync(
      file,
      JSON.stringify({ ...state, options: { ...state.options, reviewCmd: `touch '${reviewed}'`, repin: true } }),
    );
    claim(repo, 'US-001', true);
    expect(blockOf((await stop(repo)).stdout).reason).toContain('US-001');
    expect(existsSync(reviewed)).toBe(false);
    expect(git(repo, 'rev-parse', `refs/ralphkit/loops/${SESSION}/pins`)).toBe(git(repo, 'rev-parse', 'HEAD~1'));
  });

  it('says a loop whose Claude Code session is gone is dead, with the way to start again', async () => {
    const gone = spawnSync('true');
    expect(gone.status).toBe(0);
    const repo = await startedLoop([], { CLAUDE_PID: String(gone.pid) });
    const table = (await engine(repo, ['status'])).stdout;
    expect(table).toMatch(new RegExp(`${SESSION}\\s+dead`));
    expect(table).toContain('its Claude Code session is gone; start a new loop there with /ralph-loop');
  });
});
