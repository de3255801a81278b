// What the reviewer's CLI reads besides its request (verify/review-home.ts): the clone's instruction files, and
// where a Claude Code or Codex reviewer's login is looked for.
import { describe, expect, it } from 'vitest';
import { captureReviewerLogin, planInstructionPaths } from '../../../../src/engine/verify/review-home.js';

describe('planInstructionPaths', () => {
  it('names each instruction or settings file or folder once, the shallowest, in any folder and letter case', () => {
    const files = [
      'src/a.ts',
      'CLAUDE.md',
      'docs/Agents.md',
      '.claude/settings.json',
      '.claude/skills/x/SKILL.md',
      'pkg/.codex/config.toml',
      'pkg/.agents/skills/s/SKILL.md',
      '.mcp.json',
      'GEMINI.md',
      'a/b/claude.local.md',
      'AGENTS.override.md',
      'notes/agents.md.txt',
      'claude.mdx',
    ];
    expect(planInstructionPaths(files)).toEqual([
      '.claude',
      '.mcp.json',
      'AGENTS.override.md',
      'CLAUDE.md',
      'GEMINI.md',
      'a/b/claude.local.md',
      'docs/Agents.md',
      'pkg/.agents',
      'pkg/.codex',
    ]);
  });
});

describe('captureReviewerLogin', () => {
  it("Claude Code: its login is read where the user's lives (CLAUDE_SECURESTORAGE_CONFIG_DIR, else CLAUDE_CONFIG_DIR, else the default)", () => {
    expect(captureReviewerLogin('claude', { HOME: '/h' })).toEqual({ agent: 'claude', credentialsDir: '' });
    expect(captureReviewerLogin('claude', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toEqual({
      agent: 'claude',
      credentialsDir: '/c',
    });
    expect(captureReviewerLogin('claude', { CLAUDE_CONFIG_DIR: '/c', CLAUDE_SECURESTORAGE_CONFIG_DIR: '/s' })).toEqual({
      agent: 'claude',
      credentialsDir: '/s',
    });
  });

  it('Codex: CODEX_HOME, else ~/.codex; other agents keep their own configuration', () => {
    expect(captureReviewerLogin('codex', { HOME: '/nonexistent-home' })).toEqual({
      agent: 'codex',
      codexHome: '/nonexistent-home/.codex',
      config: null,
    });
    expect(captureReviewerLogin('gemini', { HOME: '/h' })).toBeUndefined();
  });
});
