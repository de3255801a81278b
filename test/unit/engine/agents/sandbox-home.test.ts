import { describe, expect, it } from 'vitest';
import { planHomeLayer, statePathOf } from '../../../../src/engine/agents/sandbox-home.js';

describe('planHomeLayer', () => {
  it("copies the agents' state, makes npm's cache empty, merges ~/.cache and ~/.config, and binds every other entry read-only", () => {
    const plan = planHomeLayer({
      home: '/home/u',
      entries: ['.bashrc', '.npmrc', '.local', '.nvm', '.claude', '.claude.json', '.codex', '.npm', '.cache', '.config', 'code'],
      merged: { '.cache': ['ms-playwright', 'pip'], '.config': ['gh', 'git', 'claude'] },
      extraState: ['.config/claude'],
    });
    expect(plan).toEqual({
      readOnly: ['/home/u/.bashrc', '/home/u/.cache/ms-playwright', '/home/u/.cache/pip', '/home/u/.config/gh', '/home/u/.config/git', '/home/u/.local', '/home/u/.npmrc', '/home/u/.nvm', '/home/u/code'],
      copy: ['.claude', '.claude.json', '.codex', '.config/claude'],
      fresh: ['.npm'],
    });
  });

  it('makes a missing ~/.config an empty folder of the layer, and binds a ~/.cache that is a symbolic link (not listed) read-only as a whole', () => {
    expect(planHomeLayer({ home: '/h', entries: ['.cache'], merged: {} })).toEqual({ readOnly: ['/h/.cache'], copy: [], fresh: ['.config', '.npm'] });
  });
});

describe('statePathOf', () => {
  it.each([
    ['/home/u/.claude-work', '.claude-work'],
    ['/home/u/.config/claude', '.config/claude'],
    ['/home/u/.config', null],
    ['/opt/claude', null],
    ['/home/u', null],
    ['relative', null],
    [undefined, null],
  ])('%s: %s', (dir, want) => {
    expect(statePathOf('/home/u', dir)).toBe(want);
  });
});
