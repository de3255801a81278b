import { describe, expect, it } from 'vitest';
import { renderDirtyHint } from '../../src/engine/run-start.js';

describe('renderDirtyHint: what to type when the tree is dirty at start', () => {
  it.each([
    ['only the files install wrote', ['.claude/skills/prd/SKILL.md', 'ralph/ralph.sh', 'ralph/.ralphkit.json'], 'git add .claude ralph && git commit -m "Add the Ralph loop"'],
    ['skills for other agents too', ['.agents/skills/ralph/SKILL.md', 'ralph/prompt.md'], 'git add .agents ralph && git commit'],
    ['only ralph/', ['ralph/ralph.mjs'], 'git add ralph && git commit'],
  ])('%s: the one commit that settles them', (_name, dirty, expected) => {
    expect(renderDirtyHint(dirty)).toContain(expected);
  });

  it.each([
    ['a source file among them', ['ralph/ralph.sh', 'src/app.ts']],
    ['a user file only', ['notes.txt']],
    ['a .claude file that is not a skill', ['.claude/settings.json']],
  ])('%s: commit or stash, never a blanket git add', (_name, dirty) => {
    const hint = renderDirtyHint(dirty);
    expect(hint).toContain('git stash -u');
    expect(hint).not.toContain('git add');
  });
});
