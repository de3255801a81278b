// Two `ralphkit install` at once in one repository (issue #27): before the install lock, in most trials both exited 0
// and the manifest lacked one side's option. Eight trials of two built CLIs started together with different options:
// every time both succeed, both options are recorded and installed, and neither leaves a staging folder or lock.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gitdir, runCli } from '../support/repo.js';

describe('two installs at once', () => {
  it('8 trials of `install --ci github` beside `install --claude-hook`: no lost update', async () => {
    for (let trial = 0; trial < 8; trial++) {
      const repo = gitdir();
      const [ci, hook] = await Promise.all([
        runCli(['install', '--yes', '--ci', 'github', '--cwd', repo], { cwd: repo, timeoutMs: 60_000 }),
        runCli(['install', '--yes', '--claude-hook', '--cwd', repo], { cwd: repo, timeoutMs: 60_000 }),
      ]);
      expect(ci.code, `trial ${trial}: ${ci.stderr}`).toBe(0);
      expect(hook.code, `trial ${trial}: ${hook.stderr}`).toBe(0);
      const manifest = JSON.parse(readFileSync(path.join(repo, 'ralph/.ralphkit.json'), 'utf8')) as {
        ci?: string;
        claudeHook?: unknown;
      };
      expect({ trial, ci: manifest.ci, hook: manifest.claudeHook !== undefined }).toEqual({
        trial,
        ci: 'github',
        hook: true,
      });
      expect(existsSync(path.join(repo, '.github/workflows/ralph.yml'))).toBe(true);
      expect(readFileSync(path.join(repo, '.claude/settings.json'), 'utf8')).toContain('hook stop');
      expect(existsSync(path.join(repo, '.ralphkit-staging'))).toBe(false);
      expect(existsSync(path.join(repo, '.ralphkit-install.lock'))).toBe(false);
    }
  }, 240_000);
});
