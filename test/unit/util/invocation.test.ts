import { describe, expect, it } from 'vitest';
import { quoteArg, resolveCommands, type InvocationFacts } from '../../../src/util/invocation.js';

/** Facts for a script at `script` (its real path `real`), with `onPath` the `ralphkit` a shell would find. */
function facts(
  script: string | undefined,
  real: Record<string, string>,
  onPath?: string,
  platform: NodeJS.Platform = 'linux',
): InvocationFacts {
  return { script, platform, realpath: (f) => real[f], which: () => onPath };
}

describe('resolveCommands', () => {
  const clone = '/home/me/ralphkit/bin/ralphkit.js';
  it.each([
    [
      'npx from its cache',
      facts('/root/.npm/_npx/cc90/node_modules/.bin/ralphkit', {
        '/root/.npm/_npx/cc90/node_modules/.bin/ralphkit': '/root/.npm/_npx/cc90/node_modules/ralphkit/bin/ralphkit.js',
      }),
      'npx ralphkit',
      'npx ralphkit',
    ],
    [
      'a global install or npm link',
      facts(
        '/usr/local/bin/ralphkit',
        { '/usr/local/bin/ralphkit': clone, '/opt/bin/ralphkit': clone },
        '/opt/bin/ralphkit',
      ),
      'ralphkit',
      'ralphkit',
    ],
    ['node <clone>/bin/ralphkit.js', facts(clone, { [clone]: clone }), `node ${clone}`, `node ${clone}`],
    [
      'node <clone> while another ralphkit is on PATH',
      facts(
        clone,
        { [clone]: clone, '/usr/bin/ralphkit': '/usr/lib/node_modules/ralphkit/bin/ralphkit.js' },
        '/usr/bin/ralphkit',
      ),
      `node ${clone}`,
      `node ${clone}`,
    ],
    [
      'a clone under a folder with a space',
      facts('/home/me/my tools/bin/ralphkit.js', {
        '/home/me/my tools/bin/ralphkit.js': '/home/me/my tools/bin/ralphkit.js',
      }),
      "node '/home/me/my tools/bin/ralphkit.js'",
      "node '/home/me/my tools/bin/ralphkit.js'",
    ],
    [
      'a project dependency',
      facts('/app/node_modules/.bin/ralphkit', {
        '/app/node_modules/.bin/ralphkit': '/app/node_modules/ralphkit/bin/ralphkit.js',
      }),
      'npx ralphkit',
      'npx ralphkit',
    ],
    [
      'the installed engine, ralphkit on PATH',
      facts(
        '/repo/ralph/ralph.mjs',
        { '/repo/ralph/ralph.mjs': '/repo/ralph/ralph.mjs', '/usr/bin/ralphkit': clone },
        '/usr/bin/ralphkit',
      ),
      'ralphkit',
      'node ralph/ralph.mjs',
    ],
    [
      'the installed engine, no ralphkit on PATH',
      facts('/repo/ralph/ralph.mjs', { '/repo/ralph/ralph.mjs': '/repo/ralph/ralph.mjs' }),
      'npx ralphkit',
      'node ralph/ralph.mjs',
    ],
    [
      'the installed engine started by ./ralph/ralph.sh',
      { ...facts('/repo/ralph/ralph.mjs', { '/repo/ralph/ralph.mjs': '/repo/ralph/ralph.mjs' }), launcher: 'ralph.sh' },
      'npx ralphkit',
      './ralph/ralph.sh',
    ],
  ])('%s', (_case, f, cli, loop) => {
    expect(resolveCommands(f)).toEqual({ cli, loop });
  });

  it.each([
    ['/a/b.js', 'linux', '/a/b.js'],
    ["/it's here/b.js", 'linux', `'/it'\\''s here/b.js'`],
    ['C:\\Program Files\\rk\\bin\\ralphkit.js', 'win32', '"C:\\Program Files\\rk\\bin\\ralphkit.js"'],
  ] as const)('quoteArg(%j, %s) → %s', (arg, platform, quoted) => {
    expect(quoteArg(arg, platform)).toBe(quoted);
  });
});
