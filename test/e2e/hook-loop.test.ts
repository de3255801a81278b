// The in-session loop's engine commands as Claude Code runs them, without Claude Code: `hook start` (what /ralph-loop
// runs, with the session id Claude Code gives it) and `hook stop` (the Stop hook, with hook input JSON on stdin), in an
// installed repository. The real CLI runs them in test/e2e/claude-hook-loop.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, run } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { TWO_STORY_PLAN } from '../support/model-loop.js';

const SESSION = '49b42a3f-ea60-4259-acfe-8858545d9d7a';

function engine(repo: string, args: string[], env: NodeJS.ProcessEnv = {}, input = '') {
  return run(process.execPath, [path.join(repo, 'ralph/ralph.mjs'), ...args], { cwd: repo, env: { CLAUDE_CODE_SESSION_ID: SESSION, ...env }, input });
}

const stateOf = (repo: string, id = SESSION) => JSON.parse(readFileSync(path.join(repo, 'ralph/.runs', id, 'state.json'), 'utf8'));

describe('hook start', () => {
  it('records the plan commit and the baseline under refs/ralphkit/, the loop under the session id, and prints the prompt', async () => {
    const repo = installedRepo({ plan: { ...TWO_STORY_PLAN, userStories: [{ ...TWO_STORY_PLAN.userStories[0], passes: true }, TWO_STORY_PLAN.userStories[1]] } });
    const head = git(repo, 'rev-parse', 'HEAD');

    const res = await engine(repo, ['hook', 'start', '--max-iterations', '20', '--completion-promise', 'DONE'], { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '5' });

    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`started an in-session loop for this session (${SESSION}): at most 5 stops`);
    expect(res.stdout).toContain('the completion tag is <promise>DONE</promise>');
    expect(res.stdout).toContain('# Your task: one story from the plan');
    expect(git(repo, 'rev-parse', `refs/ralphkit/loops/${SESSION}/pins`)).toBe(head);
    // A story that already says passes: true is a claim the first stop verifies.
    const baseline = JSON.parse(git(repo, 'cat-file', 'blob', `refs/ralphkit/loops/${SESSION}/plan`));
    expect(baseline.userStories.map((s: { passes: boolean }) => s.passes)).toEqual([false, false]);
    expect(stateOf(repo)).toMatchObject({ id: SESSION, inSession: true, status: 'running', iteration: 0, maxIterations: 5, agent: 'claude (in-session)', options: { maxIterations: 20, completionPromise: 'DONE' } });
  });

  it.each([
    ['no session id', ['hook', 'start'], { CLAUDE_CODE_SESSION_ID: '' }, 1, /no Claude Code session to loop in/],
    ['a session id that is a path', ['hook', 'start', '--session-id', '../x'], {}, 1, /is not a session id/],
    ['the runner\'s own agent run', ['hook', 'start'], { RALPH_RUNNER: '1' }, 2, /run by ralphkit's runner/],
    ['--max-iterations 0', ['hook', 'start', '--max-iterations', '0'], {}, 1, /--max-iterations must be a whole number ≥ 1/],
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
