// A loop whose repository (and temp folder) is on a small tmpfs, with an agent that fills the disk during its
// iteration: the runner ends with one clear line (exit 1, no stack trace), state.json and prd.json stay whole, and
// once space is freed --resume-last continues. Spawns the installed ralph/ralph.sh (run `npm run build` first);
// needs root for the mount.
import { describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { TMPFS_SKIP, tmpfs } from '../support/tmpfs.js';

const HINT = (repo: string) =>
  `ralph: hint: free some space on the disk that holds ${repo}, then continue with: ./ralph/ralph.sh --resume-last`;

/** A loop repository on a fresh 4 MiB tmpfs, its TMPDIR (where checks get their fresh checkouts) on the same disk. */
function loopOnTmpfs(): { repo: string; filler: string; env: NodeJS.ProcessEnv } {
  const mount = tmpfs(4096);
  const repo = path.join(mount, 'repo');
  cpSync(loopRepo({ stories: 2 }), repo, { recursive: true, preserveTimestamps: true });
  mkdirSync(path.join(mount, 'tmp'));
  return { repo, filler: path.join(mount, 'filler'), env: { TMPDIR: path.join(mount, 'tmp') } };
}

/** The error lines of a run: everything that says what went wrong, hints aside; and no stack trace anywhere. */
function errorLines(stderr: string): string[] {
  expect(stderr).not.toMatch(/^\s+at |unexpected error|Error:/m);
  return stderr.split('\n').filter((l) => /disk is full|ENOSPC|space|error/i.test(l) && !l.startsWith('ralph: hint:'));
}

async function resumeToTheEnd(repo: string, filler: string, env: NodeJS.ProcessEnv, id: string): Promise<void> {
  rmSync(filler);
  // The same agent, now with room: it works the plan honestly.
  const resumed = await ralph(repo, ['--resume-last'], env);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resumed.stderr).toContain(`loop ${id} resumed`);
  expect(onlyState(repo)).toMatchObject({ id, status: 'complete', exitCode: 0 });
  expect(
    JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).userStories.map(
      (s: { passes: boolean }) => s.passes,
    ),
  ).toEqual([true, true]);
}

describe.skipIf(TMPFS_SKIP)('a loop on a full disk', () => {
  it('filled during the agent run: one clear line, exit 1, state.json and prd.json whole; --resume-last continues once space is freed', async () => {
    const { repo, filler, env } = loopOnTmpfs();
    const plan = readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8');
    const full = await ralph(repo, ['--agent-cmd', `node ${agent('disk-filler')}`, '--pause', '0', '5'], {
      ...env,
      FAKE_FILL_FILE: filler,
    });
    expect(full.code, full.stderr).toBe(1);
    expect(errorLines(full.stderr)).toEqual([
      expect.stringMatching(
        /^ralph: the disk is full: could not write ralph\/\.runs\/[^/]+\/iteration-1\.log \(ENOSPC: no space left on device\): .*; state\.json keeps the last step it saved \(exit 1\)$/,
      ),
    ]);
    expect(full.stderr.trimEnd().split('\n').at(-1)).toBe(HINT(repo));
    const state = onlyState(repo);
    expect(state).toMatchObject({ iteration: 1, iterationDone: false, exitCode: null });
    expect(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).toBe(plan);
    await resumeToTheEnd(repo, filler, env, state.id);
  }, 150_000);

  it('filled after a commit, so verification cannot check out: the claim is not rejected, the loop stops; --resume-last verifies it', async () => {
    const { repo, filler, env } = loopOnTmpfs();
    // The agent does US-001 honestly and commits, then fills the disk but for 16 KiB: the logs and state.json
    // still fit, a fresh checkout to verify in does not.
    const fill = { ...env, FAKE_FILL_FILE: filler, FAKE_FILL_AFTER_STORY: '1', FAKE_FILL_LEAVE: '16384' };
    const full = await ralph(repo, ['--agent-cmd', `node ${agent('disk-filler')}`, '--pause', '0', '5'], fill);
    expect(full.code, full.stderr).toBe(1);
    expect(errorLines(full.stderr)).toEqual([
      expect.stringMatching(/^ralph: the disk is full: git \w+ could not write \(.*\) \(exit 1\)$/),
    ]);
    expect(full.stderr).not.toContain('rejected');
    const state = onlyState(repo);
    expect(state.iteration).toBe(1);
    // The agent's claim stays a claim: not rejected for want of space, verified on resume.
    expect(
      JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).userStories.map(
        (s: { passes: boolean }) => s.passes,
      ),
    ).toEqual([true, false]);
    await resumeToTheEnd(repo, filler, env, state.id);
  }, 150_000);
});
