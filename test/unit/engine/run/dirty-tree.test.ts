import { describe, expect, it } from 'vitest';
import { renderDirtyHint } from '../../../../src/engine/run/dirty-tree.js';
import { parseRunArgs } from '../../../../src/engine/cli/args.js';
import { renderResumeCommand } from '../../../../src/engine/core/exits.js';

describe('renderDirtyHint: what to type when the tree is dirty at start', () => {
  it.each([
    [
      'only the files install wrote',
      ['.claude/skills/prd/SKILL.md', 'ralph/ralph.mjs', 'ralph/ralph.sh', 'ralph/.ralphkit.json'],
      'git add .claude ralph && git commit -m "Add the Ralph loop"',
    ],
    [
      'skills for other agents too',
      ['.agents/skills/ralph/SKILL.md', 'ralph/prompt.md'],
      'git add .agents ralph && git commit',
    ],
    ['only ralph/', ['ralph/ralph.mjs'], 'git add ralph && git commit'],
    ['an edited prompt only', ['ralph/prompt.md'], 'git add ralph && git commit -m "Update the Ralph loop files"'],
  ])('%s: the one commit that settles them', (_name, dirty, expected) => {
    expect(renderDirtyHint(dirty)).toContain(expected);
  });

  it.each([
    ['a user file only', ['notes.txt']],
    ['a .claude file that is not a skill', ['.claude/settings.json']],
  ])('%s: commit or stash, never a blanket git add', (_name, dirty) => {
    const hint = renderDirtyHint(dirty);
    expect(hint).toContain('git stash -u');
    expect(hint).not.toContain('git add');
  });

  it("loop files mixed with the user's: commit everything, and never stash (ralph.sh would go with it)", () => {
    const hint = renderDirtyHint(['ralph/ralph.sh', 'tasks/prd-calc.md']);
    expect(hint).toContain('git add -A && git commit');
    expect(hint).toContain('do not stash');
    expect(hint).not.toMatch(/put them aside with `git stash/);
  });
});

describe('renderDirtyHint: untracked files and .gitignore', () => {
  it.each<[string, string[], { untracked?: string[]; fromChecks?: string[] }, string]>([
    [
      "an untracked file of the user's: commit or stash, or ignore it if a check writes it",
      ['coverage/lcov.info'],
      { untracked: ['coverage/lcov.info'] },
      'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again; if a check or build writes coverage/lcov.info, list it in .gitignore instead',
    ],
    [
      'only modified tracked files: no .gitignore advice',
      ['src/app.ts'],
      { untracked: [] },
      'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again',
    ],
    [
      'untracked files of the loop itself are committed, never ignored',
      ['ralph/ralph.mjs', 'ralph/ralph.sh'],
      { untracked: ['ralph/ralph.mjs', 'ralph/ralph.sh'] },
      'these are the loop\'s own files (ralph/, skills): commit them with `git add ralph && git commit -m "Add the Ralph loop"`, then start again',
    ],
    [
      'many untracked files: three named, the rest counted',
      ['a.log', 'b.log', 'c.log', 'd.log', 'e.log'],
      { untracked: ['a.log', 'b.log', 'c.log', 'd.log', 'e.log'] },
      'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again; if a check or build writes a.log, b.log, c.log and 2 more, list them in .gitignore instead',
    ],
    [
      'files the checks of an earlier run wrote (the runner warned): say so, and only that',
      ['dist/app.js', 'dist/app.js.map'],
      { untracked: ['dist/app.js', 'dist/app.js.map'], fromChecks: ['dist/app.js', 'dist/app.js.map', 'old.txt'] },
      'the checks of an earlier run wrote dist/app.js, dist/app.js.map (the runner warned then): list them in .gitignore, then start again',
    ],
    [
      'check output among other changes: commit the rest, ignore the output',
      ['src/app.ts', 'out/x.json', 'scratch.md'],
      { untracked: ['out/x.json', 'scratch.md'], fromChecks: ['out/x.json'] },
      'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again; the checks of an earlier run wrote out/x.json: list it in .gitignore; if a check or build writes scratch.md, list it in .gitignore instead',
    ],
    [
      'a tracked file a check once changed is not .gitignore material',
      ['src/app.ts'],
      { untracked: [], fromChecks: ['src/app.ts'] },
      'commit them, or put them aside with `git stash -u` (and `git stash pop` after the loop), then start again',
    ],
    [
      'loop files with an untracked user file',
      ['ralph/ralph.sh', 'tmp/cache.bin'],
      { untracked: ['tmp/cache.bin'] },
      'commit them (the loop\'s own files among them), e.g. `git add -A && git commit -m "Plan and loop files"`, then start again; do not stash them: ralph/ would go with them; if a check or build writes tmp/cache.bin, list it in .gitignore instead',
    ],
  ])('%s', (_name, dirty, facts, expected) => {
    expect(renderDirtyHint(dirty, facts)).toBe(expected);
  });
});

describe('--wait needs --max-usage', () => {
  it.each([[['--wait']], [['--wait', '--wait-next-session', '5']]])(
    '%j: bad usage (exit 1), naming --max-usage',
    (argv) => {
      expect(() => parseRunArgs(argv)).toThrow(
        expect.objectContaining({ code: 1, message: expect.stringContaining('it needs --max-usage <pct>') }),
      );
    },
  );

  it.each([
    [['--max-usage', '80', '--wait']],
    [['--wait-next-session']],
    // A resumed loop may have --max-usage stored: run.ts checks the merged options instead.
    [['--resume-last', '--wait']],
  ])('%j: accepted', (argv) => {
    expect(() => parseRunArgs(argv)).not.toThrow();
  });
});

describe('renderResumeCommand: a concrete higher max', () => {
  it.each([
    [null, 2, './ralph/ralph.sh --resume-last 7'],
    [null, 10, './ralph/ralph.sh --resume-last 15'],
    ['night', 100, './ralph/ralph.sh --resume night 150'],
  ])('%s after %i iterations → %s', (id, ran, command) => {
    expect(renderResumeCommand(id, ran)).toBe(command);
  });
});
