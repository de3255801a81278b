// The example plan that install writes, and the example in the ralph skill, are copied by users: their
// focused checks must work whatever runs the tests. `node --test` is the strict case, since it takes
// file paths only (`npm test -- tags-api` fails there while Jest and Vitest read it as a pattern).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, gitdir, run, runCli, writeFiles } from '../support/repo.js';

interface PlanLike {
  checks?: string[];
  userStories: { id: string; checks?: string[] }[];
}

const PASSING_TEST = "import test from 'node:test';\ntest('works', () => {});\n";

/** Every story's own checks, which name the focused test files that the story writes. */
function storyChecks(plan: PlanLike): string[] {
  return plan.userStories.flatMap((s) => s.checks ?? []);
}

/** A project whose tests run with node:test, holding a passing test at every path the checks name. */
function nodeTestProject(checks: string[]): string {
  const files = checks.flatMap((c) => [...c.matchAll(/\btest\/[\w.-]+\.test\.js\b/g)].map((m) => m[0]));
  const repo = gitdir({
    'package.json': '{ "name": "app", "type": "module", "scripts": { "test": "node --test" } }\n',
  });
  writeFiles(repo, Object.fromEntries(files.map((f) => [f, PASSING_TEST])));
  return repo;
}

async function expectChecksPass(repo: string, checks: string[]): Promise<void> {
  for (const check of checks) {
    const result = await run('sh', ['-c', check], { cwd: repo });
    expect({ check, code: result.code, output: result.stdout.slice(-400) + result.stderr.slice(-400) }).toMatchObject({
      check,
      code: 0,
    });
  }
}

describe('example checks work with the node:test runner', () => {
  it("the installed ralph/prd.json: every story's focused check passes once its tests exist", async () => {
    const template = JSON.parse(readFileSync(path.join(ROOT, 'templates/ralph/prd.json'), 'utf8')) as PlanLike;
    const checks = storyChecks(template);
    expect(checks.length).toBeGreaterThan(0);
    const repo = nodeTestProject(checks);
    expect((await runCli(['install'], { cwd: repo })).code).toBe(0);
    const installed = JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')) as PlanLike;
    await expectChecksPass(repo, [...(installed.checks ?? []), ...storyChecks(installed)]);
  });

  it("the example in skills/ralph.md: its story checks pass too, and the skill names each runner's form", async () => {
    const skill = readFileSync(path.join(ROOT, 'skills/ralph.md'), 'utf8');
    const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(skill)![1]) as PlanLike;
    const checks = storyChecks(example);
    expect(checks.length).toBeGreaterThan(0);
    await expectChecksPass(nodeTestProject(checks), checks);
    for (const form of [
      'npx jest tags-api',
      'npx vitest run tags-api',
      'node --test test/tags-api.test.js',
      'pytest tests/test_tags_api.py',
    ])
      expect(skill).toContain(form);
  });
});
