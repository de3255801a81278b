// One install at a time (src/install/lock.ts), and none while a loop works in the tree (issue #27): a live holder is
// waited for, then refused with what to type; a killed install's lock is taken over; a running loop refuses install.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { INSTALL_LOCK, withInstallLock } from '../../../src/install/lock.js';
import { runInstall } from '../../../src/install/run.js';
import { RalphkitError } from '../../../src/errors.js';
import { gitdir, testdir } from '../../support/repo.js';
import { spawnStranger, writeRunningLoop } from '../../support/lifecycle.js';
import { procStart } from '../../support/process.js';
import { fakePackage } from '../../support/fake-package.js';

describe('withInstallLock', () => {
  it("waits for a live holder, then refuses (exit 2) naming it, with what to type; the holder's lock stays", async () => {
    const root = testdir();
    const holder = spawnStranger();
    writeFileSync(path.join(root, INSTALL_LOCK), JSON.stringify({ pid: holder.pid, start: procStart(holder.pid) }));
    const waited: unknown[] = [];
    let ran = false;
    const err = await withInstallLock(root, async () => void (ran = true), {
      waitMs: 200,
      onWait: (h) => waited.push(h),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RalphkitError);
    expect((err as RalphkitError).exitCode).toBe(2);
    expect((err as RalphkitError).message).toBe(
      `another ralphkit install (pid ${holder.pid}) is still running in ${root}; nothing was changed`,
    );
    expect((err as RalphkitError).hint).toMatch(/^let it finish, then run .*install again with your options/);
    expect(ran).toBe(false);
    expect(waited).toEqual([{ pid: holder.pid, start: procStart(holder.pid) }]);
    expect(JSON.parse(readFileSync(path.join(root, INSTALL_LOCK), 'utf8')).pid).toBe(holder.pid);
  });

  it('takes over the lock of a killed install, and removes its own when done', async () => {
    const root = testdir();
    const dead = spawnSync('true').pid as number;
    writeFileSync(path.join(root, INSTALL_LOCK), JSON.stringify({ pid: dead }));
    const seen = await withInstallLock(
      root,
      async () => JSON.parse(readFileSync(path.join(root, INSTALL_LOCK), 'utf8')).pid as number,
      { waitMs: 0 },
    );
    expect(seen).toBe(process.pid);
    expect(existsSync(path.join(root, INSTALL_LOCK))).toBe(false);
  });
});

describe('install while a loop runs in the tree', () => {
  it('refuses (exit 2) naming the loop, with the cancel command; nothing is written', async () => {
    const repo = gitdir();
    const runner = spawnStranger();
    writeRunningLoop(repo, { id: 'busy', pid: runner.pid, pidStart: procStart(runner.pid) });
    const err = await runInstall({ cwd: repo, sourceRoot: fakePackage(), ci: 'github' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RalphkitError);
    expect((err as RalphkitError).exitCode).toBe(2);
    expect((err as RalphkitError).message).toMatch(
      new RegExp(
        `^a loop \\(busy, pid ${runner.pid}\\) is running in .*; install would change the files it runs and trusts`,
      ),
    );
    expect((err as RalphkitError).hint).toMatch(
      /^wait for it to end \(.*status\), or stop it with: .*cancel busy; then run install again$/,
    );
    expect(existsSync(path.join(repo, 'ralph/.ralphkit.json'))).toBe(false);
  });

  it('a loop whose runner is gone is no bar', async () => {
    const repo = gitdir();
    writeRunningLoop(repo, { id: 'gone', pid: spawnSync('true').pid as number });
    const result = await runInstall({ cwd: repo, sourceRoot: fakePackage() });
    expect(result.status).toBe('written');
  });
});
