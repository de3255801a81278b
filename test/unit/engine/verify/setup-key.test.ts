import { describe, expect, it } from 'vitest';
import { isLockfile, isPureInstall, lifecycleScripts, setupKey } from '../../../../src/engine/verify/setup-key.js';

const pkg = (scripts: Record<string, string> = {}) => Buffer.from(JSON.stringify({ name: 'demo', scripts }));

describe('setup key', () => {
  it('recognises dependency installs with options only; a build, a chain or a Python environment is not one', () => {
    for (const cmd of [
      'npm ci',
      'npm ci --no-audit --no-fund --offline',
      'npm install',
      'pnpm install --frozen-lockfile',
      'yarn install --frozen-lockfile',
      'yarn',
      'bun install',
    ])
      expect(isPureInstall(cmd)).toBe(true);
    for (const cmd of [
      'npm ci && npm run build',
      'npm ci; touch x',
      'npm run build',
      'npm install ./local',
      'npm ci --prefix=/tmp/x',
      'uv sync',
      'pip install -r requirements.txt',
      'CI=1 npm ci',
    ])
      expect(isPureInstall(cmd)).toBe(false);
  });

  it('names lockfiles, requirements*.txt among them', () => {
    expect(['package-lock.json', 'yarn.lock', 'go.sum', 'requirements-dev.txt'].every(isLockfile)).toBe(true);
    expect(isLockfile('package.json')).toBe(false);
  });

  it('changes with the command and each input byte; refuses install scripts of the project or a local package', () => {
    const inputs = new Map([
      ['package.json', pkg({ test: 'vitest' })],
      ['package-lock.json', Buffer.from('{"v":1}')],
    ]);
    const a = setupKey('npm ci', inputs);
    expect(a).toHaveProperty('key');
    expect(setupKey('npm ci', new Map(inputs))).toEqual(a);
    expect(setupKey('npm install', inputs)).not.toEqual(a);
    expect(setupKey('npm ci', new Map([...inputs, ['package-lock.json', Buffer.from('{"v":2}')]]))).not.toEqual(a);
    expect(
      setupKey('npm ci', new Map([...inputs, ['tools/x/package.json', pkg({ prepare: 'node build.js' })]])),
    ).toEqual({ uncached: 'tools/x/package.json has install scripts of its own (prepare)' });
    expect(setupKey('npm ci', new Map([...inputs, ['yarn.lock', null]]))).toEqual({
      uncached: 'yarn.lock is not a regular file',
    });
    expect(lifecycleScripts('{ nope')).toEqual(['(unreadable)']);
    // A folder dependency is copied or linked into node_modules: its files are not in the key (a tarball is bytes the lock pins).
    const local = (spec: string) => Buffer.from(JSON.stringify({ devDependencies: { tool: spec } }));
    expect(setupKey('npm ci', new Map([...inputs, ['package.json', local('file:tools/tool')]]))).toEqual({
      uncached: expect.stringContaining('package.json depends on a folder of the project (tool)'),
    });
    expect(setupKey('pnpm install', new Map([...inputs, ['package.json', local('link:../tool')]]))).toHaveProperty(
      'uncached',
    );
    expect(
      setupKey('npm ci', new Map([...inputs, ['package.json', local('file:vendor/tool-1.0.0.tgz')]])),
    ).toHaveProperty('key');
  });
});
