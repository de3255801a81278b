// The plan install writes is an example (task tags for another app). Started as is, the agent would build that
// feature in the user's repository, so the runner refuses it (exit 2) before anything happens, with a hint.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, git, gitdir, gitEnv, testdir, writeFiles } from '../support/repo.js';
import { agent, ralph } from '../support/loop-repo.js';

function installedRepo(): string {
  const dir = gitdir();
  execFileSync(process.execPath, [BIN, 'install', '--yes', '--cwd', dir], {
    env: { ...gitEnv(), FORCE_COLOR: '0' },
    stdio: 'pipe',
  });
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'install ralph');
  return dir;
}

function commitPlan(dir: string, text: string): void {
  writeFiles(dir, { 'ralph/prd.json': text });
  git(dir, 'commit', '-q', '-am', 'plan');
}

describe('starting the loop on the example plan', () => {
  it('as installed, and reformatted: refused (exit 2) with a hint, the agent never runs, nothing recorded; any edit runs', async () => {
    const dir = installedRepo();
    const marker = path.join(testdir(), 'agent-ran');
    const args = ['--agent-cmd', agent('marker'), '--pause', '0', '1'];
    const example = readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8');
    for (const text of [example, `${JSON.stringify(JSON.parse(example), null, 4)}\n`]) {
      if (text !== example) commitPlan(dir, text);
      const r = await ralph(dir, args, { FAKE_MARKER: marker });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('ralph/prd.json is still the example plan ralphkit installed');
      expect(r.stderr).toMatch(/hint: write your own plan with the ralph skill .*or edit ralph\/prd\.json by hand/);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(path.join(dir, 'ralph/.runs/last-branch'))).toBe(false);
      expect(git(dir, 'branch', '--show-current').trim()).not.toBe('ralph/example-task-tags');
    }
    // Edited, even slightly, it is the user's plan.
    commitPlan(dir, example.replace('"project": "Example"', '"project": "Mine"'));
    const mine = await ralph(dir, args, { FAKE_MARKER: marker });
    expect(mine.stderr).not.toContain('example plan');
    expect(readFileSync(marker, 'utf8')).toBe('iteration 1\n');
  });

  it('--dry-run says the real start would refuse it, and still exits 0 without running anything', async () => {
    const dir = installedRepo();
    const marker = path.join(testdir(), 'agent-ran');
    const r = await ralph(dir, ['--agent-cmd', agent('marker'), '--dry-run'], { FAKE_MARKER: marker });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'the run would refuse to start: ralph/prd.json is still the example plan ralphkit installed',
    );
    expect(existsSync(marker)).toBe(false);
  });
});
