import { describe, expect, it } from 'vitest';
import { topFolders } from '../../../src/util/top-folders.js';

describe('topFolders: what `git add` must name to cover these paths', () => {
  it.each<[string, string[], string[]]>([
    ['one folder', ['ralph/ralph.sh', 'ralph/prompt.md'], ['ralph']],
    [
      'folders and a root file, sorted, each once',
      ['ralph/ralph.sh', '.claude/skills/prd/SKILL.md', 'README.md', '.claude/skills/ralph/SKILL.md'],
      ['.claude', 'README.md', 'ralph'],
    ],
    ['nothing', [], []],
  ])('%s', (_name, paths, expected) => {
    expect(topFolders(paths)).toEqual(expected);
  });
});
