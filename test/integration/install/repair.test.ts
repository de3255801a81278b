import { describe, expect, it } from 'vitest';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runInstall, type InstallOptions } from '../../../src/install/run.js';
import { RalphkitError } from '../../../src/errors.js';
import { fakePackage, fakeRepo, read, snapshotTree } from '../../support/fake-package.js';

const NOW = new Date('2026-01-02T03:04:05.678Z');

function install(cwd: string, sourceRoot: string, extra: Partial<InstallOptions> = {}) {
  return runInstall({ cwd, sourceRoot, now: NOW, ...extra });
}

function modeOf(repo: string, rel: string): number {
  return statSync(path.join(repo, rel)).mode & 0o777;
}

describe('install restores the runner when it is no longer executable', () => {
  it('an unedited ralph.sh with mode 644 is made 755 again, content untouched; the next install has nothing to do', async () => {
    const repo = fakeRepo();
    const pkg = fakePackage();
    await install(repo, pkg);
    const before = read(repo, 'ralph/ralph.sh');
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o644);

    const result = await install(repo, pkg);
    const item = result.plan.items.find((i) => i.path === 'ralph/ralph.sh')!;
    expect(item.action).toBe('fix-mode');
    expect(item.reason).toBe('up to date, but not executable: made executable again');
    expect(result.written).toEqual(['ralph/ralph.sh']);
    expect(modeOf(repo, 'ralph/ralph.sh')).toBe(0o755);
    expect(read(repo, 'ralph/ralph.sh')).toBe(before);
    expect((await install(repo, pkg)).status).toBe('nothing-to-do');
  });

  it('a dry run says so and leaves the mode as it is', async () => {
    const repo = fakeRepo();
    const pkg = fakePackage();
    await install(repo, pkg);
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o600);
    const result = await install(repo, pkg, { dryRun: true });
    expect(result.plan.items.find((i) => i.path === 'ralph/ralph.sh')!.action).toBe('fix-mode');
    expect(result.written).toEqual([]);
    expect(modeOf(repo, 'ralph/ralph.sh')).toBe(0o600);
  });

  it("an edited ralph.sh without execute bits is still the user's: kept, mode unchanged", async () => {
    const repo = fakeRepo();
    const pkg = fakePackage();
    await install(repo, pkg);
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\necho mine\n');
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o644);
    const result = await install(repo, pkg);
    expect(result.plan.items.find((i) => i.path === 'ralph/ralph.sh')!.action).toBe('keep');
    expect(modeOf(repo, 'ralph/ralph.sh')).toBe(0o644);
  });
});

describe('install refuses to put an older release over a newer one', () => {
  const newer = {
    'package.json': '{ "name": "ralphkit", "version": "1.2.0" }\n',
    'dist/ralph.mjs': '// engine 1.2.0\n',
  };
  const older = {
    'package.json': '{ "name": "ralphkit", "version": "1.1.9" }\n',
    'dist/ralph.mjs': '// engine 1.1.9\n',
  };

  it('names both versions and the files, writes nothing (exit 2), also as a dry run', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage(newer));
    const tree = snapshotTree(repo);
    for (const dryRun of [false, true]) {
      const error = await install(repo, fakePackage(older), { dryRun }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(RalphkitError);
      const e = error as RalphkitError;
      expect(e.exitCode).toBe(2);
      expect(e.message).toContain('ralphkit 1.2.0, newer than this ralphkit 1.1.9');
      expect(e.message).toContain('ralph/ralph.mjs');
      expect(e.hint).toContain('npx ralphkit@latest install');
      expect(e.hint).toContain('--force');
      expect(snapshotTree(repo)).toEqual(tree);
    }
  });

  it('--force goes back to the older release, and the manifest records it', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage(newer));
    const result = await install(repo, fakePackage(older), { force: true });
    expect(result.status).toBe('written');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('// engine 1.1.9\n');
    expect(JSON.parse(read(repo, 'ralph/.ralphkit.json')).ralphkit).toBe('1.1.9');
  });

  it('an older ralphkit with nothing to change is not refused', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage({ 'package.json': newer['package.json'] }));
    const result = await install(repo, fakePackage({ 'package.json': older['package.json'] }));
    expect(result.exitCode).toBe(0);
    expect(result.plan.items.every((i) => i.action !== 'upgrade')).toBe(true);
  });

  it('an older ralphkit still makes the runner executable: same bytes, so nothing goes back', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage({ 'package.json': newer['package.json'] }));
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o644);
    const result = await install(repo, fakePackage({ 'package.json': older['package.json'] }));
    expect(result.exitCode).toBe(0);
    expect(result.plan.items.find((i) => i.path === 'ralph/ralph.sh')!.action).toBe('fix-mode');
    expect(modeOf(repo, 'ralph/ralph.sh')).toBe(0o755);
  });

  it('a newer ralphkit upgrades as before', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage(older));
    const result = await install(repo, fakePackage(newer));
    expect(result.status).toBe('written');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('// engine 1.2.0\n');
  });
});
