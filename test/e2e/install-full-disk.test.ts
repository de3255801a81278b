// `ralphkit install` on a full disk (a small tmpfs): exit 1, one clear line, nothing changed; once space is
// freed the same command installs. Spawns the built CLI (run `npm run build` first); needs root for the mount.
import { describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../support/repo.js';
import { ageInstall, snapshotTree } from '../support/fake-package.js';
import { TMPFS_SKIP, fillUp, freeBytes, tmpfs } from '../support/tmpfs.js';

const ONE_LINE =
  /^error: no space left on the device holding (\S+): writing (\d+) files there needs (\d+) KiB, and (\d+) KiB is free; nothing was changed \(free some space, then run the same command again\)\n$/;

/** A repository at the top of a fresh tmpfs of `kib` KiB (the installer only needs a .git folder to count it as one). */
function repoOnTmpfs(kib: number): string {
  const repo = tmpfs(kib);
  mkdirSync(path.join(repo, '.git'));
  writeFileSync(path.join(repo, 'README.md'), '# test repo\n');
  return repo;
}

describe.skipIf(TMPFS_SKIP)('install on a full disk', () => {
  it('first install that does not fit: exit 1, one line saying where and how much, not one byte written', async () => {
    const repo = repoOnTmpfs(96);
    const before = snapshotTree(repo);
    const free = freeBytes(repo);
    const result = await runCli(['install', '--yes'], { cwd: repo });
    expect(result.code).toBe(1);
    const line = ONE_LINE.exec(result.stderr);
    expect(line, result.stderr).not.toBeNull();
    expect(line![1]).toBe(repo);
    expect(Number(line![3])).toBeGreaterThan(Number(line![4]));
    // What is free while the install runs: its lock file (src/install/lock.ts) holds one block until it ends.
    expect(Number(line![4])).toBeLessThanOrEqual(Math.ceil(free / 1024));
    expect(Number(line![4])).toBeGreaterThanOrEqual(Math.ceil(free / 1024) - 4);
    expect(snapshotTree(repo)).toEqual(before);
    expect(freeBytes(repo)).toBe(free);
  });

  it('upgrade on a disk filled to the last block: nothing changed; once space is freed, install upgrades', async () => {
    const repo = repoOnTmpfs(2048);
    expect((await runCli(['install', '--yes'], { cwd: repo })).code).toBe(0);
    ageInstall(repo, { 'ralph/ralph.sh': '#!/bin/sh\n# old runner\n', 'ralph/ralph.mjs': '// old engine\n' });
    const filler = fillUp(repo);
    const before = snapshotTree(repo);
    const full = await runCli(['install', '--yes'], { cwd: repo });
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(ONE_LINE);
    expect(snapshotTree(repo)).toEqual(before);

    rmSync(filler);
    const freed = await runCli(['install', '--yes'], { cwd: repo });
    expect(freed.code, freed.stderr).toBe(0);
    expect(freed.stdout).toContain('2 upgrade');
    expect(
      Object.keys(snapshotTree(repo)).filter((p) => p.startsWith('.ralphkit-staging') || p.endsWith('.tmp')),
    ).toEqual([]);
  });
});
