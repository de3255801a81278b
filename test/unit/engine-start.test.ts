import { describe, expect, it } from 'vitest';
import { renderDirtyHint } from '../../src/engine/run-start.js';

describe('renderDirtyHint: what to type when the tree is dirty at start', () => {
  it.each([
    ['only the files install wrote', ['.claude/skills/prd/SKILL.md', 'ralph/ralph.mjs', 'ralph/ralph.sh', 'ralph/.ralphkit.json'], 'git add .claude ralph && git commit -m "Add the Ralph loop"'],
    ['skills for other agents too', ['.agents/skills/ralph/SKILL.md', 'ralph/prompt.md'], 'git add .agents ralph && git commit'],
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

  it('loop files mixed with the user\'s: commit everything, and never stash (ralph.sh would go with it)', () => {
    const hint = renderDirtyHint(['ralph/ralph.sh', 'tasks/prd-calc.md']);
    expect(hint).toContain('git add -A && git commit');
    expect(hint).toContain('do not stash');
    expect(hint).not.toMatch(/put them aside with `git stash/);
  });
});
