import { describe, expect, it } from 'vitest';
import {
  declaresBin,
  hasWorkspaces,
  isLockfile,
  isNpmLockfile,
  isPureInstall,
  lifecycleScripts,
  localDependencies,
  localSpec,
  localTarballs,
  lockedFolders,
  outsideDependencies,
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
    // A workspace's programs are linked only where their files exist: those files are not in the key. The root's are
    // not linked, and a package.json that is no workspace's (a test's fixture) is not installed.
    const bin = (b: unknown) => Buffer.from(JSON.stringify({ name: 'b', bin: b }));
    const ws = new Map([...inputs, ['package.json', Buffer.from(JSON.stringify({ workspaces: ['packages/*'] }))]]);
    expect(setupKey('npm ci', new Map([...ws, ['packages/b/package.json', bin({ 'b-cli': 'cli.js' })]]))).toEqual({
      uncached: expect.stringContaining('packages/b/package.json declares programs (bin)'),
    });
    expect(setupKey('npm ci', new Map([...ws, ['packages/b/package.json', bin('cli.js')]]))).toHaveProperty('uncached');
    expect(setupKey('npm ci', new Map([...inputs, ['test/fixture/package.json', bin('cli.js')]]))).toHaveProperty(
      'key',
    );
    const pnpm = new Map([...inputs, ['pnpm-workspace.yaml', Buffer.from('packages: []\n')]]);
    expect(setupKey('pnpm install', new Map([...pnpm, ['packages/b/package.json', bin('cli.js')]]))).toHaveProperty(
      'uncached',
    );
    const rootBin = Buffer.from(JSON.stringify({ workspaces: ['packages/*'], bin: { r: 'r.js' } }));
    expect(setupKey('npm ci', new Map([...ws, ['package.json', rootBin]]))).toHaveProperty('key');
    expect(setupKey('npm ci', new Map([['package-lock.json', Buffer.from('{}')]]))).toHaveProperty('key');
    const dirBin = Buffer.from(JSON.stringify({ name: 'c', directories: { bin: 'bin' } }));
    expect(setupKey('npm ci', new Map([...ws, ['packages/c/package.json', dirBin]]))).toHaveProperty('uncached');
    for (const b of [{}, '', null, 5])
      expect(setupKey('npm ci', new Map([...ws, ['packages/b/package.json', bin(b)]]))).toHaveProperty('key');
    expect(
      [{ workspaces: ['a'] }, { workspaces: { packages: ['a'] } }, { workspaces: [] }, { workspaces: 'a' }, null].map(
        (m) => hasWorkspaces(JSON.stringify(m)),
      ),
    ).toEqual([true, true, false, false, false]);
    const declares = (m: unknown) => declaresBin(JSON.stringify(m));
    expect([{ bin: 'x.js' }, { bin: { x: 'x.js' } }, { directories: { bin: 'bin' } }].map(declares)).toEqual([
      true,
      true,
      true,
    ]);
    const none = [
      { bin: '' },
      { bin: {} },
      { bin: 5 },
      { directories: 'bin' },
      { directories: { bin: 5 } },
      { directories: null },
      null,
    ];
    expect(none.map(declares)).toEqual(none.map(() => false));
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

  it("names the tarballs a package.json installs from, as paths in the checkout; one out of it is outsideDependencies'", () => {
    const deps = (d: Record<string, string>) =>
      JSON.stringify({ dependencies: d, devDependencies: { x: 'file:../x.tgz' } });
    expect(
      localTarballs(
        'packages/a/package.json',
        deps({ t: 'file:vendor/t-1.0.0.tgz', u: 'file:./u.tar.gz', v: '^1.0.0' }),
      ),
    ).toEqual(['packages/a/vendor/t-1.0.0.tgz', 'packages/a/u.tar.gz', 'packages/x.tgz']);
    const root = deps({ t: 'file:/abs/t.tgz', u: 'file:folder', w: 'file:w.tar' });
    expect(localTarballs('package.json', root)).toEqual(['w.tar']);
    expect(outsideDependencies('package.json', root)).toEqual(['file:/abs/t.tgz', 'file:../x.tgz']);
    expect(localTarballs('package.json', '{ nope')).toEqual([]);
    expect(localTarballs('package.json', 'null')).toEqual([]);
    expect(localTarballs('package.json', deps({ l: 'link:vendor/l.tgz', g: 'https://x/g.tgz' }))).toEqual([]);
  });

  it("a spec is the project's when npm reads it as a path: file:, link:, portal:, or a path with no protocol", () => {
    expect(localSpec('file:vendor/t.tgz')).toEqual({ path: 'vendor/t.tgz', tarball: true });
    expect(localSpec('./vendor/T.TAR.GZ')).toEqual({ path: './vendor/T.TAR.GZ', tarball: true });
    expect(localSpec('file:///abs/t.tar')).toEqual({ path: '/abs/t.tar', tarball: true });
    expect(localSpec('link:vendor/t.tgz')).toEqual({ path: 'vendor/t.tgz', tarball: false });
    expect(localSpec('portal:../p')).toEqual({ path: '../p', tarball: false });
    for (const spec of ['../up/x.tgz', '/abs/x', '~/x.tgz', 'C:x.tgz']) expect(localSpec(spec)).not.toBeNull();
    expect(localSpec('portal:x.tgz')).toEqual({ path: 'x.tgz', tarball: false });
    expect(localSpec('git+file:///work/app/.stash/impl#159fd2c')).toEqual({
      path: '/work/app/.stash/impl',
      tarball: false,
    });
    expect(localSpec('git+file:/work/impl')).toEqual({ path: '/work/impl', tarball: false });
    expect(localSpec('github:u/git+file:x')).toBeNull();
    expect(
      outsideDependencies('package.json', JSON.stringify({ dependencies: { i: 'git+file:///tmp/impl' } })),
    ).toEqual(['git+file:///tmp/impl']);
    expect(localSpec('file:a//b.tgz')).toEqual({ path: 'a//b.tgz', tarball: true });
    // A drive or HOME leads out; a ~ inside a path does not.
    const odd = JSON.stringify({ dependencies: { a: 'C:x.tgz', b: './a~b/t.tgz' } });
    expect(outsideDependencies('package.json', odd)).toEqual(['C:x.tgz']);
    expect(localTarballs('package.json', odd)).toEqual(['a~b/t.tgz']);
    for (const spec of ['^1.0.0', 'github:u/r', 'u/r.tgz', 'https://x/t.tgz', 'git+ssh://x/r.git', 'npm:other@1'])
      expect(localSpec(spec)).toBeNull();
    // Bare paths out of the project (a tarball, a folder, HOME): out of the checkout; one in it is a tarball of its own.
    const bare = JSON.stringify({
      dependencies: { a: '../../../../stash/impl.tgz', b: '~/t.tgz', c: './v/c.tgz', d: '../../lib', e: 'link:..' },
    });
    expect(localTarballs('app/package.json', bare)).toEqual(['app/v/c.tgz']);
    expect(outsideDependencies('app/package.json', bare)).toEqual([
      '../../../../stash/impl.tgz',
      '~/t.tgz',
      '../../lib',
    ]);
    expect(outsideDependencies('package.json', bare)).toEqual([
      '../../../../stash/impl.tgz',
      '~/t.tgz',
      '../../lib',
      'link:..',
    ]);
  });

  it("npm's lockfile: the tarballs it resolved packages from are read, a folder refuses the cache, a workspace's link does not", () => {
    const lock = (packages: Record<string, unknown>) => JSON.stringify({ lockfileVersion: 3, packages });
    const text = lock({
      '': { name: 'demo' },
      'node_modules/t': { resolved: 'file:vendor/t.tgz' },
      'node_modules/u': { resolved: '../out/u.tgz' },
      'node_modules/r': { resolved: 'https://registry.npmjs.org/r/-/r-1.0.0.tgz' },
      'node_modules/ws': { resolved: 'packages/ws', link: true },
      'node_modules/bad': null,
      'node_modules/n': { resolved: 5 },
      'node_modules/s': 'file:s.tgz',
      'node_modules/wt': { resolved: 'file:ws.tgz', link: true },
    });
    expect(localTarballs('package-lock.json', text)).toEqual(['vendor/t.tgz']);
    expect(outsideDependencies('package-lock.json', text)).toEqual(['../out/u.tgz']);
    expect(lockedFolders(text)).toEqual([]);
    const folder = lock({ 'node_modules/f': { resolved: 'file:tools/f' }, 'node_modules/g': { resolved: './g' } });
    expect(lockedFolders(folder)).toEqual(['file:tools/f', './g']);
    expect(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock'].map(isNpmLockfile)).toEqual([true, true, false]);
    // Read from npm's lockfile only: the same bytes as a yarn.lock are keyed.
    const keyWith = (lockfile: string) =>
      setupKey(
        'npm ci',
        new Map([
          ['package.json', pkg()],
          [lockfile, Buffer.from(folder)],
        ]),
      );
    expect(keyWith('package-lock.json')).toEqual({
      uncached:
        'package-lock.json installs packages from folders of the project (file:tools/f, ./g): their files are not in the key',
    });
    expect(keyWith('yarn.lock')).toHaveProperty('key');
    for (const t of ['{ nope', '{"packages": 5}']) expect(lockedFolders(t)).toEqual([]);
  });

  it("refuses a .yarn folder; a tarball's bytes and the install configuration are in the key", () => {
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
  });
});
