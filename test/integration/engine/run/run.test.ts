// runRalph / runEngine in temp git repositories: refusals, the Claude Code adapter, cost limits, archive,
// compaction, status, dry-run and resume. Real git, fake agents, no network.
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, testdir, writeFiles } from '../../../support/repo.js';
import { AGENTS, agent, jsonEvents, onlyState, renderPlan } from '../../../support/loop-repo.js';
import { engine, planRepo } from '../../../support/lifecycle.js';

const worker = ['--agent-cmd', agent('worker'), '--pause', '0'];

describe('refusals (exit 2) and bad usage (exit 1)', () => {
  it('refuses outside a git repository', async () => {
    const r = await engine(testdir(), ['run', ...worker]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a git repository/);
  });

  it('refuses an invalid plan and lists its problems with positions', async () => {
    const dir = planRepo('{\n  "branchName": "ralph/x",\n  "userStories": [{"id": "A"}]\n}\n');
    const r = await engine(dir, ['run', ...worker]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid plan:\nralph\/prd\.json:3:\d+: /);
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
  });

  it('refuses when RALPH_CLAUDE_BIN names no executable, saying so and what to type next', async () => {
    const dir = planRepo();
    const bin = path.join(dir, 'no-such-claude');
    const r = await engine(dir, ['run', '--pause', '0'], { RALPH_CLAUDE_BIN: bin });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `ralph: the claude CLI was not found: RALPH_CLAUDE_BIN is set to "${bin}", which is not an executable file (exit 2)\n`,
    );
    expect(r.stderr).toMatch(/hint: point RALPH_CLAUDE_BIN at the claude binary .*unset it to use "claude" from PATH/);
    expect(r.stderr).not.toMatch(/on PATH\)/);
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
  });

  it('refuses when the agent CLI is not on PATH, with the install command', async () => {
    const dir = planRepo();
    const r = await engine(dir, ['run', '--agent', 'codex', '--pause', '0'], {
      PATH: testdir(),
      RALPH_CODEX_BIN: undefined,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the codex CLI was not found: no executable "codex" on PATH/);
    expect(r.stderr).toMatch(
      /hint: install it \(npm install -g @openai\/codex\), or set RALPH_CODEX_BIN=\/path\/to\/codex/,
    );
  });

  it('refuses a name that is taken', async () => {
    const dir = planRepo();
    expect((await engine(dir, ['run', ...worker, '--name', 'mine', '1'])).code).toBe(1);
    const r = await engine(dir, ['run', ...worker, '--name', 'mine', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/a loop named "mine" already exists/);
  });

  it('answers an unknown option with exit 1 and a hint', async () => {
    const r = await engine(planRepo(), ['run', '--max-iterations', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Unknown option '--max-iterations'[\s\S]*hint: see \.\/ralph\/ralph\.sh --help/);
  });
});

describe('agents', () => {
  it('runs Claude Code with stream-json: live tool lines, final message from the result event, cost summed up to --max-cost', async () => {
    const dir = planRepo(renderPlan({ stories: 3 }));
    const r = await engine(dir, ['run', '--pause', '0', '--max-cost', '0.5', '--json', '5'], {
      RALPH_CLAUDE_BIN: path.join(AGENTS, 'claude-stream.mjs'),
      FAKE_COST: '0.3',
    });
    expect(r.code, r.stderr).toBe(5);
    const events = jsonEvents(r.stdout);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool', iteration: 1, text: 'Bash: git commit -m "feat: next story"' }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'exit', code: 5, status: 'budget' });
    expect(onlyState(dir)).toMatchObject({ status: 'budget', iteration: 2 });
    expect(onlyState(dir).costUsd).toBeCloseTo(0.6);
  });

  it('completes with Claude Code when its result says COMPLETE and every story passes', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const r = await engine(dir, ['run', '--pause', '0', '3'], {
      RALPH_CLAUDE_BIN: path.join(AGENTS, 'claude-stream.mjs'),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/said COMPLETE/);
  });

  it("reads Codex's final message from its last-message file, not its chatter", async () => {
    const dir = planRepo(renderPlan({ stories: 2 }));
    const r = await engine(dir, ['run', '--agent', 'codex', '--pause', '0', '--json', '1'], {
      RALPH_CODEX_BIN: path.join(AGENTS, 'codex-exec.mjs'),
    });
    expect(r.code, r.stderr).toBe(1);
    expect(jsonEvents(r.stdout).find((e) => e.type === 'agent-exit')).toMatchObject({ exitCode: 0, tag: null });
    const last = await engine(dir, ['run', '--resume-last', '--json', '2'], {
      RALPH_CODEX_BIN: path.join(AGENTS, 'codex-exec.mjs'),
    });
    expect(last.code, last.stderr).toBe(0);
    expect(jsonEvents(last.stdout).find((e) => e.type === 'agent-exit')).toMatchObject({
      iteration: 2,
      tag: 'complete',
    });
  });

  it("shows Codex's commands and file changes as live lines, from its --json events", async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const r = await engine(dir, ['run', '--agent', 'codex', '--pause', '0', '--json', '1'], {
      RALPH_CODEX_BIN: path.join(AGENTS, 'codex-exec.mjs'),
    });
    expect(r.code, r.stderr).toBe(0);
    const tools = jsonEvents(r.stdout)
      .filter((e) => e.type === 'tool')
      .map((e) => e.text);
    expect(tools).toEqual(["Shell: /bin/bash -lc 'git commit -m next'", 'Edit: work/US-001.txt']);
  });

  it("takes Codex's last agent message when the last-message file is missing", async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const env = { RALPH_CODEX_BIN: path.join(AGENTS, 'codex-exec.mjs'), FAKE_CODEX_NO_FILE: '1' };
    const r = await engine(dir, ['run', '--agent', 'codex', '--pause', '0', '--json', '1'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonEvents(r.stdout).find((e) => e.type === 'agent-exit')).toMatchObject({ iteration: 1, tag: 'complete' });
  });
});

describe('branch, archive and progress.txt', () => {
  it('creates branchName from baseBranch', async () => {
    const dir = planRepo();
    git(dir, 'branch', 'develop');
    git(dir, 'checkout', '-q', '-b', 'elsewhere');
    writeFiles(dir, { 'elsewhere.txt': 'x\n' });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'elsewhere');
    const plan = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
    writeFiles(dir, { 'ralph/prd.json': JSON.stringify({ ...plan, baseBranch: 'develop' }) });
    git(dir, 'commit', '-q', '-am', 'base');
    // The plan lives on this branch; the new branch starts from develop, so carry the plan over uncommitted.
    const r = await engine(dir, ['run', ...worker, '--dry-run']);
    expect(r.code).toBe(0);
    expect(git(dir, 'branch', '--show-current')).toBe('elsewhere');
    const run = await engine(dir, ['run', ...worker, '5']);
    expect(run.stderr).toMatch(/created ralph\/test from develop/);
    expect(git(dir, 'merge-base', '--is-ancestor', 'develop', 'ralph/test')).toBe('');
    expect(() => git(dir, 'merge-base', '--is-ancestor', 'elsewhere', 'ralph/test')).toThrow();
  });

  it('archives the previous plan and progress log when branchName changes, and commits the archive', async () => {
    const dir = planRepo(renderPlan({ branchName: 'ralph/first', stories: 1 }));
    writeFiles(dir, {
      'ralph/progress.txt':
        '# Progress log\n\n## Codebase Patterns\n- keep this lesson\n\n## Sessions\nAppend below.\n---\n',
    });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'log');
    expect((await engine(dir, ['run', ...worker])).code).toBe(0);
    const oldProgress = readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
    expect(oldProgress).toMatch(/US-001/);
    writeFiles(dir, { 'ralph/prd.json': renderPlan({ branchName: 'ralph/second', stories: 1 }) });
    git(dir, 'commit', '-q', '-am', 'next plan');
    const r = await engine(dir, ['run', ...worker]);
    expect(r.code, r.stderr).toBe(0);
    const archives = readdirSync(path.join(dir, 'ralph/archive'));
    expect(archives).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}-first$/)]);
    expect(readFileSync(path.join(dir, 'ralph/archive', archives[0], 'progress.txt'), 'utf8')).toBe(oldProgress);
    // The archived plan is the old one (ralph/first, passing), not the new plan already on disk.
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/archive', archives[0], 'prd.json'), 'utf8'))).toMatchObject({
      branchName: 'ralph/first',
      userStories: [{ passes: true }],
    });
    const fresh = readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
    expect(fresh).toContain('## Codebase Patterns\n- keep this lesson');
    expect(fresh.match(/US-001: Story 1/g)).toHaveLength(1);
    expect(git(dir, 'log', '--format=%s')).toMatch(/chore\(ralph\): archive the previous run/);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('compacts a progress.txt past 64 KiB, keeping Codebase Patterns and the newest entries', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const entries = Array.from(
      { length: 400 },
      (_, i) => `## 2026-01-01 - OLD-${i}: old work\n${'- line of notes\n'.repeat(12)}---\n`,
    );
    writeFiles(dir, {
      'ralph/progress.txt': `# Progress log\n\n## Codebase Patterns\n- keep me\n\n${entries.join('')}`,
    });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'long log');
    const r = await engine(dir, ['run', ...worker]);
    expect(r.code, r.stderr).toBe(0);
    const progress = readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8');
    expect(statSync(path.join(dir, 'ralph/progress.txt')).size).toBeLessThan(64 * 1024);
    expect(progress).toContain('## Codebase Patterns\n- keep me');
    expect(progress).toContain('OLD-399');
    expect(progress).not.toContain('OLD-0:');
    const moved = readdirSync(path.join(dir, 'ralph/archive')).filter((f) => f.startsWith('progress-'));
    expect(moved).toHaveLength(1);
    expect(readFileSync(path.join(dir, 'ralph/archive', moved[0]), 'utf8')).toContain('OLD-0:');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a ralph/archive that is a link out of the repository (an agent can commit one) stops the loop (6) before compaction writes through it', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    const outside = testdir();
    const entries = Array.from({ length: 400 }, (_, i) => `## OLD-${i}\n${'- line of notes\n'.repeat(12)}---\n`);
    writeFiles(dir, { 'ralph/progress.txt': `# Progress log\n\n${entries.join('')}` });
    symlinkSync(outside, path.join(dir, 'ralph/archive'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'long log, and the archive elsewhere');
    const r = await engine(dir, ['run', ...worker]);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`ralph/archive is a link (to ${outside})`);
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('status, dry-run and resume', () => {
  it('lists loops with stories and verification counts', async () => {
    const dir = planRepo(renderPlan({ stories: 2 }));
    await engine(dir, ['run', ...worker, '--name', 'done-loop']);
    const r = await engine(dir, ['status', '--json']);
    expect(r.code).toBe(0);
    const [loop] = JSON.parse(r.stdout).loops;
    expect(loop).toMatchObject({
      id: 'done-loop',
      status: 'complete',
      iteration: 2,
      alive: false,
      storiesPassed: 2,
      storiesTotal: 2,
      verified: 2,
      unverified: 0,
      rejected: 0,
      plan: { branch: 'ralph/test', from: 'tree' },
    });
    expect((await engine(dir, ['status'])).stdout).toMatch(/done-loop\s+complete\s+2\/10/);
  });

  it('status back on main after a finished loop: its stories and its verdicts both come from its own branch and record, and it says which branch', async () => {
    const dir = planRepo(renderPlan({ stories: 2 }));
    expect((await engine(dir, ['run', ...worker, '--name', 'done-loop'])).code).toBe(0);
    git(dir, 'checkout', '-q', 'main'); // main's prd.json says nothing passes
    const [loop] = JSON.parse((await engine(dir, ['status', '--json'])).stdout).loops;
    expect(loop).toMatchObject({
      storiesPassed: 2,
      storiesTotal: 2,
      verified: 2,
      plan: { branch: 'ralph/test', from: 'branch' },
    });
    const table = (await engine(dir, ['status'])).stdout;
    expect(table).toMatch(/done-loop +complete .* 2\/2 +2 /);
    expect(table).toContain('stories as committed on ralph/test (the working tree is on another branch)');
    // The branch gone (merged and deleted): the commit the record names.
    git(dir, 'branch', '-q', '-D', 'ralph/test');
    const [gone] = JSON.parse((await engine(dir, ['status', '--json'])).stdout).loops;
    expect(gone).toMatchObject({ storiesPassed: 2, verified: 2, plan: { branch: 'ralph/test', from: 'record' } });
  });

  it('--dry-run prints the command and limits and touches nothing', async () => {
    const dir = planRepo();
    const r = await engine(dir, ['run', '--dry-run', '--json', '--max-cost', '3', '7'], {
      RALPH_CLAUDE_BIN: '/x/claude',
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      type: 'dry-run',
      command: '/x/claude --print --dangerously-skip-permissions --output-format stream-json --verbose < <prompt>',
      maxIterations: 7,
      maxCost: 3,
      pause: '2s',
      iterationTimeout: '1h00m',
    });
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
    expect(git(dir, 'branch', '--show-current')).toBe('main');
  });

  it('--dry-run shows no iteration cap and the completion word', async () => {
    const dir = planRepo();
    const args = ['run', '--dry-run', '--max-cost', '3', '--completion-promise', 'WORK_COMPLETE', '0'];
    expect(
      JSON.parse((await engine(dir, [...args, '--json'], { RALPH_CLAUDE_BIN: '/x/claude' })).stdout),
    ).toMatchObject({ maxIterations: 0, completionPromise: 'WORK_COMPLETE' });
    const text = (await engine(dir, args, { RALPH_CLAUDE_BIN: '/x/claude' })).stdout;
    expect(text).toMatch(/^max iterations: +no cap \(0\)$/m);
    expect(text).toMatch(/^completion tag: +<promise>WORK_COMPLETE<\/promise>$/m);
  });

  it('--dry-run says when the real start would refuse a dirty tree, and what to type', async () => {
    const dir = planRepo();
    expect(
      JSON.parse((await engine(dir, ['run', '--dry-run', '--json'], { RALPH_CLAUDE_BIN: '/x/claude' })).stdout),
    ).toMatchObject({ uncommitted: [] });
    writeFiles(dir, { 'notes.txt': 'mine\n' });
    const json = await engine(dir, ['run', '--dry-run', '--json'], { RALPH_CLAUDE_BIN: '/x/claude' });
    expect(JSON.parse(json.stdout)).toMatchObject({ uncommitted: ['notes.txt'] });
    const text = await engine(dir, ['run', '--dry-run'], { RALPH_CLAUDE_BIN: '/x/claude' });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^working tree: +the run would refuse to start: uncommitted notes\.txt$/m);
    expect(text.stdout).toContain('git stash -u');
    // The same hint as the real start: an untracked file may be build output that belongs in .gitignore.
    const start = await engine(dir, ['run', ...worker]);
    expect(start.code).toBe(2);
    expect(text.stdout).toContain('.gitignore');
    expect(start.stderr).toContain(
      text.stdout
        .split('\n')
        .find((l) => l.includes('.gitignore'))!
        .trim(),
    );
  });

  it('--resume <id> continues a loop that hit its limit, with a new limit', async () => {
    const dir = planRepo(renderPlan({ stories: 3 }));
    expect((await engine(dir, ['run', ...worker, '--name', 'x', '1'])).code).toBe(1);
    const r = await engine(dir, ['run', '--resume', 'x', '--json', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(
      jsonEvents(r.stdout)
        .filter((e) => e.type === 'iteration-start')
        .map((e) => e.iteration),
    ).toEqual([2, 3]);
    expect(onlyState(dir)).toMatchObject({ id: 'x', status: 'complete', maxIterations: 5, iteration: 3 });
  });

  it('takes over a lock whose pid is alive but belongs to a loop that has ended (pid reuse)', async () => {
    const dir = planRepo(renderPlan({ stories: 1 }));
    expect((await engine(dir, ['run', ...worker, '--name', 'old', '1'])).code).toBe(0);
    const locks = path.join(dir, 'ralph/.runs/locks');
    const prdAbs = path.join(dir, 'ralph/prd.json');
    const { lockPath } = await import('../../../../src/engine/store/layout.js');
    // A live process that is not a runner stands in for a reused pid; the lock names the finished loop "old".
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    onTestFinished(() => void other.kill('SIGKILL'));
    mkdirSync(locks, { recursive: true });
    writeFileSync(lockPath(dir, prdAbs), JSON.stringify({ pid: other.pid, loopId: 'old', prd: prdAbs }));
    writeFiles(dir, { 'ralph/prd.json': renderPlan({ stories: 2 }) });
    git(dir, 'commit', '-q', '-am', 'more');
    const r = await engine(dir, ['run', ...worker, '--name', 'new']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('cancel marks a loop that is not running any more', async () => {
    const dir = planRepo();
    await engine(dir, ['run', ...worker, '--name', 'y', '1']);
    const state = path.join(dir, 'ralph/.runs/y/state.json');
    writeFileSync(
      state,
      JSON.stringify({ ...JSON.parse(readFileSync(state, 'utf8')), status: 'running', pid: 999_999_999 }),
    );
    const r = await engine(dir, ['cancel', 'y']);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(state, 'utf8')).status).toBe('cancelled');
  });
});
