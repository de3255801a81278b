import { describe, expect, it } from 'vitest';
import { planHomeLayer, statePathOf } from '../../../../src/engine/agents/sandbox-home.js';

describe('planHomeLayer', () => {
  it("copies the agents' state, leaves package caches out, merges ~/.cache, ~/.config, ~/.cargo and ~/go/pkg, and binds every other entry read-only", () => {
    const plan = planHomeLayer({
      home: '/home/u',
      entries: [
        '.bashrc',
        '.npmrc',
        '.local',
        '.nvm',
        '.claude',
        '.claude.json',
        '.codex',
        '.npm',
        '.cache',
        '.config',
        '.cargo',
        'go',
        'code',
      ],
      merged: {
        '.cache': ['ms-playwright', 'pip', 'go-build'],
        '.config': ['gh', 'git', 'claude'],
        '.cargo': ['bin', 'env', 'registry', '.package-cache'],
        go: ['bin', 'pkg'],
        'go/pkg': ['mod', 'tool'],
      },
      extraState: ['.config/claude'],
    });
    expect(plan).toEqual({
      readOnly: [
        '/home/u/.bashrc',
        '/home/u/.cache/ms-playwright',
        '/home/u/.cargo/bin',
        '/home/u/.cargo/env',
        '/home/u/.config/gh',
        '/home/u/.config/git',
        '/home/u/.local',
        '/home/u/.npmrc',
        '/home/u/.nvm',
        '/home/u/code',
        '/home/u/go/bin',
        '/home/u/go/pkg/tool',
      ],
      copy: ['.claude', '.claude.json', '.codex', '.config/claude'],
      merged: ['.cache', '.cargo', '.config', 'go', 'go/pkg'],
    });
  });

  it('binds a ~/.cache that is a symbolic link (not listed as a folder) read-only as a whole', () => {
    expect(planHomeLayer({ home: '/h', entries: ['.cache'], merged: {} })).toEqual({
      readOnly: ['/h/.cache'],
      copy: [],
      merged: [],
    });
  });
});

describe('statePathOf', () => {
  it.each([
    ['/home/u/.claude-work', '.claude-work'],
    ['/home/u/.config/claude', '.config/claude'],
    ['/home/u/.config/claude/profile', '.config/claude'],
    ['/home/u/.config', null],
    ['/opt/claude', null],
    ['/home/u', null],
    ['/home/u/../v/.claude', null],
    ['relative', null],
    [undefined, null],
  ])('%s: %s', (dir, want) => {
    expect(statePathOf('/home/u', dir)).toBe(want);
  });
});
