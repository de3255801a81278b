// Every git command the runner runs goes through runGit: execFile with argument arrays only, never a shell (a
// branchName from prd.json or a path is data, never a command), the runner's hardening (harden.ts) on each call,
// and a timeout so a wedged git cannot hang the loop.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { hardenedArgs, hardenedGitEnv } from './harden.js';
import { LoopExit, gitDiskFullError } from '../errors.js';
import { signalGroup } from '../processes.js';
import { formatDuration } from '../core/duration.js';

// Used only when git has no identity configured (a fresh CI box), so a runner commit never fails for want of one.
const RUNNER_IDENTITY = ['-c', 'user.name=ralphkit', '-c', 'user.email=ralphkit@localhost'];
// Long enough for a checkout of a large repository, short enough that a git stuck on a lock ends the loop.
const GIT_TIMEOUT_MS = 5 * 60_000;
// What one git command may print (a large `git log`, `ls-tree` of a big repository) before it is stopped.
const MAX_OUTPUT = 64 * 1024 * 1024;
/** The exit code runGit reports when git could not be started at all (not installed, not on PATH). */
export const GIT_MISSING = 127;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitOptions {
  /** Written to git's stdin (e.g. a note's text for `git notes add -F -`). */
  input?: string;
  timeoutMs?: number;
}

// git's path, looked up on the runner's PATH once (not by every spawn, which blocks until the child has tried each
// folder): a `git` the agent drops into an earlier PATH folder later on is never the one the runner runs.
let resolvedGit: { pathVar: string | undefined; file: string } | null = null;

function gitProgram(): string {
  const pathVar = process.env.PATH;
  if (!resolvedGit || resolvedGit.pathVar !== pathVar) resolvedGit = { pathVar, file: findGit(pathVar) };
  return resolvedGit.file;
}

function findGit(pathVar: string | undefined): string {
  // Windows looks up git.exe through PATHEXT; leave that to the system.
  if (process.platform === 'win32') return 'git';
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    // A relative folder is looked up from each call's own cwd: that is the system's to do.
    if (!dir || !path.isAbsolute(dir)) return 'git';
    const file = path.join(dir, 'git');
    try {
      // As the system's own lookup: a file this user may execute (not merely one with some execute bit).
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK);
        return file;
      }
    } catch {
      /* not here */
    }
  }
  return 'git';
}

// Git runs in a process group (and session) of its own: Ctrl-C at a terminal signals the terminal's whole group, and a
// git killed halfway through a merge, a commit or a clone would be read as git's refusal (an "unexpected error",
// exit 1). The runner's own SIGINT handler ends the loop (130) once the git step under way is done. What the group
// no longer gets from the terminal the runner does itself: a git past its timeout is killed with its whole group,
// and one still running when the runner exits goes with it.
const liveGroups = new Set<number>();
let exitHookSet = false;

function trackGroup(pid: number | undefined): () => void {
  if (!pid || process.platform === 'win32') return () => {};
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
  liveGroups.add(pid);
  return () => liveGroups.delete(pid);
}

export async function runGit(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  const r = await spawnGit(cwd, args, options);
  return { ...r, stdout: r.stdout.toString('utf8') };
}

/** One git process, hardened, in a group of its own, with a timeout and an output limit; stdout as bytes. */
function spawnGit(cwd: string, args: string[], options: GitOptions & { maxOutput?: number }): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const maxOutput = options.maxOutput ?? MAX_OUTPUT;
  return new Promise((resolve) => {
    const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
    // spawn, not execFile: execFile leaves `detached` out.
    const child = spawn(gitProgram(), hardenedArgs(args), { cwd, env: hardenedGitEnv(process.env), detached: process.platform !== 'win32', stdio: ['pipe', 'pipe', 'pipe'] });
    const untrack = trackGroup(child.pid);
    const name = `git ${subcommand(args)}`;
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], size: 0 };
    let stopped: string | null = null;
    const stop = (why: string) => {
      stopped ??= why;
      if (process.platform === 'win32') child.kill();
      else signalGroup(child.pid, 'SIGKILL');
    };
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      out.size += chunk.length;
      if (out.size > maxOutput) stop(`${name} printed more than ${maxOutput / 1024 / 1024} MiB and was stopped`);
      else into.push(chunk);
    };
    child.stdout.on('data', collect(out.stdout));
    child.stderr.on('data', collect(out.stderr));
    const timer = setTimeout(() => stop(`${name} did not finish within ${formatDuration(timeoutMs)} and was stopped`), timeoutMs);
    timer.unref();
    let spawnError: NodeJS.ErrnoException | null = null;
    child.on('error', (err: NodeJS.ErrnoException) => (spawnError = err));
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      untrack();
      const stdout = Buffer.concat(out.stdout);
      const stderr = Buffer.concat(out.stderr).toString('utf8');
      // git's exit status; GIT_MISSING when git could not be started; a git stopped (timeout, too much output) or
      // killed by a signal reports as a failure
      const err = spawnError as NodeJS.ErrnoException | null;
      const code = err ? (err.code === 'ENOENT' ? GIT_MISSING : 1) : stopped || status === null ? 1 : status;
      const why = stopped ?? (err ? err.message : signal ? `${name} was killed by ${signal}` : '');
      resolve({ code, stdout, stderr: stopped ? `${stderr}${why}` : stderr || (code ? why || `${name} exited with ${code}` : '') });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** The git subcommand of an argument list, past `-c key=value` settings and other options before it. */
function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return args[0] ?? '';
}

/** runGit for output that is bytes, not text (`cat-file --batch`): its stdout as a Buffer, or an Error with git's message. */
export async function gitBytes(cwd: string, args: string[], input: string): Promise<Buffer> {
  const r = await spawnGit(cwd, args, { input, maxOutput: 1024 * 1024 * 1024 });
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout;
}

/** runGit for a command that must succeed: its stdout, or an Error with git's own message. */
export async function gitOk(cwd: string, args: string[], input?: string): Promise<string> {
  const r = await runGit(cwd, args, { input });
  if (r.code !== 0) throw gitDiskFullError(cwd, `git ${args[0]}`, r.stderr) ?? new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

export async function readTopLevel(cwd: string): Promise<string> {
  return (await gitOk(cwd, ['rev-parse', '--show-toplevel'])).trim();
}

/** The repository's top folder; refuses (exit 2) outside a git work tree. */
export async function resolveRepoRoot(cwd: string): Promise<string> {
  const r = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (r.code === GIT_MISSING) throw new LoopExit(2, `cannot run git: ${r.stderr.trim()}`, 'install git and make sure it is on your PATH');
  if (r.code !== 0) {
    const refusal = explainGitRefusal(cwd, r.stderr);
    throw new LoopExit(2, refusal.message, refusal.hint);
  }
  return r.stdout.trim();
}

/**
 * Pure: git's complaint about `folder` in words for the user. "Not a repository" gets the usual
 * advice; anything else (dubious ownership, a broken .git) is git's own first line,
 * with the advice git printed after it (e.g. its `git config --global --add safe.directory` command).
 */
export function explainGitRefusal(folder: string, stderr: string): { message: string; hint?: string } {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const first = (lines[0] ?? '').replace(/^(fatal|error):\s*/, '');
  if (first === '' || /not a git repository/i.test(first)) {
    return { message: `not a git repository: ${folder}`, hint: 'the loop needs git: run `git init` and commit once, then start again' };
  }
  const advice = lines.slice(1).join(' ');
  return { message: `git refuses ${folder}: ${first}`, hint: advice || undefined };
}

/** True when git accepts `name` as a branch name (`git check-ref-format --branch`). */
export async function isValidBranchName(cwd: string, name: string): Promise<boolean> {
  if (!name || name.startsWith('-')) return false;
  const r = await runGit(cwd, ['check-ref-format', '--branch', name]);
  return r.code === 0;
}

export async function currentBranch(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headSha(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return r.code === 0 ? r.stdout.trim() : null;
}

async function branchExists(cwd: string, name: string): Promise<boolean> {
  return (await runGit(cwd, ['show-ref', '--verify', '--quiet', `refs/heads/${name}`])).code === 0;
}

export interface CheckoutResult {
  /** What was done, for the log. */
  message: string;
  /** True when the branch did not exist and was created here (a rollback deletes it again). */
  created: boolean;
}

/**
 * Puts the work tree on `branch`: nothing when already there, a checkout when it exists, else a new branch
 * from `base` (or HEAD).
 */
export async function checkoutBranch(cwd: string, branch: string, base?: string): Promise<CheckoutResult> {
  if ((await currentBranch(cwd)) === branch) return { message: `on branch ${branch}`, created: false };
  if (await branchExists(cwd, branch)) {
    await gitOrRefuse(cwd, ['checkout', '--quiet', branch, '--'], `cannot check out ${branch}`);
    return { message: `checked out ${branch}`, created: false };
  }
  let start = 'HEAD';
  if (base) {
    const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
    if (r.code !== 0) throw new LoopExit(2, `baseBranch "${base}" does not name a commit in this repository`, 'fix baseBranch in prd.json or remove it to branch from HEAD');
    start = r.stdout.trim();
  }
  await gitOrRefuse(cwd, ['checkout', '--quiet', '-b', branch, start, '--'], `cannot create branch ${branch}`);
  return { message: `created ${branch} from ${base ?? 'HEAD'}`, created: true };
}

async function gitOrRefuse(cwd: string, args: string[], what: string): Promise<void> {
  const r = await runGit(cwd, args);
  if (r.code !== 0) throw new LoopExit(2, `${what}: ${r.stderr.trim()}`, 'commit or stash your changes, then start again');
}

/** A file as committed at `rev` (a sha, HEAD, refs/heads/<name>), or null when the revision or the file does not exist. */
export async function readFileAt(cwd: string, rev: string, relPath: string): Promise<string | null> {
  const r = await runGit(cwd, ['cat-file', 'blob', `${rev}:${relPath.split('\\').join('/')}`]);
  return r.code === 0 ? r.stdout : null;
}

/** A file as committed on a local branch, or null when the branch or the file does not exist there. */
export function readFileOnBranch(cwd: string, branch: string, relPath: string): Promise<string | null> {
  return readFileAt(cwd, `refs/heads/${branch}`, relPath);
}

/** True when commit `older` is reachable from `newer` (`git merge-base --is-ancestor`); false too when either is gone. */
export async function isAncestor(cwd: string, older: string, newer: string): Promise<boolean> {
  return (await runGit(cwd, ['merge-base', '--is-ancestor', older, newer])).code === 0;
}

/** The commit of every local branch, so commits made later can be told apart from those that already existed. */
export async function readBranchTips(cwd: string): Promise<string[]> {
  const r = await runGit(cwd, ['for-each-ref', '--format=%(objectname)', 'refs/heads']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

export interface RefsSnapshot {
  /** The checked-out local branch (without refs/heads/), or null: detached HEAD, or on a branch with no commit yet. */
  branch: string | null;
  /** The commit HEAD points at, or null in a repository without commits. */
  head: string | null;
  /** The objects every local branch points at (readBranchTips). */
  tips: string[];
}

/**
 * currentBranch, headSha and readBranchTips read at one instant, by one git process in the usual case (for-each-ref
 * marks the branch HEAD is on): a detached or unborn HEAD, or a branch that points at no commit, is asked the usual way.
 */
export async function readRefs(cwd: string): Promise<RefsSnapshot> {
  const r = await runGit(cwd, ['for-each-ref', '--format=%(HEAD)%(objecttype) %(objectname) %(refname)', 'refs/heads']);
  if (r.code === 0) {
    const tips: string[] = [];
    let current: { branch: string; head: string } | null = null;
    for (const line of r.stdout.split('\n')) {
      const m = /^([* ])(\S+) (\S+) refs\/heads\/(.+)$/.exec(line);
      if (!m) continue;
      tips.push(m[3]);
      if (m[1] === '*' && m[2] === 'commit') current = { branch: m[4], head: m[3] };
    }
    if (current) return { ...current, tips };
  }
  const [branch, head, tips] = [await currentBranch(cwd), await headSha(cwd), await readBranchTips(cwd)];
  return { branch, head, tips };
}

/** `<short sha> <subject>` of the commits reachable from `rev` but from none of `tips` (newest first, at most `limit`). */
export async function readCommitsSince(cwd: string, rev: string | string[], tips: string[], limit = 20): Promise<string[]> {
  const r = await runGit(cwd, ['log', `-n${limit}`, '--format=%h %s', ...[rev].flat(), '--not', ...tips, '--']);
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

/** Switches back to an existing branch; git refuses (and changes nothing) when the tree is in the way. */
export async function switchToBranch(cwd: string, branch: string): Promise<GitResult> {
  return runGit(cwd, ['checkout', '--quiet', branch, '--']);
}

/**
 * Paths (relative to the top level) with uncommitted changes: modified, staged, deleted, renamed, and
 * untracked files that are not ignored. Ignored files are not work the agent owes a commit for.
 */
export async function readDirtyPaths(top: string): Promise<string[]> {
  return (await readDirtyEntries(top)).map((e) => e.path);
}

export interface DirtyEntry {
  path: string;
  /** Not tracked by git at all (`??`): new work, or output nobody listed in .gitignore. */
  untracked: boolean;
}

/** readDirtyPaths, saying which paths git does not track yet. */
export async function readDirtyEntries(top: string): Promise<DirtyEntry[]> {
  const out = await gitOk(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none']);
  const fields = out.split('\0');
  const entries: DirtyEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    entries.push({ path: f.slice(3), untracked: f.startsWith('??') });
    // a rename or copy is followed by its source path
    if (f[0] === 'R' || f[0] === 'C') i++;
  }
  return entries;
}

/** Paths (relative to the top level) that differ between two commits; renames count as a delete and an add. */
export async function readChangedPaths(top: string, from: string, to: string): Promise<string[]> {
  const out = await gitOk(top, ['diff', '--name-only', '--no-renames', '-z', from, to, '--']);
  return out.split('\0').filter(Boolean);
}

/**
 * Commits exactly `paths` (those with changes) as the runner; returns the new sha, or null if nothing changed.
 * `dirty` is a status the caller read after its last write, to save reading it again.
 * `--only` leaves anything else the agent staged alone; `--no-verify` and no signing, because the user's hooks and
 * passphrase prompts are for their commits, not for the runner's bookkeeping of two text files.
 */
export async function commitRunnerFiles(top: string, paths: string[], message: string, dirty?: string[]): Promise<string | null> {
  const changed = dirty ?? (await readDirtyPaths(top));
  const mine = paths.filter((p) => changed.includes(p));
  if (!mine.length) return null;
  await gitOk(top, ['add', '--', ...mine]);
  const identity = (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
  await gitOk(top, [...identity, 'commit', '-q', '--no-verify', '-m', message, '--only', '--', ...mine]);
  return headSha(top);
}

/**
 * commitRunnerFiles for bookkeeping that must not end the loop: a commit git refuses (a merge in progress, a
 * locked index) is reported through `warn` with git's message and gives null; the files stay written.
 */
export async function tryCommitRunnerFiles(top: string, paths: string[], message: string, warn: (reason: string) => void, dirty?: string[]): Promise<string | null> {
  try {
    return await commitRunnerFiles(top, paths, message, dirty);
  } catch (err) {
    warn((err as Error).message);
    return null;
  }
}

/** The `-c user.name=... -c user.email=...` the runner commits with where git has no identity (a fresh CI box); else none. */
export async function runnerIdentity(top: string): Promise<string[]> {
  return (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
}

/** False when git would refuse to commit for want of a user name or email (a fresh CI box). */
async function hasIdentity(top: string): Promise<boolean> {
  for (const v of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT']) if ((await runGit(top, ['var', v])).code !== 0) return false;
  return true;
}

/**
 * Attaches `text` to `commit` as a note under refs/notes/ralphkit (the verdict record, SPEC §6), replacing an
 * older note there. Notes commits are the runner's own: no hooks run for them, and no identity is needed.
 */
export async function writeVerdictNote(top: string, commit: string, text: string): Promise<void> {
  const identity = (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
  // `git notes add` moves the ref without checking where it was: two loops of one repository (--worktree) writing at
  // once would lose one note. So the note is written on a scratch ref, then swapped in only over the value it was
  // built on, and built again when another loop got there first.
  const scratch = `refs/notes/ralphkit-pending/${process.pid}-${Date.now().toString(36)}`;
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      const old = (await runGit(top, ['rev-parse', '--verify', '--quiet', 'refs/notes/ralphkit'])).stdout.trim();
      await gitOk(top, old ? ['update-ref', scratch, old] : ['update-ref', '-d', scratch]);
      await gitOk(top, [...identity, 'notes', `--ref=${scratch}`, 'add', '-f', '-F', '-', commit], text);
      const next = (await gitOk(top, ['rev-parse', '--verify', scratch])).trim();
      if ((await runGit(top, ['update-ref', 'refs/notes/ralphkit', next, old])).code === 0) return;
    }
    throw new Error('refs/notes/ralphkit kept changing while the note was written (20 attempts)');
  } finally {
    await runGit(top, ['update-ref', '-d', scratch]);
  }
}

