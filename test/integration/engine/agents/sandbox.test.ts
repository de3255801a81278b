// The real /usr/bin/bwrap in temp git repositories: what the agent can write, what it cannot, what survives it.
import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { planAgentEnv } from '../../../../src/engine/agents/env.js';
import { findMarkedProcesses } from '../../../../src/engine/agents/leftovers.js';
import {
  planSandboxCommand,
  probeSandbox,
  readHostSockets,
  readShownRun,
} from '../../../../src/engine/agents/sandbox.js';
import { isGone, killWhenDone, readCmdline, until } from '../../../support/process.js';
import { git, gitdir, gitEnv, ROOT, testdir, writeFiles } from '../../../support/repo.js';

const probe = probeSandbox(process.env);
const skipped = probe.ok ? '' : ` (skipped: ${probe.message})`;

const RUNNER_FILES = {
  'ralph/ralph.mjs': 'engine\n',
  'ralph/ralph.sh': '#!/bin/sh\n',
  'ralph/.ralphkit.json': '{}\n',
  'ralph/prd.json': '{"userStories":[]}\n',
  'ralph/.runs/l1/state.json': '{}\n',
};

interface Sandboxed {
  repo: string;
  token: string;
  /** Resolves when bwrap exits. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  pid: number;
  stdin: NodeJS.WritableStream;
  stdout: () => string;
}

/** Starts `script` under `sh -c` in the planned sandbox, the way the runner starts an agent: marked env, stdin a pipe. */
function startSandboxed(
  script: string,
  options: { repo?: string; network?: boolean; scratch?: string[]; home?: string; input?: string; run?: string[] } = {},
): Sandboxed {
  if (!probe.ok) throw new Error('no sandbox');
  const repo = options.repo ?? gitdir(RUNNER_FILES);
  const gitDir = path.join(repo, '.git');
  const readOnly = [
    'ralph/ralph.mjs',
    'ralph/ralph.sh',
    'ralph/.ralphkit.json',
    'ralph/.runs',
    path.join(gitDir, 'hooks'),
    path.join(gitDir, 'config'),
  ];
  const planned = planSandboxCommand({
    bwrap: probe.bwrap,
    file: 'sh',
    args: ['-c', script],
    repoRoot: repo,
    gitDir,
    readOnly,
    scratch: options.scratch ?? [],
    network: options.network ?? true,
    home: options.home ?? testdir('ralphkit-home-'),
    ...(options.run ? { run: options.run } : {}),
  });
  const { env, token } = planAgentEnv(gitEnv(), {});
  const child = spawn(planned.file, planned.args, { cwd: repo, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  onTestFinished(() => {
    // Only while bwrap runs: once it is reaped its pid, and so its group id, may belong to someone else.
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { repo, token, done, pid: child.pid!, stdin: child.stdin!, stdout: () => stdout };
}

const runSandboxed = (script: string, options: Parameters<typeof startSandboxed>[1] = {}) => {
  const s = startSandboxed(script, { input: '', ...options });
  return s.done.then((r) => ({ ...r, repo: s.repo }));
};

/** A TCP server on 127.0.0.1 (or a Unix socket at `socket`) that counts connections; closed when the test ends. */
async function countingServer(socket?: string): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server: Server = createServer((s) => {
    count++;
    s.end('hi\n');
  });
  await new Promise<void>((resolve) =>
    socket ? server.listen(socket, resolve) : server.listen(0, '127.0.0.1', resolve),
  );
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, connections: () => count };
}

/** A command that connects to the Unix socket `socket` and prints `connected`, or the error's code. */
function connectScript(socket: string): string {
  const js = `const s=require('net').connect('${socket}');s.on('data',()=>{console.log('connected');s.destroy()});s.on('error',(e)=>console.log(e.code))`;
  return `"${process.execPath}" -e "${js}"`;
}

describe.skipIf(!probe.ok)(`sandbox under the real bwrap${skipped}`, () => {
  it("lets the agent write the repository and the plan, not the runner's files, .git/hooks or .git/config", async () => {
    const repo = gitdir(RUNNER_FILES);
    const config = readFileSync(path.join(repo, '.git/config'), 'utf8');
    const r = await runSandboxed(
      [
        'echo work > src.txt && echo wrote-src',
        'echo \'{"userStories":[1]}\' > ralph/prd.json && echo wrote-prd',
        'echo evil > ralph/ralph.mjs || echo refused-engine',
        'echo evil > .git/hooks/post-commit || echo refused-hook',
        'echo "[core] hooksPath = /x" >> .git/config || echo refused-config',
        'echo evil > ralph/.runs/l1/state.json || echo refused-state',
        'git config core.hooksPath /x || echo refused-git-config',
      ].join('\n'),
      { repo },
    );
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'wrote-src',
      'wrote-prd',
      'refused-engine',
      'refused-hook',
      'refused-config',
      'refused-state',
      'refused-git-config',
    ]);
    expect(r.stderr).toContain('Read-only file system');
    expect(readFileSync(path.join(r.repo, 'src.txt'), 'utf8')).toBe('work\n');
    expect(readFileSync(path.join(r.repo, 'ralph/prd.json'), 'utf8')).toBe('{"userStories":[1]}\n');
    expect(readFileSync(path.join(r.repo, 'ralph/ralph.mjs'), 'utf8')).toBe('engine\n');
    expect(readFileSync(path.join(r.repo, 'ralph/.runs/l1/state.json'), 'utf8')).toBe('{}\n');
    expect(existsSync(path.join(r.repo, '.git/hooks/post-commit'))).toBe(false);
    expect(readFileSync(path.join(r.repo, '.git/config'), 'utf8')).toBe(config);
  });

  it('cannot get around the read-only files by renaming, removing or remounting', async () => {
    const r = await runSandboxed(
      [
        'mv ralph ralph-old || echo refused-mv-ralph',
        'mv .git .git-old || echo refused-mv-git',
        'mv .git/hooks .git/hooks-old || echo refused-mv-hooks',
        'rm -f ralph/ralph.mjs || echo refused-rm',
        // As root, only the dropped capabilities stop this.
        'mount -o remount,bind,rw ralph/ralph.mjs 2>/dev/null && echo evil > ralph/ralph.mjs || echo refused-remount',
      ].join('\n'),
    );
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'refused-mv-ralph',
      'refused-mv-git',
      'refused-mv-hooks',
      'refused-rm',
      'refused-remount',
    ]);
    expect(readFileSync(path.join(r.repo, 'ralph/ralph.mjs'), 'utf8')).toBe('engine\n');
    for (const moved of ['ralph-old', '.git-old', '.git/hooks-old'])
      expect(existsSync(path.join(r.repo, moved))).toBe(false);
  });

  it('can still commit with git: objects and refs are writable, only hooks and config are not', async () => {
    const r = await runSandboxed(
      'echo feature > feature.txt && git add feature.txt && git commit -q -m "Agent commit" && echo committed',
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('committed\n');
    expect(git(r.repo, 'log', '-1', '--format=%s')).toBe('Agent commit');
    expect(git(r.repo, 'status', '--porcelain')).toBe('');
  });

  it('commits from a linked worktree, whose git dir lives in the main repository', async () => {
    const main = gitdir(RUNNER_FILES);
    const worktree = path.join(testdir(), 'wt');
    git(main, 'worktree', 'add', '-q', '-b', 'ralph/wt', worktree);
    const gitDir = git(worktree, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    expect(gitDir).toBe(path.join(main, '.git'));
    const planned = planSandboxCommand({
      bwrap: probe.ok ? probe.bwrap : '',
      file: 'sh',
      args: [
        '-c',
        `echo x > wt.txt && git add wt.txt && git commit -q -m "From the worktree" && echo committed\necho evil > ${main}/README.md`,
      ],
      repoRoot: worktree,
      gitDir,
      readOnly: [],
      scratch: [],
      network: true,
    });
    const child = spawn(planned.file, planned.args, {
      cwd: worktree,
      env: gitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.resume();
    await new Promise((resolve) => child.on('close', resolve));
    expect(out).toBe('committed\n');
    // The main repository's working tree stays out of reach (here under the private /tmp, elsewhere read-only).
    expect(readFileSync(path.join(main, 'README.md'), 'utf8')).toBe('# test repo\n');
    expect(git(main, 'log', '-1', '--format=%s', 'ralph/wt')).toBe('From the worktree');
  });

  it('ends everything it started, setsid included, when the command exits (PID namespace)', async () => {
    const s = startSandboxed('setsid sleep 300 </dev/null >/dev/null 2>&1 &\necho ready\nread line');
    await until('the sandbox to start', () => s.stdout() === 'ready\n');
    // From the host the sleeper is found by its marker: the environment passes into the sandbox unchanged.
    const sleeper = await until('the sleeper', () =>
      findMarkedProcesses(s.token).find((pid) => readCmdline(pid) === 'sleep 300'),
    );
    killWhenDone([sleeper]);
    // Two pids (host, sandbox): it runs in a PID namespace of its own.
    expect(readFileSync(`/proc/${sleeper}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+\d+\s*$/m);

    s.stdin.end('go\n');
    expect((await s.done).code).toBe(0);
    await until('the sleeper to be gone', () => isGone(sleeper));
    expect(findMarkedProcesses(s.token)).toEqual([]);
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    "ends everything inside when bwrap's process group is sent %s (the runner's timeout)",
    async (sig) => {
      const s = startSandboxed(
        'setsid sh -c "trap \'\' TERM; exec sleep 300" </dev/null >/dev/null 2>&1 &\necho ready\nexec sleep 301',
      );
      await until('the sandbox to start', () => s.stdout() === 'ready\n');
      const inside = await until('both sleepers', () => {
        const pids = findMarkedProcesses(s.token).filter((pid) => /^sleep 30[01]$/.test(readCmdline(pid)));
        return pids.length === 2 && pids;
      });
      killWhenDone(inside);

      // With --new-session the sandbox is not in bwrap's group: only bwrap gets the signal, and takes the rest down.
      process.kill(-s.pid, sig);
      expect((await s.done).signal).toBe(sig);
      await until('every process inside to be gone', () => inside.every(isGone));
    },
  );

  it('ends everything inside when the runner itself dies (--die-with-parent)', async () => {
    const dir = testdir();
    const repo = gitdir(RUNNER_FILES);
    const planned = planSandboxCommand({
      bwrap: probe.ok ? probe.bwrap : '',
      file: 'sh',
      args: ['-c', 'setsid sleep 300 </dev/null >/dev/null 2>&1 &\nexec sleep 301'],
      repoRoot: repo,
      gitDir: path.join(repo, '.git'),
      readOnly: [],
      scratch: [],
      network: true,
    });
    const { env, token } = planAgentEnv(gitEnv(), {});
    // A stand-in for the runner: bwrap's parent, killed with SIGKILL so that nothing of it can clean up.
    const runner = spawn('sh', ['-c', '"$@" & wait', 'sh', planned.file, ...planned.args], {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    killWhenDone([runner.pid!]);
    const inside = await until('both sleepers', () => {
      const pids = findMarkedProcesses(token).filter((pid) => /^sleep 30[01]$/.test(readCmdline(pid)));
      return pids.length === 2 && pids;
    });
    killWhenDone(inside);

    process.kill(runner.pid!, 'SIGKILL');
    await until('every process inside to be gone', () => inside.every(isGone));
    expect(findMarkedProcesses(token)).toEqual([]);
  });

  it('passes piped stdin through to the command', async () => {
    const r = await runSandboxed('cat', { input: 'the prompt\nline two\n' });
    expect(r.stdout).toBe('the prompt\nline two\n');
    expect(r.code).toBe(0);
  });

  it('lets the agent write its scratch folders and HOME; /tmp is private; the rest is read-only', async () => {
    const scratch = testdir('ralphkit-scratch-');
    const home = testdir('ralphkit-home-');
    const probeName = `ralphkit-private-${process.pid}-${Date.now()}`;
    // Outside every writable place: the ralphkit checkout itself (removed again should the sandbox ever let it through).
    const outside = path.join(ROOT, `.${probeName}`);
    onTestFinished(() => rmSync(outside, { force: true }));
    const r = await runSandboxed(
      [
        `echo s > ${scratch}/note && echo wrote-scratch`,
        `mkdir -p ${home}/.cache && echo h > ${home}/.cache/x && echo wrote-home`,
        `echo t > /tmp/${probeName} && echo wrote-tmp`,
        `echo o > ${outside} 2>/dev/null || echo refused-outside`,
      ].join('\n'),
      { scratch: [scratch], home },
    );
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'wrote-scratch',
      'wrote-home',
      'wrote-tmp',
      'refused-outside',
    ]);
    expect(readFileSync(path.join(scratch, 'note'), 'utf8')).toBe('s\n');
    expect(readFileSync(path.join(home, '.cache/x'), 'utf8')).toBe('h\n');
    expect(existsSync(`/tmp/${probeName}`)).toBe(false);
    expect(existsSync(outside)).toBe(false);
  });

  it.each([
    [false, 'refused', 0],
    [true, 'connected', 1],
  ])("with network %s, a TCP connect to the test's 127.0.0.1 server is %s", async (network, outcome, connections) => {
    const server = await countingServer();
    const connect = `const s=require('net').connect(${server.port},'127.0.0.1');s.on('data',()=>{console.log('connected');s.destroy()});s.on('error',()=>console.log('refused'))`;
    const r = await runSandboxed(`"${process.execPath}" -e "${connect}"`, { network });
    expect(r.stdout).toBe(`${outcome}\n`);
    expect(server.connections()).toBe(connections);
  });

  // A service's socket under /run (the user's D-Bus, docker.sock) starts programs outside the sandbox on request.
  it.runIf(canWriteRun())(
    'a Unix socket under /run is out of reach, with the network or without; RALPH_SANDBOX_SHOW shows its folder again',
    async () => {
      const folder = `/run/ralphkit-test-${process.pid}`;
      mkdirSync(folder, { recursive: true });
      onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
      const socket = path.join(folder, 'service.sock');
      const server = await countingServer(socket);
      const script = connectScript(socket);
      expect((await runSandboxed(script, { network: true })).stdout).toBe('ENOENT\n');
      expect((await runSandboxed(script, { network: false })).stdout).toBe('ENOENT\n');
      expect(server.connections()).toBe(0);
      const run = readShownRun({ RALPH_SANDBOX_SHOW: `relative:/:/etc:${folder}` });
      expect(run).toContain(folder);
      // Only folders under /run: `/` or `/etc` bound again would undo the private /tmp and /run.
      expect(run.filter((p) => !p.startsWith('/run/'))).toEqual([]);
      expect((await runSandboxed(script, { network: false, run })).stdout).toBe('connected\n');
      expect(server.connections()).toBe(1);
    },
  );
});

describe.skipIf(!probe.ok)(`host sockets outside /run, under the real bwrap${skipped}`, () => {
  it("a listening Unix socket the sandbox shows read-only (Docker Desktop's in HOME) is covered: connect() finds no service", async () => {
    const folder = path.join(ROOT, `.sock-${process.pid}`);
    mkdirSync(folder, { recursive: true });
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const socket = path.join(folder, 'docker.sock');
    const server = await countingServer(socket);
    const r = await runSandboxed(connectScript(socket), { network: true });
    expect(r.stdout).toBe('ECONNREFUSED\n');
    expect(server.connections()).toBe(0);
  });
});

describe('readHostSockets', () => {
  it("finds a socket ssh's ControlMaster moved after binding (the kernel's name is gone), and leaves out names that are no socket now", async () => {
    const home = testdir('ralphkit-home-');
    const ssh = path.join(home, '.ssh');
    mkdirSync(ssh);
    const bound = path.join(ssh, 'cm-u@host:22.tmpXYZ');
    const control = path.join(ssh, 'cm-u@host:22');
    await countingServer(bound);
    // As ssh's mux.c does: link the socket to the ControlPath, remove the name it was bound at.
    linkSync(bound, control);
    rmSync(bound);
    // A master at the top of HOME (ControlPath ~/.cm-%r@%h:%p), and Docker Desktop's two levels into a dot folder.
    const top = path.join(home, '.cm-u@host:22');
    linkSync(control, top);
    mkdirSync(path.join(home, '.docker/desktop'), { recursive: true });
    const docker = path.join(home, '.docker/desktop/docker.sock');
    linkSync(control, docker);
    const found = readHostSockets(home);
    expect(found).toEqual(expect.arrayContaining([control, top, docker]));
    expect(found).not.toContain(bound);
    expect(found.every((p) => path.isAbsolute(p))).toBe(true);
  });
});

function canWriteRun(): boolean {
  try {
    accessSync('/run', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

describe('probeSandbox', () => {
  it.runIf(process.platform !== 'linux')('refuses off Linux and says what is then not protected', () => {
    const p = probeSandbox(process.env);
    expect(p).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^--sandbox: the sandbox needs Linux \(bubblewrap\); this is .+$/),
      hint: 'run with --no-sandbox',
    });
  });

  describe.runIf(process.platform === 'linux')('on Linux', () => {
    it('says how to install bubblewrap when it is not on PATH', () => {
      expect(probeSandbox({ PATH: testdir() })).toEqual({
        ok: false,
        message: '--sandbox: bubblewrap (bwrap) is not on PATH',
        hint: expect.stringMatching(/sudo apt-get install bubblewrap.*; or run with --no-sandbox$/),
        // The parts the default's one line is made of (run/sandbox-default.ts).
        reason: 'bubblewrap (bwrap) is not on PATH',
        fix: expect.stringContaining('sudo apt-get install bubblewrap'),
      });
    });

    it("shows bwrap's own error line when it cannot create namespaces", () => {
      const dir = testdir();
      writeFiles(dir, {
        bwrap:
          '#!/bin/sh\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      });
      const fake = path.join(dir, 'bwrap');
      chmodSync(fake, 0o755);
      const p = probeSandbox({ PATH: process.env.PATH, RALPH_BWRAP_BIN: fake });
      expect(p).toMatchObject({
        ok: false,
        message:
          '--sandbox: bubblewrap cannot create its namespaces here (bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.)',
      });
      expect(p.ok ? '' : p.hint).toMatch(/apparmor_restrict_unprivileged_userns|unprivileged_userns_clone/);
    });

    it('says so when RALPH_BWRAP_BIN points at nothing', () => {
      const missing = path.join(testdir(), 'no-bwrap');
      expect(probeSandbox({ PATH: process.env.PATH, RALPH_BWRAP_BIN: missing })).toMatchObject({
        ok: false,
        message: `--sandbox: cannot start ${missing} (ENOENT)`,
      });
    });
  });
});
