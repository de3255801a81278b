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

  it("leaves every package manager's cache out, binds the tools beside them read-only, and merges the folders holding both", () => {
    // The caches, as the user's HOME holds them (this list is the specification, not the module's constant).
    const caches = [
      '.npm',
      '.pnpm-store',
      '.gradle',
      '.yarn/berry/cache',
      '.cache/go-build',
      '.cache/pip',
      '.cache/uv',
      '.cache/yarn',
      '.cache/pnpm',
      '.cache/node-gyp',
      '.cache/deno',
      '.cache/pypoetry/cache',
      '.cache/ccache',
      '.cache/sccache',
      '.cargo/registry',
      '.cargo/git',
      '.cargo/.package-cache',
      '.cargo/.package-cache-mutate',
      '.cargo/.global-cache',
      '.m2/repository',
      'go/pkg/mod',
    ];
    const tools = [
      '.yarn/berry/plugins',
      '.cache/pypoetry/virtualenvs',
      '.cargo/bin',
      '.m2/settings.xml',
      'go/pkg/tool',
    ];
    const merged: Record<string, string[]> = {};
    const entries = new Set<string>();
    for (const rel of [...caches, ...tools]) {
      const parts = rel.split('/');
      entries.add(parts[0]);
      for (let i = 1; i < parts.length; i++) {
        const names = (merged[parts.slice(0, i).join('/')] ??= []);
        if (!names.includes(parts[i])) names.push(parts[i]);
      }
    }
    const plan = planHomeLayer({ home: '/h', entries: [...entries], merged });
    expect(plan.readOnly).toEqual(tools.map((t) => `/h/${t}`).sort());
    expect(plan.merged.sort()).toEqual([
      '.cache',
      '.cache/pypoetry',
      '.cargo',
      '.m2',
      '.yarn',
      '.yarn/berry',
      'go',
      'go/pkg',
    ]);
    expect(plan.copy).toEqual([]);
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
    ['/home/u/.cache/pypoetry/claude', '.cache/pypoetry/claude'],
    ['/home/u/.cache/pypoetry', null],
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
