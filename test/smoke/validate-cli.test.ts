import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, ROOT, cliAsTyped, runCli, testdir, writeFiles } from '../support/repo.js';

const fixture = (name: string) => readFileSync(path.join(FIXTURES, 'prd', name), 'utf8');

/** A folder holding ralph/prd.json with the given text. */
function withPlan(text: string): string {
  const dir = testdir();
  writeFiles(dir, { 'ralph/prd.json': text });
  return dir;
}

describe('ralphkit validate (built CLI)', () => {
  it('exits 0 on the shipped example plan, with a warning that the loop refuses it', async () => {
    const dir = withPlan(readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8'));
    const r = await runCli(['validate'], { cwd: dir });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(
      'ralph/prd.json: warning: this is still the example plan ralphkit installed (task tags for an example app), and the loop refuses to run it: write your own with the ralph skill, or edit this one\n' +
        'ralph/prd.json: valid, 4 stories, 0 passing\n',
    );
    // Any edit makes it the user's plan: no warning.
    writeFiles(dir, {
      'ralph/prd.json': readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8').replace(
        '"Example"',
        '"Mine"',
      ),
    });
    expect((await runCli(['validate'], { cwd: dir })).stdout).toBe('ralph/prd.json: valid, 4 stories, 0 passing\n');
  });

  it('warns (exit 0) at file:line:col about skip spellings, misnamed keys and bidi characters, and counts skipped stories', async () => {
    const story = (extra: string) =>
      `{"id": "US-${extra.length}", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, ${extra}}`;
    const text = `{"branchName": "ralph/x", "checks": ["true"], "userStories": [\n${story('"passes": "cancelled"')},\n${story('"passes": false, "blockedBy": []')},\n${story('"passes": false, "skip": true, "notes": ""')},\n{"id": "US-\u202e9", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": true}\n]}\n`;
    const r = await runCli(['validate'], { cwd: withPlan(text) });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.split('\n')).toEqual([
      'ralph/prd.json:2:85: warning: userStories[0] (US-21): passes "cancelled" is read as "skip": true, so the story is set aside (never worked on, not counted); say so directly with "passes": false, "skip": true',
      'ralph/prd.json:3:92: warning: userStories[1] (US-32): "blockedBy" is not a field ralphkit reads, so it is ignored; did you mean "dependsOn"?',
      'ralph/prd.json:5:8: warning: userStories[3] (US-<U+202E>9): the id contains U+202E (right-to-left override), which can make it display differently from what it is; remove it',
      'ralph/prd.json: valid, 4 stories, 1 passing, 2 skipped',
      '',
    ]);
    const json = await runCli(['validate', '--json'], { cwd: withPlan(text) });
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ valid: true, stories: 4, passing: 1, skipped: 2, problems: [] });
    expect(doc.warnings.map((w: { code: string; line: number }) => [w.code, w.line])).toEqual([
      ['skip-spelling', 2],
      ['did-you-mean', 3],
      ['unsafe-text', 5],
    ]);
  });

  it('an invalid plan lists its warnings too, in file order with the problems (exit 2)', async () => {
    const text =
      '{"branchName": "ralph/x", "userStories": [\n{"id": "A", "title": "t", "acceptanceCriteria": ["a"], "priority": 1, "passes": false, "dependencies": []},\n{"id": "B", "title": "t", "acceptanceCriteria": ["a"], "priority": 1}\n]}\n';
    const r = await runCli(['validate'], { cwd: withPlan(text) });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(
      'ralph/prd.json:2:88: warning: userStories[0] (A): "dependencies" is not a field ralphkit reads, so it is ignored; did you mean "dependsOn"?\n' +
        'ralph/prd.json:3:1: userStories[1] (B): missing required field "passes" (true or false)\n',
    );
    expect(r.stderr).toContain('error: 1 problem in ralph/prd.json');
  });

  it('finds the original layout scripts/ralph/prd.json when ralph/prd.json is absent, and says so', async () => {
    const dir = testdir();
    writeFiles(dir, { 'scripts/ralph/prd.json': fixture('full.json') });
    const r = await runCli(['validate'], { cwd: dir });
    expect(r).toMatchObject({ code: 0, stdout: 'scripts/ralph/prd.json: valid, 3 stories, 1 passing\n' });
    expect(r.stderr).toBe('using scripts/ralph/prd.json (the original Ralph layout): there is no ralph/prd.json\n');
    // ralph/prd.json still the example install wrote: the original layout's plan is the one meant.
    writeFiles(dir, { 'ralph/prd.json': readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8') });
    const again = await runCli(['validate'], { cwd: dir });
    expect(again.stdout).toBe('scripts/ralph/prd.json: valid, 3 stories, 1 passing\n');
    expect(again.stderr).toContain('ralph/prd.json is still the example install wrote');
    // The user's own ralph/prd.json wins, silently.
    writeFiles(dir, { 'ralph/prd.json': fixture('full.json') });
    expect(await runCli(['validate'], { cwd: dir })).toMatchObject({
      code: 0,
      stdout: 'ralph/prd.json: valid, 3 stories, 1 passing\n',
      stderr: '',
    });
  });

  it('exits 0 on an original-format plan and warns that nothing will be verified', async () => {
    const r = await runCli(['validate'], { cwd: withPlan(fixture('original-ralph.json')) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('ralph/prd.json: valid, 3 stories, 1 passing\n');
    expect(r.stderr).toContain("no checks in this plan: the runner will take every story on the agent's word");
  });

  it('exits 2 and prints every problem as file:line:col: message', async () => {
    const r = await runCli(['validate'], { cwd: withPlan(fixture('many-problems.json')) });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatchInlineSnapshot(`
      "ralph/prd.json:2:17: branchName "ralph/bad..name" is not a valid git branch name: it contains ".."
      ralph/prd.json:3:13: checks must be an array of strings, found a string ("npm test")
      ralph/prd.json:9:19: userStories[0] (US-001): priority must be a number, found a string ("high")
      ralph/prd.json:11:21: dependency cycle: US-001 -> US-003 -> US-001 (each depends on the next)
      ralph/prd.json:13:5: userStories[1] (US-002): missing required field "passes" (true or false); found "passed", did you mean "passes"?
      ralph/prd.json:19:21: userStories[1] (US-002): dependsOn names "US-009", which is not the id of any story
      ralph/prd.json:30:13: userStories[3]: duplicate id "US-001", already used by userStories[0]
      "
    `);
    expect(r.stderr).toContain('error: 7 problems in ralph/prd.json');
    expect(r.stderr).toContain(`hint: fix them, then run: ${cliAsTyped()} validate ralph/prd.json`);
  });

  it('refuses a story without criteria, or with an empty one, at file:line:col', async () => {
    const text = JSON.stringify(
      {
        branchName: 'ralph/x',
        userStories: [
          { id: 'US-001', title: 'Nothing to check', acceptanceCriteria: [], priority: 1, passes: false },
          {
            id: 'US-002',
            title: 'A blank one',
            acceptanceCriteria: ['Typecheck passes', ''],
            priority: 2,
            passes: false,
          },
        ],
      },
      null,
      2,
    );
    const r = await runCli(['validate'], { cwd: withPlan(text) });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(
      'ralph/prd.json:7:29: userStories[0] (US-001): acceptanceCriteria is empty: give the story at least one verifiable criterion\n' +
        'ralph/prd.json:16:9: userStories[1] (US-002): acceptanceCriteria[1] is empty: write a verifiable criterion there or remove the entry\n',
    );
    expect(r.stderr).toContain('error: 2 problems in ralph/prd.json');
  });

  it('points at a JSON syntax error', async () => {
    const dir = testdir();
    writeFiles(dir, { 'plan.json': fixture('syntax-error.json') });
    const s = await runCli(['validate', 'plan.json'], { cwd: dir });
    expect(s.code).toBe(2);
    expect(s.stdout).toBe("plan.json:4:94: trailing comma before '}'; remove it\n");
  });

  it('with --json prints one JSON document for a valid plan', async () => {
    const r = await runCli(['validate', '--json'], { cwd: withPlan(fixture('full.json')) });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      file: 'ralph/prd.json',
      valid: true,
      stories: 3,
      passing: 1,
      skipped: 0,
      problems: [],
      warnings: [],
    });
  });

  it('with --json prints one JSON document listing every problem, and exits 2', async () => {
    const r = await runCli(['validate', '--json'], { cwd: withPlan(fixture('many-problems.json')) });
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ file: 'ralph/prd.json', valid: false });
    expect(doc.problems).toHaveLength(7);
    expect(doc.problems[0]).toEqual({
      file: 'ralph/prd.json',
      line: 2,
      col: 17,
      code: 'branch-name',
      path: 'branchName',
      message: 'branchName "ralph/bad..name" is not a valid git branch name: it contains ".."',
    });
  });

  it('exits 2 with a hint to install when the plan is missing', async () => {
    const r = await runCli(['validate'], { cwd: testdir() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: ralph/prd.json: cannot read the plan: no such file');
    expect(r.stderr).toContain(`hint: ${cliAsTyped()} install creates ralph/prd.json`);
  });

  it('with --json reports a missing plan as a JSON document too', async () => {
    const r = await runCli(['validate', '--json', 'nope.json'], { cwd: testdir() });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      file: 'nope.json',
      valid: false,
      problems: [{ file: 'nope.json', message: 'cannot read the plan: no such file', code: 'unreadable' }],
      warnings: [],
    });
    expect(r.stderr).toContain(`${cliAsTyped()} install`);
  });

  it('resolves the file against --cwd and shows a path that works from where it ran', async () => {
    const repo = withPlan(fixture('many-problems.json'));
    const elsewhere = testdir();
    const r = await runCli(['validate', '--cwd', repo], { cwd: elsewhere });
    expect(r.code).toBe(2);
    expect(r.stdout.split('\n')[0]).toBe(
      `${path.join(repo, 'ralph/prd.json')}:2:17: branchName "ralph/bad..name" is not a valid git branch name: it contains ".."`,
    );
  });

  it('documents where problems go and the exit codes in --help', async () => {
    const r = await runCli(['validate', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: ralphkit validate [options] [file]');
    expect(r.stdout).toContain('--cwd <dir>');
    expect(r.stdout).toContain('--json');
    expect(r.stdout).toContain('Problems go to stdout');
    expect(r.stdout).toContain('Exit codes: 0 valid, 2 invalid or missing');
  });
});
