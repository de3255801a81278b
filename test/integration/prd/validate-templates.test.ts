import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validatePrdText } from '../../../src/prd/validate.js';
import { planSkillFile } from '../../../src/skills/fill.js';
import { FIXTURES, ROOT } from '../../support/repo.js';

const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

describe('the shipped example plan templates/ralph/prd.json', () => {
  const text = read('templates/ralph/prd.json');
  const { prd, problems } = validatePrdText(text, 'templates/ralph/prd.json');

  it('is valid', () => {
    expect(problems).toEqual([]);
  });

  it('starts with every story not passing', () => {
    expect(prd!.userStories.length).toBeGreaterThan(1);
    expect(prd!.userStories.every((s) => s.passes === false)).toBe(true);
  });

  it('shows checks at both levels, dependsOn and a ralph/ branch', () => {
    expect(prd!.checks?.length).toBeGreaterThan(0);
    expect(prd!.userStories.some((s) => (s.checks?.length ?? 0) > 0)).toBe(true);
    expect(prd!.userStories.some((s) => (s.dependsOn?.length ?? 0) > 0)).toBe(true);
    expect(prd!.branchName).toMatch(/^ralph\//);
  });
});

describe('plans in test/fixtures/prd', () => {
  it('accepts a plan in the original Ralph format (no checks, dependsOn or baseBranch)', () => {
    const text = readFileSync(path.join(FIXTURES, 'prd/original-ralph.json'), 'utf8');
    const parsed = JSON.parse(text);
    expect(parsed).not.toHaveProperty('checks');
    expect(parsed).not.toHaveProperty('baseBranch');
    expect(parsed.userStories.some((s: object) => 'dependsOn' in s || 'checks' in s)).toBe(false);
    expect(validatePrdText(text, 'original-ralph.json')).toEqual({ prd: parsed, problems: [], warnings: [] });
  });

  it('accepts a plan using every optional field and some unknown ones', () => {
    const text = readFileSync(path.join(FIXTURES, 'prd/full.json'), 'utf8');
    expect(validatePrdText(text, 'full.json').problems).toEqual([]);
  });

  it('finds each of the problems planted in many-problems.json', () => {
    const text = readFileSync(path.join(FIXTURES, 'prd/many-problems.json'), 'utf8');
    const codes = validatePrdText(text, 'x').problems.map((p) => p.code);
    expect(codes).toEqual(['branch-name', 'type', 'type', 'cycle', 'missing', 'unknown-dependency', 'duplicate-id']);
  });
});

describe('templates/ralph/progress.txt', () => {
  it('pins ## Codebase Patterns near the top, before any entry', () => {
    const lines = read('templates/ralph/progress.txt').split('\n');
    const patterns = lines.indexOf('## Codebase Patterns');
    expect(patterns).toBeGreaterThan(-1);
    expect(patterns).toBeLessThan(5);
    expect(lines.slice(0, patterns).some((l) => l.startsWith('## '))).toBe(false);
  });
});

describe('the shipped skills', () => {
  it.each([
    ['prd', /Use when/],
    ['ralph', /Use when/],
  ])('skills/%s.md installs as a valid Agent Skill whose description says when to use it', (name, when) => {
    const result = planSkillFile(`${name}.md`, read(`skills/${name}.md`));
    if (!result.ok) throw new Error(result.problems.join('; '));
    expect(result.name).toBe(name);
    const description = /^description: (.*)$/m.exec(result.text)?.[1] ?? '';
    expect(description).toMatch(when);
    expect(description.length).toBeLessThanOrEqual(1024);
  });

  it.each([
    [
      'prd',
      [
        '3 to 5 clarifying questions',
        'lettered options',
        'Goals',
        'User stories',
        'Functional requirements',
        'Non-goals',
        'Technical notes',
        'Success metrics',
        'Open questions',
        'tasks/prd-<feature>.md',
        'Do not write',
      ],
    ],
    [
      'ralph',
      [
        'two or three sentences',
        'schema and migrations',
        'dependsOn',
        'checks',
        'ralph/<feature>',
        'ralph/archive/',
        './ralph/ralph.sh validate',
        '"passes": false',
      ],
    ],
  ])('skills/%s.md covers what the issue asks for', (name, phrases) => {
    const text = read(`skills/${name}.md`);
    for (const phrase of phrases) expect(text, phrase).toContain(phrase);
  });

  it('the prd.json example inside the ralph skill is itself a valid plan', () => {
    const json = /```json\n([\s\S]*?)```/.exec(read('skills/ralph.md'))?.[1];
    expect(json).toBeDefined();
    expect(validatePrdText(json!, 'skills/ralph.md').problems).toEqual([]);
  });

  it("the ralph skill writes plans that can be done one story at a time: the whole suite only in the last story's checks", () => {
    const text = read('skills/ralph.md');
    const prd = JSON.parse(/```json\n([\s\S]*?)```/.exec(text)![1]) as {
      checks?: string[];
      userStories: Array<{ checks?: string[] }>;
    };
    const wholeSuite = (c: string) => /^npm test$|^pytest$|^make test$/.test(c.trim());
    expect((prd.checks ?? []).filter(wholeSuite)).toEqual([]);
    const stories = prd.userStories;
    for (const s of stories.slice(0, -1)) expect((s.checks ?? []).filter(wholeSuite)).toEqual([]);
    expect(stories.at(-1)!.checks?.some(wholeSuite)).toBe(true);
    expect(text).toMatch(/Never the project's whole test suite/);
    expect(text).toMatch(/goes in the \*\*last story's\*\* `checks`/);
  });
});
