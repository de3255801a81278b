// `validate` and `view` run from a subfolder of the repository find ralph/ at its top, as `status` and
// the loop do; a file the user names stays relative to where they stand.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, gitdir, runCli, testdir, writeFiles } from '../support/repo.js';
import { plan, writePlan } from '../support/view-fixtures.js';
import { getJson } from '../support/view-http.js';
import { startView } from '../support/view-cli.js';

// The shipped example made the user's own (validate warns about the example itself; validate-cli.test.ts covers that).
const TEMPLATE_PLAN = readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8').replace(
  '"project": "Example"',
  '"project": "Mine"',
);

/** A git repository with the shipped plan in ralph/ and an empty subfolder lib/deep. */
function repoWithPlan(): { repo: string; sub: string } {
  const repo = gitdir({ 'ralph/prd.json': TEMPLATE_PLAN });
  const sub = path.join(repo, 'lib', 'deep');
  mkdirSync(sub, { recursive: true });
  return { repo, sub };
}

describe('ralphkit validate from a subfolder', () => {
  it('checks ralph/prd.json at the top of the repository', async () => {
    const { repo, sub } = repoWithPlan();
    const r = await runCli(['validate'], { cwd: sub });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`${path.join(repo, 'ralph/prd.json')}: valid, 4 stories, 0 passing\n`);
  });

  it('with --cwd naming a subfolder, finds the plan at the top too', async () => {
    const { repo, sub } = repoWithPlan();
    const r = await runCli(['validate', '--json', '--cwd', sub], { cwd: testdir() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ file: path.join(repo, 'ralph/prd.json'), valid: true, stories: 4 });
  });

  it('reads a named file relative to the current folder, not the repository', async () => {
    const { sub } = repoWithPlan();
    writeFiles(sub, { 'plan.json': '{"branchName": "ralph/x", "userStories": [}' });
    const r = await runCli(['validate', 'plan.json'], { cwd: sub });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^plan\.json:1:\d+: /);
  });

  it('a named folder means its ralph/prd.json, else its prd.json', async () => {
    const { repo, sub } = repoWithPlan();
    writeFiles(sub, { 'old/prd.json': TEMPLATE_PLAN });
    const top = await runCli(['validate', '../..'], { cwd: sub });
    expect(top.stdout).toBe(`${path.join(repo, 'ralph/prd.json')}: valid, 4 stories, 0 passing\n`);
    const original = await runCli(['validate', 'old'], { cwd: sub });
    expect(original).toMatchObject({ code: 0, stdout: 'old/prd.json: valid, 4 stories, 0 passing\n' });
  });

  it('a folder without a plan says it wants a file (exit 2)', async () => {
    const { sub } = repoWithPlan();
    const r = await runCli(['validate', '.'], { cwd: sub });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `error: ${sub}: a folder with none of ralph/prd.json, scripts/ralph/prd.json, prd.json in it; validate wants the plan file (a prd.json)`,
    );
  });

  it('outside a git repository, still reads ralph/prd.json in the current folder', async () => {
    const dir = testdir();
    writeFiles(dir, { 'ralph/prd.json': TEMPLATE_PLAN });
    const r = await runCli(['validate'], { cwd: dir });
    expect(r).toMatchObject({ code: 0, stdout: 'ralph/prd.json: valid, 4 stories, 0 passing\n' });
  });
});

describe('ralphkit view from a subfolder', () => {
  it('shows the repository plan and does not warn that it is missing', async () => {
    const repo = gitdir();
    writePlan(repo, plan(2, { project: 'Seen From lib' }));
    const sub = path.join(repo, 'lib');
    mkdirSync(sub);
    const view = await startView([], { cwd: sub });
    const prd = await getJson(view.url, '/api/prd');
    expect(prd).toMatchObject({ exists: true, file: path.join('ralph', 'prd.json') });
    expect(prd.prd.project).toBe('Seen From lib');
    expect(view.stderr()).toContain(`showing ${repo}`);
    expect(view.stderr()).not.toContain('no plan at');
  });

  it('reads --prd relative to the current folder', async () => {
    const repo = gitdir();
    writePlan(repo, plan(1, { project: 'Top' }));
    writePlan(repo, plan(3, { project: 'Beside lib' }), 'lib/next.json');
    const view = await startView(['--prd', 'next.json'], { cwd: path.join(repo, 'lib') });
    const prd = await getJson(view.url, '/api/prd');
    expect(prd).toMatchObject({ exists: true, file: path.join('lib', 'next.json') });
    expect(prd.prd.project).toBe('Beside lib');
  });
});
