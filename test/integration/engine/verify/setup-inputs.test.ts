// What the setup cache's key is made of, read from a checkout (verify/setup-cache.ts readSetupInputs): the top-level
// lockfiles and install configuration, every package.json the commit tracks, the tarballs they install from; a .yarn
// folder or a tarball out of the checkout is named by a marker the key refuses.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSetupInputs, refuseOutsideDependencies } from '../../../../src/engine/verify/setup-cache.js';
import { setupKey, YARN_FOLDER } from '../../../../src/engine/verify/setup-key.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function checkout(files: Record<string, string>): string {
  dir = mkdtempSync(path.join(tmpdir(), 'setup-inputs-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('readSetupInputs', () => {
  it('takes the lockfiles and install configuration at the top, every tracked package.json and the tarballs they name', () => {
    const manifest = (deps: Record<string, string>) => JSON.stringify({ name: 'x', dependencies: deps });
    const d = checkout({
      'package.json': manifest({ t: 'file:vendor/t-1.0.0.tgz', r: '^1.0.0' }),
      'package-lock.json': '{}',
      'requirements-dev.txt': '',
      '.npmrc': 'x=1\n',
      '.yarnrc': '',
      '.yarnrc.yml': '',
      'pnpm-workspace.yaml': '',
      '.pnpmfile.cjs': '',
      'bunfig.toml': '',
      'README.md': 'not an input\n',
      'sub/.npmrc': 'not at the top\n',
      'packages/a/package.json': manifest({ u: 'file:../../vendor/u.tar.gz' }),
      'vendor/t-1.0.0.tgz': 'tar',
      'vendor/u.tar.gz': 'tar',
    });
    const inputs = readSetupInputs(d, ['package.json', 'packages/a/package.json', 'README.md']);
    expect([...inputs.keys()].sort()).toEqual(
      [
        '.npmrc',
        '.pnpmfile.cjs',
        '.yarnrc',
        '.yarnrc.yml',
        'bunfig.toml',
        'package-lock.json',
        'package.json',
        'packages/a/package.json',
        'pnpm-workspace.yaml',
        'requirements-dev.txt',
        'vendor/t-1.0.0.tgz',
        'vendor/u.tar.gz',
      ].sort(),
    );
    expect(inputs.get('vendor/t-1.0.0.tgz')?.toString()).toBe('tar');
    expect(setupKey('npm ci', inputs)).toHaveProperty('key');
    expect(() => refuseOutsideDependencies(inputs)).not.toThrow();
  });

  it('names a missing or linked tarball by null and a .yarn folder by its marker; one out of the checkout refuses the claim', () => {
    const d = checkout({
      'package.json': JSON.stringify({ dependencies: { a: 'file:gone.tgz', b: 'file:link.tgz', c: 'file:../up.tgz' } }),
      '.yarn/releases/yarn.cjs': '',
      // What npm installs from is the lockfile's resolved: read too.
      'package-lock.json': JSON.stringify({ packages: { 'node_modules/l': { resolved: 'file:../../l.tgz' } } }),
    });
    symlinkSync('/etc/hostname', path.join(d, 'link.tgz'));
    const inputs = readSetupInputs(d, []);
    expect(inputs.get('gone.tgz')).toBeNull();
    expect(inputs.get('link.tgz')).toBeNull();
    expect([...inputs.keys()].some((k) => k.includes('up.tgz') || k.includes('l.tgz'))).toBe(false);
    expect(() => refuseOutsideDependencies(inputs)).toThrow(
      'a dependency is installed from out of the checkout (package.json names "file:../up.tgz"; package-lock.json names "file:../../l.tgz")',
    );
    expect(inputs.has(YARN_FOLDER)).toBe(true);
    expect(setupKey('npm ci', inputs)).toEqual({ uncached: expect.stringContaining('.yarn folder') });
  });
});
