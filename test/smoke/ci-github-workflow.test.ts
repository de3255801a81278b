// The workflow `install --ci github` writes (templates/github/ralph.yml): valid against the GitHub Actions workflow
// schema (SchemaStore's, bundled by @action-validator/core), the structure that keeps it safe, and its shell steps run
// here as a runner would run them (bash -e), against real git, fake agents and a scripted GitHub API.
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { validateWorkflow } from '@action-validator/core';
import { ROOT, git, gitEnv, run, testdir, writeFiles } from '../support/repo.js';
import { agent, renderPlan } from '../support/loop-repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { startGitHubServer } from '../support/github-server.js';
import { parseDuration } from '../../src/engine/core/duration.js';
import { parseFrontmatter } from '../../src/util/frontmatter.js';

const TEXT = readFileSync(path.join(ROOT, 'templates/github/ralph.yml'), 'utf8');

interface Step {
  name?: string;
  uses?: string;
  id?: string;
  if?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  needs?: string;
  'timeout-minutes': number;
  permissions?: Record<string, string>;
  concurrency?: { group: string; 'cancel-in-progress': boolean };
  strategy?: { 'fail-fast': boolean; matrix: Record<string, string> };
  outputs?: Record<string, string>;
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: { workflow_dispatch: { inputs: Record<string, { type: string; default?: unknown; options?: string[] }> } };
  permissions: Record<string, string>;
  jobs: { plans: Job; loop: Job };
}

// Parsed with the project's one YAML reader (gray-matter's js-yaml), the workflow as a frontmatter block.
const WORKFLOW = parseFrontmatter(`---\n${TEXT}---\n`).data as Workflow;
const { plans: PLANS, loop: LOOP } = WORKFLOW.jobs;
const TOKEN = 'ghs_workflowTokenThatMustNeverLeak0123';

function step(job: Job, name: string): Step {
  const found = job.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step "${name}"`);
  return found;
}

/** A step's script as the runner runs one without `shell:` (bash -e), in `cwd` with the step's env resolved by the test. */
function runStep(script: string, cwd: string, env: NodeJS.ProcessEnv) {
  const file = path.join(testdir('ralphkit-step-'), 'step.sh');
  writeFileSync(file, script);
  return run('bash', ['-e', file], { cwd, env, timeoutMs: 50_000 });
}

describe('the GitHub workflow', () => {
  it('is a valid workflow by the GitHub Actions workflow schema', () => {
    expect(validateWorkflow(TEXT).errors).toEqual([]);
    // The validator is real: a misspelt key fails.
    expect(validateWorkflow(TEXT.replace('timeout-minutes: 360', 'timeout-minute: 360')).errors).not.toEqual([]);
  });

  it('starts by hand with plan, agent and iteration inputs; the schedule is there, commented out', () => {
    const inputs = WORKFLOW.on.workflow_dispatch.inputs;
    expect(Object.keys(inputs)).toEqual(['plans', 'agent', 'max_iterations']);
    expect(inputs.agent).toMatchObject({ type: 'choice', options: ['claude', 'codex'], default: 'claude' });
    expect(inputs.max_iterations).toMatchObject({ type: 'number' });
    expect(TEXT).toMatch(/^ {2}# schedule:\n {2}# {3}- cron: /m);
  });

  it('keeps no credentials on disk, asks for the least permissions, and loops once per branch', () => {
    const checkouts = [...PLANS.steps, ...LOOP.steps].filter((s) => s.uses?.startsWith('actions/checkout@'));
    expect(checkouts).toHaveLength(2);
    for (const c of checkouts) expect(c.with).toMatchObject({ 'persist-credentials': false });
    expect(checkouts[1].with).toMatchObject({ 'fetch-depth': 0 });
    expect(WORKFLOW.permissions).toEqual({ contents: 'read' });
    expect(LOOP.permissions).toEqual({ contents: 'write', 'pull-requests': 'write' });
    expect(LOOP.concurrency).toEqual({ group: 'ralph-loop-${{ matrix.plan.branch }}', 'cancel-in-progress': false });
    // Inputs and matrix values reach scripts only through env, never spliced into the script text.
    for (const s of [...PLANS.steps, ...LOOP.steps]) expect(s.run ?? '').not.toMatch(/\$\{\{/);
    expect([...PLANS.steps, ...LOOP.steps].flatMap((s) => (s.uses ? [s.uses] : []))).toEqual([
      'actions/checkout@v4',
      'actions/checkout@v4',
      'actions/setup-node@v4',
      'actions/upload-artifact@v4',
    ]);
  });

  it('runs one job per plan that the first job lists, the loop with --deliver pr and a --max-duration under the job limit', () => {
    expect(PLANS.outputs).toEqual({ plans: '${{ steps.list.outputs.plans }}' });
    expect(step(PLANS, 'List the plans').id).toBe('list');
    expect(LOOP.needs).toBe('plans');
    expect(LOOP.strategy).toEqual({
      'fail-fast': false,
      matrix: { plan: '${{ fromJSON(needs.plans.outputs.plans) }}' },
    });
    const command = step(LOOP, 'Run the loop')
      .run!.split('\n')
      .find((l) => l.includes('./ralph/ralph.sh'))!;
    expect(command).toContain('--deliver pr');
    expect(command).not.toContain('--sandbox');
    const duration = parseDuration(/--max-duration (\S+)/.exec(command)![1]);
    // At least half an hour between the loop's limit and the job's: the last checks, the push and the upload.
    expect(duration + 30 * 60_000).toBeLessThanOrEqual(LOOP['timeout-minutes'] * 60_000);
  });

  it('uploads ralph/.runs/ even when the loop fails, after scrubbing it, for a short time', () => {
    const names = LOOP.steps.map((s) => s.name ?? s.uses);
    const upload = LOOP.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    const scrub = step(LOOP, 'Scrub secrets from the logs');
    expect(names.indexOf('Scrub secrets from the logs')).toBe(names.indexOf(upload.uses) - 1);
    expect([scrub.if, upload.if]).toEqual(['always()', 'always()']);
    expect(upload.with).toMatchObject({
      path: 'ralph/.runs/',
      'include-hidden-files': true,
      name: 'ralph-runs-${{ matrix.plan.name }}-${{ github.run_attempt }}',
    });
    expect(upload.with!['retention-days']).toBeLessThanOrEqual(7);
    // Every secret the loop step sees is one the scrubber replaces.
    for (const name of Object.keys(step(LOOP, 'Run the loop').env!).filter((n) => /TOKEN|KEY/.test(n)))
      expect(scrub.env).toHaveProperty(name);
    expect(scrub.run).toContain(`'OPENAI_API_KEY'`);
  });
});

describe('the workflow steps, run off GitHub', () => {
  it('lists ralph/prd.json and every ralph/plans/*.json with their branches, or the plans named; refuses a path outside', async () => {
    const repo = testdir();
    writeFiles(repo, {
      'ralph/prd.json': renderPlan({ branchName: 'ralph/main-plan' }),
      'ralph/plans/b.json': renderPlan({ branchName: 'ralph/b' }),
      'ralph/plans/a.json': renderPlan({ branchName: 'ralph/a' }),
      'ralph/plans/notes.md': 'not a plan\n',
    });
    const list = async (plans: string) => {
      const output = path.join(testdir(), 'output');
      writeFileSync(output, '');
      const r = await runStep(step(PLANS, 'List the plans').run!, repo, { PLANS: plans, GITHUB_OUTPUT: output });
      return { ...r, output: readFileSync(output, 'utf8') };
    };
    const all = await list('');
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(/^plans=(.*)$/m.exec(all.output)![1])).toEqual([
      { prd: 'ralph/prd.json', branch: 'ralph/main-plan', name: 'ralph-prd.json' },
      { prd: 'ralph/plans/a.json', branch: 'ralph/a', name: 'ralph-plans-a.json' },
      { prd: 'ralph/plans/b.json', branch: 'ralph/b', name: 'ralph-plans-b.json' },
    ]);
    const named = await list('ralph/plans/b.json');
    expect(JSON.parse(/^plans=(.*)$/m.exec(named.output)![1]).map((p: { prd: string }) => p.prd)).toEqual([
      'ralph/plans/b.json',
    ]);
    const outside = await list('ralph/plans/a.json ../../etc/passwd');
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('::error::no plan at ../../etc/passwd in this repository');
    expect(outside.output).toBe('');
  });

  it('the credential helper gives the token to a git that has GH_TOKEN (the runner), and nothing to one without (the agent)', async () => {
    const home = testdir();
    const env = {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      GITHUB_SERVER_URL: 'https://github.com',
      PATH: process.env.PATH,
    };
    const set = await runStep(step(LOOP, 'Git identity, and push credentials for the runner only').run!, home, env);
    expect(set.code, set.stderr).toBe(0);
    expect(readFileSync(path.join(home, '.gitconfig'), 'utf8')).not.toContain(TOKEN);
    const fill = (extra: NodeJS.ProcessEnv) =>
      run('git', ['credential', 'fill'], {
        cwd: home,
        env: { ...env, GIT_TERMINAL_PROMPT: '0', ...extra },
        input: 'protocol=https\nhost=github.com\npath=acme/demo.git\n\n',
      });
    const runner = await fill({ GH_TOKEN: TOKEN });
    expect(runner.stdout).toContain(`password=${TOKEN}`);
    expect(runner.stdout).toContain('username=x-access-token');
    const agentSide = await fill({});
    expect(agentSide.stdout).not.toMatch(/password=\S/);
  });

  it('scrubs every secret value from ralph/.runs/ and drops links that lead out of it', async () => {
    const repo = testdir();
    const outside = path.join(testdir(), 'outside.txt');
    writeFileSync(outside, `runner credentials ${TOKEN}\n`);
    const key = 'sk-ant-api03-secretKeyValue';
    writeFiles(repo, {
      'ralph/.runs/loop-1/iteration-1.log': `{"tool_result":"ANTHROPIC_API_KEY=${key} GH_TOKEN=${TOKEN}"}\n`,
      'ralph/.runs/loop-1/state.json': '{"status":"complete"}\n',
    });
    symlinkSync(outside, path.join(repo, 'ralph/.runs/loop-1/link.txt'));
    linkSync(outside, path.join(repo, 'ralph/.runs/loop-1/hard.txt'));
    const scrub = step(LOOP, 'Scrub secrets from the logs');
    const r = await runStep(scrub.run!, repo, {
      GH_TOKEN: TOKEN,
      ANTHROPIC_API_KEY: key,
      CLAUDE_CODE_OAUTH_TOKEN: '',
      OPENAI_API_KEY: '',
      PATH: process.env.PATH,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('ralph/.runs: 1 file(s) scrubbed of secrets, 2 link(s) or special file(s) removed');
    expect(readFileSync(path.join(repo, 'ralph/.runs/loop-1/iteration-1.log'), 'utf8')).toBe(
      '{"tool_result":"ANTHROPIC_API_KEY=*** GH_TOKEN=***"}\n',
    );
    expect(readFileSync(path.join(repo, 'ralph/.runs/loop-1/state.json'), 'utf8')).toBe('{"status":"complete"}\n');
    expect(
      existsSync(path.join(repo, 'ralph/.runs/loop-1/link.txt')) ||
        existsSync(path.join(repo, 'ralph/.runs/loop-1/hard.txt')),
    ).toBe(false);
    // What the links pointed at is untouched.
    expect(readFileSync(outside, 'utf8')).toBe(`runner credentials ${TOKEN}\n`);
  });

  it('says which secret to set when the agent has no credential, before the loop starts', async () => {
    const dir = installedRepo({ plan: renderPlan({ stories: 1 }) });
    const r = await runStep(step(LOOP, 'Run the loop').run!, dir, {
      ...gitEnv(),
      AGENT: 'claude',
      PLAN: 'ralph/prd.json',
      MAX_ITERATIONS: '3',
      ANTHROPIC_API_KEY: '',
      CLAUDE_CODE_OAUTH_TOKEN: '',
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      '::error::Claude Code needs the repository secret ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN',
    );
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
    const codex = await runStep(step(LOOP, "Install the agent's CLI").run!, dir, {
      PATH: process.env.PATH,
      AGENT: 'codex',
      OPENAI_API_KEY: '',
    });
    expect(codex.code).toBe(1);
    expect(codex.stdout).toContain('::error::Codex needs the repository secret OPENAI_API_KEY');
  });

  it('runs the loop with --deliver pr, then a later run continues the branch it pushed', async () => {
    const url = 'https://github.com/acme/demo.git';
    const dir = installedRepo({ plan: renderPlan({ stories: 2 }) });
    const remote = path.join(testdir('ralphkit-remote-'), 'demo.git');
    git(path.dirname(remote), 'init', '-q', '--bare', remote);
    git(dir, 'remote', 'add', 'origin', url);
    git(dir, 'config', `url.${remote}.insteadOf`, url);
    git(dir, 'push', '-q', 'origin', 'main');
    const server = await startGitHubServer({ owner: 'acme', repo: 'demo', defaultBranch: 'main' });
    // Claude Code stand-in: records its environment, then does one story per run.
    const bin = testdir('ralphkit-bin-');
    const envDump = path.join(bin, 'agent-env');
    writeFileSync(
      path.join(bin, 'claude'),
      `#!/bin/sh\nenv >> '${envDump}'\nexec node '${agent('claude-stream')}' "$@"\n`,
    );
    chmodSync(path.join(bin, 'claude'), 0o755);
    // GitHub's hosted Ubuntu runners refuse bubblewrap its user namespaces (AppArmor), so the loop runs unsandboxed
    // there and says so; this bwrap fails the way it does there.
    writeFileSync(
      path.join(bin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n',
    );
    chmodSync(path.join(bin, 'bwrap'), 0o755);
    const env = {
      ...gitEnv(),
      AGENT: 'claude',
      PLAN: 'ralph/prd.json',
      MAX_ITERATIONS: '5',
      GH_TOKEN: TOKEN,
      ANTHROPIC_API_KEY: '',
      CLAUDE_CODE_OAUTH_TOKEN: 'oauth-token-for-the-agent',
      RALPH_CLAUDE_BIN: path.join(bin, 'claude'),
      GITHUB_API_URL: server.url,
      GH_CONFIG_DIR: testdir('ralphkit-gh-'),
      GITHUB_TOKEN: '',
      RALPH_RETRY_MS: '10',
      RALPH_BWRAP_BIN: path.join(bin, 'bwrap'),
    };
    const loopStep = step(LOOP, 'Run the loop').run!;
    const first = await runStep(loopStep, dir, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(
      'not sandboxed: bubblewrap cannot create its namespaces here (bwrap: setting up uid map: Permission denied)',
    );
    expect(git(remote, 'rev-parse', 'refs/heads/ralph/test')).toBe(git(dir, 'rev-parse', 'ralph/test'));
    expect(server.pulls).toHaveLength(1);
    expect(server.pulls[0]).toMatchObject({ head: 'ralph/test', base: 'main' });
    // The empty secret was unset; the set one reached the agent; the runner's token did not.
    const seen = readFileSync(envDump, 'utf8');
    expect(seen).toContain('CLAUDE_CODE_OAUTH_TOKEN=oauth-token-for-the-agent');
    expect(seen).not.toMatch(/^ANTHROPIC_API_KEY=/m);
    expect(seen).not.toContain(TOKEN);

    // A new runner: a fresh clone on main. The branch step puts it on the pushed branch, so the loop continues it.
    const clone = path.join(testdir(), 'clone');
    git(path.dirname(clone), 'clone', '-q', remote, clone);
    git(clone, 'remote', 'set-url', 'origin', url);
    git(clone, 'config', `url.${remote}.insteadOf`, url);
    const branchStep = await runStep(
      step(LOOP, "Continue the plan's branch where an earlier run left it").run!,
      clone,
      { ...gitEnv(), BRANCH: 'ralph/test' },
    );
    expect(branchStep.code, branchStep.stderr).toBe(0);
    expect(git(clone, 'rev-parse', '--abbrev-ref', '@{upstream}')).toBe('origin/ralph/test');
    const tip = git(remote, 'rev-parse', 'refs/heads/ralph/test');
    const second = await runStep(loopStep, clone, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/nothing for the agent to do/);
    // Nothing rewound: the remote branch only moved forward from where the first run left it.
    expect(git(remote, 'merge-base', '--is-ancestor', tip, 'refs/heads/ralph/test')).toBe('');
    expect(server.pulls).toHaveLength(1);
  });
});
