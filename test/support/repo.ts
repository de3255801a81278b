// The one helper that makes temp folders and temp git repositories for tests, removed when the test ends.
import { mkdtempSync, rmSync, realpathSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, type SpawnOptions } from 'node:child_process';
import { onTestFinished } from 'vitest';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/ralphkit.js');
export const FIXTURES = path.join(ROOT, 'test/fixtures');

/** How the built CLI names itself in hints when a test starts it as `node <bin>` and no ralphkit is on PATH. */
export function cliAsTyped(bin = BIN): string {
  return `node ${/^[\w@%+=:,./-]+$/.test(bin) ? bin : `'${bin.replace(/'/g, `'\\''`)}'`}`;
}

/** A fresh empty folder, removed when the current test finishes; `root` '/tmp' for one the sandbox replaces (TMPDIR may be elsewhere). */
export function testdir(prefix = 'ralphkit-', root = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(path.join(root, prefix)));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() }).trim();
}

export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
}

/** A temp git repository on branch `main` with one commit; `files` are written and committed first. */
export function gitdir(files: Record<string, string> = {}): string {
  const dir = testdir('ralphkit-repo-');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFiles(dir, { 'README.md': '# test repo\n', ...files });
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOpts extends SpawnOptions {
  input?: string;
  timeoutMs?: number;
  /** A loop started without --sandbox or --no-sandbox runs under the default (see runnerArgs). */
  sandboxDefault?: boolean;
}

/**
 * The loop's arguments as a test gives them. The sandbox is on by default where bubblewrap works (CI has it), and it
 * shows the agent no folder of /tmp but the repository's and HOME: the fake agents most tests write into a temp
 * folder would be refused there. So a loop whose test names neither --sandbox nor --no-sandbox runs with
 * --no-sandbox; the sandbox's own tests say --sandbox, and a test of the default itself sets `sandboxDefault`. A
 * resume keeps the choice its loop was started with, as a user's does.
 */
export function runnerArgs(cmd: string, args: string[], sandboxDefault = false): string[] {
  // ralph.sh [run] <options>, ralph.sh <other command> (validate, status: no loop), node ralphkit.js|ralph.mjs run ...
  const sh = path.basename(cmd) === 'ralph.sh' ? (args[0] === 'run' ? 1 : /^[a-z]/.test(args[0] ?? '') ? -1 : 0) : -1;
  const loop = sh >= 0 ? sh : (args[0] === BIN || args[0]?.endsWith('ralph.mjs')) && args[1] === 'run' ? 2 : -1;
  if (loop < 0 || sandboxDefault) return args;
  const named = args.some(
    (a) =>
      ['--sandbox', '--no-sandbox', '--resume', '--resume-last', '--help', '-h'].includes(a) ||
      a.startsWith('--resume='),
  );
  return named ? args : [...args.slice(0, loop), '--no-sandbox', ...args.slice(loop)];
}

/** Spawn a command as a user would, collecting output; `input` goes to stdin (which is closed either way). */
export function run(cmd: string, rawArgs: string[], opts: RunOpts = {}): Promise<RunResult> {
  const args = runnerArgs(cmd, rawArgs, opts.sandboxDefault);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      ...opts,
      env: { FORCE_COLOR: '0', NO_COLOR: '1', ...gitEnv(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 150_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A command that exits without reading its input closes the pipe first (EPIPE): that is not a test failure.
    child.stdin!.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin!.end(opts.input ?? '');
  });
}

/** Spawn the built CLI (`bin/ralphkit.js`); run `npm run build` first (npm test does). */
export function runCli(args: string[], opts: RunOpts = {}): Promise<RunResult> {
  return run(process.execPath, [BIN, ...args], opts);
}
