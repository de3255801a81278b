import { describe, expect, it } from 'vitest';
import {
  planCoveredSockets,
  planSandboxCommand,
  readShownRun,
  type SandboxRequest,
} from '../../../../src/engine/agents/sandbox.js';

const request = (extra: Partial<SandboxRequest> = {}): SandboxRequest => ({
  bwrap: '/usr/bin/bwrap',
  file: 'claude',
  args: ['-p', 'two words'],
  repoRoot: '/work/app',
  gitDir: '/work/app/.git',
  readOnly: [],
  scratch: [],
  network: true,
  run: ['/run/systemd/resolve'],
  sockets: [],
  ...extra,
});

/** The bind options as `--flag path` (bwrap's SRC and DEST are always the same path here). */
function binds(args: string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if (/^--(ro-)?bind(-try)?$/.test(a) && args[i + 1] !== '/' && !args[i + 1].startsWith('/run/')) {
      expect(args[i + 2]).toBe(args[i + 1]);
      out.push(`${a} ${args[i + 1]}`);
    }
  });
  return out;
}

/** Every bind as `--flag SRC DEST`. */
function triples(args: string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if (/^--(ro-)?bind(-try)?$/.test(a) && args[i + 1] !== '/' && !args[i + 1].startsWith('/run/'))
      out.push(`${a} ${args[i + 1]} ${args[i + 2]}`);
  });
  return out;
}

describe('planSandboxCommand', () => {
  it('runs bwrap with the whole layout, then the command after --', () => {
    expect(planSandboxCommand(request({ readOnly: ['ralph/ralph.mjs'], home: '/home/u', network: false }))).toEqual({
      file: '/usr/bin/bwrap',
      args: [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--tmpfs',
        '/run',
        '--ro-bind-try',
        '/run/systemd/resolve',
        '/run/systemd/resolve',
        '--bind-try',
        '/home/u',
        '/home/u',
        '--bind',
        '/work/app',
        '/work/app',
        '--bind-try',
        '/work/app/.git',
        '/work/app/.git',
        '--bind-try',
        '/work/app/ralph',
        '/work/app/ralph',
        '--ro-bind-try',
        '/work/app/.git/config',
        '/work/app/.git/config',
        '--ro-bind-try',
        '/work/app/.git/hooks',
        '/work/app/.git/hooks',
        '--ro-bind-try',
        '/work/app/ralph/ralph.mjs',
        '/work/app/ralph/ralph.mjs',
        '--cap-drop',
        'ALL',
        '--unshare-pid',
        '--unshare-ipc',
        '--die-with-parent',
        '--new-session',
        '--unshare-net',
        '--chdir',
        '/work/app',
        '--',
        'claude',
        '-p',
        'two words',
      ],
    });
  });

  it.each([true, false])('cuts the network only when network is false (network: %s)', (network) => {
    expect(planSandboxCommand(request({ network })).args.includes('--unshare-net')).toBe(!network);
  });

  it('binds parents before children, so every read-only path comes after the writable folder holding it', () => {
    const { args } = planSandboxCommand(
      request({
        repoRoot: '/home/u/code/app',
        gitDir: '/home/u/code/app/.git',
        home: '/home/u',
        readOnly: ['ralph/ralph.mjs', 'ralph/.runs', '/home/u/code/app/test/unit/a.test.ts'],
        scratch: ['/home/u/code/app/ralph/.runs/l1/scratch', '/var/tmp/s'],
      }),
    );
    const list = binds(args);
    const at = (p: string) => list.findIndex((b) => b.endsWith(` ${p}`));
    for (const [parent, child] of [
      ['/home/u', '/home/u/code/app'],
      ['/home/u/code/app', '/home/u/code/app/ralph/ralph.mjs'],
      ['/home/u/code/app/ralph', '/home/u/code/app/ralph/.runs'],
      ['/home/u/code/app/.git', '/home/u/code/app/.git/hooks'],
      ['/home/u/code/app/ralph/.runs', '/home/u/code/app/ralph/.runs/l1/scratch'],
    ]) {
      expect(at(parent), `${parent} before ${child}`).toBeGreaterThanOrEqual(0);
      expect(at(parent), `${parent} before ${child}`).toBeLessThan(at(child));
    }
    // The tmpfs comes before any bind, or a repository under /tmp would be hidden under it.
    expect(args.indexOf('--tmpfs')).toBeLessThan(args.findIndex((a) => a.startsWith('--bind')));
    // A scratch folder inside a read-only one is writable again; the folder between them stays read-only.
    expect(list).toContain('--bind /home/u/code/app/ralph/.runs/l1/scratch');
    expect(list.some((b) => b.endsWith(' /home/u/code/app/ralph/.runs/l1'))).toBe(false);
  });

  it('binds each folder between a protected path and its writable folder onto itself, so it cannot be renamed', () => {
    const list = binds(
      planSandboxCommand(
        request({
          repoRoot: '/home/u/code/app',
          gitDir: '/home/u/code/app/.git',
          home: '/home/u',
          readOnly: ['test/unit/a.test.ts'],
        }),
      ).args,
    );
    expect(list).toEqual(
      expect.arrayContaining([
        '--bind-try /home/u/code',
        '--bind-try /home/u/code/app/.git',
        '--bind-try /home/u/code/app/test',
        '--bind-try /home/u/code/app/test/unit',
      ]),
    );
    // Without a writable HOME above it, the repository's parent is read-only already: nothing to pin.
    expect(
      binds(planSandboxCommand(request({ repoRoot: '/home/u/code/app', gitDir: '/home/u/code/app/.git' })).args),
    ).not.toContain('--bind-try /home/u/code');
  });

  it('pins the parents of a hidden folder too: renaming ~/.config would carry the tmpfs away from the real key', () => {
    const { args } = planSandboxCommand(request({ home: '/home/u', hidden: ['/home/u/.config/ralphkit'] }));
    expect(binds(args)).toContain('--bind-try /home/u/.config');
    expect(args.indexOf('/home/u/.config')).toBeLessThan(args.lastIndexOf('/home/u/.config/ralphkit'));
  });

  it('makes a git dir outside the repository writable, with its hooks and config read-only', () => {
    const list = binds(planSandboxCommand(request({ repoRoot: '/work/wt', gitDir: '/work/main/.git' })).args);
    expect(list).toEqual([
      '--bind /work/wt',
      '--bind /work/main/.git',
      '--ro-bind-try /work/main/.git/config',
      '--ro-bind-try /work/main/.git/hooks',
    ]);
  });

  it.each<[string | undefined]>([[undefined], ['/'], ['relative/home'], ['']])('leaves HOME %j out', (home) => {
    expect(binds(planSandboxCommand(request({ home })).args)).toEqual([
      '--bind /work/app',
      '--bind-try /work/app/.git',
      '--ro-bind-try /work/app/.git/config',
      '--ro-bind-try /work/app/.git/hooks',
    ]);
  });

  it('keeps a path read-only when it is also listed as scratch, and lists each path once', () => {
    const list = binds(
      planSandboxCommand(
        request({
          readOnly: ['ralph/.runs', '/work/app/ralph/.runs', '.git/hooks'],
          scratch: ['/work/app/ralph/.runs'],
        }),
      ).args,
    );
    expect(list.filter((b) => b.endsWith(' /work/app/ralph/.runs'))).toEqual(['--ro-bind-try /work/app/ralph/.runs']);
    expect(list.filter((b) => b.endsWith(' /work/app/.git/hooks'))).toHaveLength(1);
  });

  it("with a HOME layer: the layer bound writable at HOME, then each of the user's entries read-only at its own place, before the repository inside HOME", () => {
    const { args } = planSandboxCommand(
      request({
        repoRoot: '/home/u/code/app',
        gitDir: '/home/u/code/app/.git',
        home: '/home/u',
        homeLayer: {
          dir: '/tmp/ralph-agent-home-l1-x',
          readOnly: ['/home/u/.local', '/home/u/code', '/home/u/.cache/ms-playwright', '/etc/passwd'],
        },
        hidden: ['/home/u/.config/ralphkit'],
      }),
    );
    const list = triples(args);
    expect(list.slice(0, 5)).toEqual([
      '--bind /tmp/ralph-agent-home-l1-x /home/u',
      '--bind-try /tmp/ralph-agent-home-l1-x/.config /home/u/.config',
      '--ro-bind-try /home/u/.local /home/u/.local',
      '--ro-bind-try /home/u/code /home/u/code',
      '--ro-bind-try /home/u/.cache/ms-playwright /home/u/.cache/ms-playwright',
    ]);
    // The user's HOME itself is never bound, writable or not; an entry outside HOME is ignored.
    expect(list.filter((b) => b.startsWith('--bind /home/u ') || b.endsWith(' /etc/passwd'))).toEqual([]);
    expect(list.indexOf('--ro-bind-try /home/u/code /home/u/code')).toBeLessThan(
      list.indexOf('--bind /home/u/code/app /home/u/code/app'),
    );
    // The key stays hidden, after the binds.
    expect(args.lastIndexOf('/home/u/.config/ralphkit')).toBeGreaterThan(args.indexOf('/home/u/.config'));
  });

  it("with a HOME layer and the repository (or a scratch folder) directly in HOME: that entry stays writable, not one of the user's read-only entries", () => {
    const list = triples(
      planSandboxCommand(
        request({
          repoRoot: '/home/u/app',
          gitDir: '/home/u/app/.git',
          home: '/home/u',
          scratch: ['/home/u/scratch'],
          homeLayer: {
            dir: '/tmp/ralph-agent-home-l1-x',
            readOnly: ['/home/u/.local', '/home/u/app', '/home/u/scratch'],
          },
        }),
      ).args,
    );
    expect(list.filter((b) => / \/home\/u\/(app|scratch)$/.test(b))).toEqual([
      '--bind /home/u/app /home/u/app',
      '--bind /home/u/scratch /home/u/scratch',
    ]);
    expect(list).toContain('--ro-bind-try /home/u/.local /home/u/.local');
  });

  it("with a quarantine: new objects go there (bound over .git/objects), the store is read-only at its alternate's path, refs/ralphkit is read-only and its parent pinned", () => {
    const list = triples(
      planSandboxCommand(
        request({
          objects: { quarantine: '/work/app/.git/objects/tmp_objdir-ralph-1~2-ab', store: '/tmp/ralph-git-objects' },
        }),
      ).args,
    );
    expect(list).toEqual([
      '--ro-bind-try /work/app/.git/objects /tmp/ralph-git-objects',
      '--bind /work/app /work/app',
      '--bind-try /work/app/.git /work/app/.git',
      '--ro-bind-try /work/app/.git/config /work/app/.git/config',
      '--ro-bind-try /work/app/.git/hooks /work/app/.git/hooks',
      '--bind /work/app/.git/objects/tmp_objdir-ralph-1~2-ab /work/app/.git/objects',
      '--bind-try /work/app/.git/refs /work/app/.git/refs',
      '--ro-bind-try /work/app/.git/refs/ralphkit /work/app/.git/refs/ralphkit',
    ]);
  });

  it.each([{ repoRoot: '/' }, { scratch: ['/'] }, { scratch: ['/tmp/..'] }])(
    'refuses to make / writable (%j)',
    (extra) => {
      expect(() => planSandboxCommand(request(extra))).toThrow(/refusing to make \/ writable/);
    },
  );
});

describe('readShownRun', () => {
  it("shows what tools need under /run (PATH folders, gpg-agent's folder, the ssh-agent socket, what RALPH_SANDBOX_SHOW names), nothing outside it", () => {
    const shown = readShownRun({
      PATH: '/run/user/1000/fnm_multishells/42_1/bin:/usr/bin:relative/bin',
      XDG_RUNTIME_DIR: '/run/user/1000',
      SSH_AUTH_SOCK: '/run/user/1000/keyring/ssh',
      RALPH_SANDBOX_SHOW: '/run/postgresql:/:/home/u',
    });
    expect(shown).toEqual(
      expect.arrayContaining([
        '/run/systemd/resolve',
        '/run/nscd',
        '/run/user/1000/fnm_multishells/42_1/bin',
        '/run/user/1000/gnupg',
        '/run/user/1000/keyring/ssh',
        '/run/postgresql',
      ]),
    );
    expect(shown.filter((p) => !p.startsWith('/run/'))).toEqual([]);
    // The user's bus and systemd's socket are not among them.
    expect(shown.some((p) => p === '/run/user/1000' || p.endsWith('/bus'))).toBe(false);
  });

  it('binds a repository under /run (a udisks mount) after the tmpfs there, so it is not hidden', () => {
    const { args } = planSandboxCommand(
      request({ repoRoot: '/run/media/u/disk/app', gitDir: '/run/media/u/disk/app/.git' }),
    );
    const tmpfs = args.findIndex((a, i) => a === '--tmpfs' && args[i + 1] === '/run');
    const repo = args.findIndex((a, i) => a === '--bind' && args[i + 1] === '/run/media/u/disk/app');
    expect(tmpfs).toBeGreaterThan(0);
    expect(repo).toBeGreaterThan(tmpfs);
  });
});

describe('planCoveredSockets', () => {
  it("covers the host's sockets the sandbox shows (HOME's, /var/lib's), not its private or writable places, commit signing's, or what RALPH_SANDBOX_SHOW names", () => {
    const sockets = [
      '/home/u/.docker/desktop/docker.sock',
      '/var/lib/lxd/unix.socket',
      '/var/lib/postgresql/.s.PGSQL.5432',
      '/run/user/1000/bus',
      '/tmp/.X11-unix/X0',
      '/work/app/.dev.sock',
      '/home/u/.gnupg/S.gpg-agent',
      '/home/u/.ssh/agent.sock',
    ];
    const env = { SSH_AUTH_SOCK: '/home/u/.ssh/agent.sock', RALPH_SANDBOX_SHOW: '/var/lib/postgresql' };
    const req = { repoRoot: '/work/app', gitDir: '/work/app/.git', scratch: [] };
    expect(planCoveredSockets(req, sockets, env)).toEqual([
      '/home/u/.docker/desktop/docker.sock',
      '/var/lib/lxd/unix.socket',
    ]);
    const { args } = planSandboxCommand(request({ sockets }));
    expect(args.join(' ')).toContain('--ro-bind-try /dev/null /home/u/.docker/desktop/docker.sock');
  });
});
