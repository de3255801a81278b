import { describe, expect, it } from 'vitest';
import {
  isLockfile,
  isPureInstall,
  lifecycleScripts,
  localDependencies,
  localTarballs,
  OUTSIDE,
  setupKey,
  YARN_FOLDER,
} from '../../../../src/engine/verify/setup-key.js';

const pkg = (scripts: Record<string, string> = {}) => Buffer.from(JSON.stringify({ name: 'demo', scripts }));

describe('setup key', () => {
  it('recognises dependency installs with options only; a build, a chain or a Python environment is not one', () => {
    for (const cmd of [
      'npm ci',
      'npm ci --no-audit --no-fund --offline',
      'npm install',
      'npm i',
      'pnpm i',
      '  npm   ci  -q ',
      'npm ci --omit=dev --loglevel=warn',
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
      'npm test',
      'npm',
      'npm ci x--prefix',
    ])
      expect(isPureInstall(cmd)).toBe(false);
  });

  it('names lockfiles, requirements*.txt among them', () => {
    const locks = ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb', 'bun.lock'];
    const others = ['poetry.lock', 'uv.lock', 'Cargo.lock', 'go.sum', 'requirements.txt', 'requirements-dev.txt'];
    expect([...locks, ...others].every(isLockfile)).toBe(true);
    for (const name of ['package.json', 'old-requirements.txt', 'requirements.txt.bak'])
      expect(isLockfile(name)).toBe(false);
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
      setupKey(
        'npm ci',
        new Map([...inputs, ['tools/x/package.json', pkg({ prepare: 'node build.js', install: 'x' })]]),
      ),
    ).toEqual({ uncached: 'tools/x/package.json has install scripts of its own (install, prepare)' });
    expect(setupKey('npm ci', new Map([...inputs, ['yarn.lock', null]]))).toEqual({
      uncached: 'yarn.lock is not a regular file',
    });
    expect(lifecycleScripts('{ nope')).toEqual(['(unreadable)']);
    expect(lifecycleScripts('{"scripts": "postinstall"}')).toEqual([]);
    expect(lifecycleScripts('{"scripts": null}')).toEqual([]);
    expect(setupKey('npm run build', inputs)).toEqual({
      uncached: '`npm run build` is not a recognised dependency install',
    });
    // A folder dependency is copied or linked into node_modules: its files are not in the key (a tarball's bytes are).
    const local = (spec: string) => Buffer.from(JSON.stringify({ devDependencies: { tool: spec } }));
    expect(setupKey('npm ci', new Map([...inputs, ['package.json', local('file:tools/tool')]]))).toEqual({
      uncached:
        'package.json depends on a folder of the project (tool), which an install copies or links: its files are not in the key',
    });
    const two = Buffer.from(JSON.stringify({ dependencies: { a: 'file:a' }, devDependencies: { b: 'link:b' } }));
    expect(setupKey('npm ci', new Map([...inputs, ['package.json', two]]))).toEqual({
      uncached: expect.stringContaining('(a, b)'),
    });
    expect(setupKey('pnpm install', new Map([...inputs, ['package.json', local('link:../tool')]]))).toHaveProperty(
      'uncached',
    );
    expect(
      setupKey('npm ci', new Map([...inputs, ['package.json', local('file:vendor/tool-1.0.0.tgz')]])),
    ).toHaveProperty('key');
  });

  it('the key: the same for the same command and files in any order, another for a file renamed; 64 hex digits', () => {
    const one = Buffer.from('{}');
    const a = setupKey(
      'npm ci',
      new Map([
        ['package.json', pkg()],
        ['a/package.json', one],
      ]),
    );
    expect(a).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(
      setupKey(
        ' npm ci ',
        new Map([
          ['a/package.json', one],
          ['package.json', pkg()],
        ]),
      ),
    ).toEqual(a);
    expect(
      setupKey(
        'npm ci',
        new Map([
          ['package.json', pkg()],
          ['b/package.json', one],
        ]),
      ),
    ).not.toEqual(a);
  });

  it('folder dependencies from every dependency field; a registry, git or tarball spec is none', () => {
    const fields = {
      dependencies: { a: 'file:a', r: '^1.0.0', n: 5 },
      devDependencies: { b: 'link:../b', t: 'file:t.tgz' },
      optionalDependencies: { c: 'portal:c', d: 'file:pkgs/d.tar.d' },
      peerDependencies: { e: 'file:e', g: 'github:user/file:repo', h: ['file:h'] },
    };
    expect(localDependencies(JSON.stringify(fields))).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const text of ['{ nope', 'null', '5', '{"dependencies": "file:a"}'])
      expect(localDependencies(text)).toEqual([]);
  });

  it('names the tarballs a package.json installs from, as paths in the checkout, and none that leads out of it', () => {
    const deps = (d: Record<string, string>) =>
      JSON.stringify({ dependencies: d, devDependencies: { x: 'file:../x.tgz' } });
    expect(
      localTarballs(
        'packages/a/package.json',
        deps({ t: 'file:vendor/t-1.0.0.tgz', u: 'file:./u.tar.gz', v: '^1.0.0' }),
      ),
    ).toEqual(['packages/a/vendor/t-1.0.0.tgz', 'packages/a/u.tar.gz', 'packages/x.tgz']);
    expect(localTarballs('package.json', deps({ t: 'file:/abs/t.tgz', u: 'file:folder', w: 'file:w.tar' }))).toEqual([
      null,
      'w.tar',
      null,
    ]);
    expect(localTarballs('package.json', '{ nope')).toEqual([]);
    expect(localTarballs('package.json', 'null')).toEqual([]);
    expect(localTarballs('package.json', deps({ l: 'link:vendor/l.tgz', g: 'https://x/g.tgz' }))).toEqual([null]);
  });

  it("refuses a .yarn folder and a tarball out of the checkout; a tarball's bytes and the install configuration are in the key", () => {
    const inputs = new Map([
      ['package.json', pkg()],
      ['vendor/t.tgz', Buffer.from('one')],
    ]);
    const a = setupKey('npm ci', inputs);
    expect(a).toHaveProperty('key');
    expect(setupKey('npm ci', new Map([...inputs, ['vendor/t.tgz', Buffer.from('two')]]))).not.toEqual(a);
    expect(setupKey('npm ci', new Map([...inputs, ['.npmrc', Buffer.from('x=1')]]))).not.toEqual(a);
    expect(YARN_FOLDER).toBe('.yarn/');
    expect(setupKey('yarn', new Map([...inputs, [YARN_FOLDER, null]]))).toEqual({
      uncached: expect.stringContaining('.yarn folder'),
    });
    expect(setupKey('npm ci', new Map([...inputs, [`${OUTSIDE}package.json`, null]]))).toEqual({
      uncached: 'a dependency is installed from a tarball outside the project (package.json)',
    });
  });
});
