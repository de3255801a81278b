// Every git command the runner runs goes through runGit: spawn with argument arrays only, never a shell (a
// branchName from prd.json or a path is data, never a command), the runner's hardening (harden.ts) on each call,
// and a timeout so a wedged git cannot hang the loop. Here too: where a repository is (resolveRepo). What the runner
// asks of git is in head.ts (HEAD, branches, refs), read.ts (committed files, the tree's status, the configuration)
// and commit.ts (the runner's own commits and verdict notes).
import { readdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { gitProgram } from './program.js';
import { hardenedArgs, hardenedGitEnv } from './harden.js';
import { LoopExit, gitDiskFullError, LOOP_EXIT } from '../errors.js';
import { signalGroup } from '../processes.js';
import { spawnInGroup } from '../group-spawn.js';
import { formatDuration } from '../core/duration.js';
import type { RepoLocation } from '../types.js';

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
  input?: string | Buffer;
  timeoutMs?: number;
  /** Set over the hardened environment (GIT_DIR and GIT_COMMON_DIR, where git must not look for them itself). */
  env?: Readonly<Record<string, string>>;
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

/** runGit with git's output as bytes (for `cat-file --batch`, whose sizes count bytes). */
export async function runGitBytes(
  cwd: string,
  args: string[],
  options: GitOptions = {},
): Promise<GitResult & { bytes: Buffer }> {
  const r = await spawnGit(cwd, args, options);
  return { ...r, stdout: r.stdout.toString('utf8'), bytes: r.stdout };
}

/** One git process, hardened, in a group of its own, with a timeout and an output limit; stdout as bytes. */
async function spawnGit(
  cwd: string,
  args: string[],
  options: GitOptions & { maxOutput?: number },
): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const maxOutput = options.maxOutput ?? MAX_OUTPUT;
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const name = `git ${subcommand(args)}`;
  const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], size: 0 };
  const tooMuch = `${name} printed more than ${maxOutput / 1024 / 1024} MiB and was stopped`;
  const collect = (into: Buffer[]) => (chunk: Buffer) => {
    out.size += chunk.length;
    if (out.size > maxOutput) run.stop(tooMuch);
    else into.push(chunk);
  };
  if (subcommand(args) === 'worktree')
    removeLinkedAdminFolders(pinnedGitDirs(cwd)?.commonDir ?? path.join(cwd, '.git'));
  // A git stopped is killed at once (graceMs 0): nothing of a half-done git step is worth waiting for.
  const file = gitProgram();
  const run = spawnInGroup({
    file,
    args: hardenedArgs(args),
    cwd,
    env: { ...hardenedGitEnv(process.env, file), ...pinnedEnv(cwd, args), ...options.env },
    input: options.input,
    timeoutMs,
    graceMs: 0,
    atEnd: 'keep',
    onStdout: collect(out.stdout),
    onStderr: collect(out.stderr),
  });
  const untrack = trackGroup(run.child.pid);
  const exit = await run.done;
  untrack();
  const stdout = Buffer.concat(out.stdout);
  const stderr = Buffer.concat(out.stderr).toString('utf8');
  const stopped =
    exit.stopped === 'timeout'
      ? `${name} did not finish within ${formatDuration(timeoutMs)} and was stopped`
      : exit.stopped;
  // git's exit status; GIT_MISSING when git could not be started; a git stopped (timeout, too much output) or
  // killed by a signal reports as a failure
  const err = exit.spawnError;
  const code = err ? (err.code === 'ENOENT' ? GIT_MISSING : 1) : stopped || exit.code === null ? 1 : exit.code;
  const why = stopped ?? (err ? err.message : exit.signal ? `${name} was killed by ${exit.signal}` : '');
  return {
    code,
    stdout,
    stderr: stopped ? `${stderr}${why}` : stderr || (code ? why || `${name} exited with ${code}` : ''),
  };
}

/**
 * Each work tree's git folders as the runner first found them, before any agent ran there (resolveRepo at the start,
 * readGitDirs of a worktree it made): every later git call of the runner in that tree is told them (GIT_DIR,
 * GIT_COMMON_DIR, GIT_WORK_TREE) and never looks at the tree's `.git` again. That entry is the agent's to write: a
 * linked worktree's `.git` is a file naming the git folder, and one pointed at a repository of the agent's own had the
 * runner verify and record work its branch never got. Keyed by the tree's top as given and as its real path; only a
 * call in the top itself is told (a folder below it may be a checkout of its own, in a TMPDIR inside the project).
 */
const pinnedDirs = new Map<string, Pick<RepoLocation, 'gitDir' | 'commonDir'>>();

function treeKeys(top: string): string[] {
  const keys = [path.resolve(top)];
  try {
    keys.push(realpathSync(top));
  } catch {
    /* gone: its path as given is the key */
  }
  return [...new Set(keys)];
}

/** Holds `top`'s git folders for every later call there (see pinnedDirs). */
export function pinGitDirs(top: string, dirs: Pick<RepoLocation, 'gitDir' | 'commonDir'>): void {
  for (const key of treeKeys(top)) pinnedDirs.set(key, { gitDir: dirs.gitDir, commonDir: dirs.commonDir });
}

/** Lets go of `top`'s folders: the tree was removed, or is about to be made anew there. */
export function unpinGitDirs(top: string): void {
  for (const key of treeKeys(top)) pinnedDirs.delete(key);
}

/** The folders held for the tree whose top is `cwd`, or undefined. */
export function pinnedGitDirs(cwd: string): Pick<RepoLocation, 'gitDir' | 'commonDir'> | undefined {
  return pinnedDirs.get(path.resolve(cwd));
}

/** The variables that tell git a held tree's folders; none for a clone (its own repository is another). */
function pinnedEnv(cwd: string, args: readonly string[]): Record<string, string> {
  const dirs = pinnedGitDirs(cwd);
  if (!dirs || subcommand(args) === 'clone') return {};
  return { GIT_DIR: dirs.gitDir, GIT_COMMON_DIR: dirs.commonDir, GIT_WORK_TREE: path.resolve(cwd) };
}

/**
 * Before a `git worktree` command: an entry of <common>/worktrees that is a link is removed, never followed. The agent
 * can write there (under --sandbox too), and `git worktree prune` deletes an entry it finds no worktree for with
 * everything in it, following a link to a folder of yours to do so.
 */
export function removeLinkedAdminFolders(common: string): string[] {
  const folder = path.join(common, 'worktrees');
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  const removed = entries.filter((e) => e.isSymbolicLink()).map((e) => path.join(folder, e.name));
  for (const link of removed) rmSync(link, { force: true });
  return removed;
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
  if (r.code !== 0)
    throw (
      gitDiskFullError(cwd, `git ${args[0]}`, r.stderr) ?? new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`)
    );
  return r.stdout;
}

export async function readTopLevel(cwd: string): Promise<string> {
  return (await gitOk(cwd, ['rev-parse', '--show-toplevel'])).trim();
}

/** The repository's top folder; refuses (exit 2) outside a git work tree. */
export async function resolveRepoRoot(cwd: string): Promise<string> {
  const r = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  refuseNoRepo(cwd, r);
  return r.stdout.trim();
}

/**
 * Where a command's default `ralph/` paths live: the top of the git repository around `folder`, as the loop and
 * `status` use, so a subfolder finds the plan. Outside a repository (or one git refuses) the folder itself, because
 * reading a plan does not need git.
 */
export async function resolvePlanRootAt(folder: string): Promise<string> {
  try {
    return await resolveRepoRoot(folder);
  } catch (err) {
    if (err instanceof LoopExit) return folder;
    throw err;
  }
}

function refuseNoRepo(cwd: string, r: GitResult): void {
  if (r.code === GIT_MISSING)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `cannot run git: ${r.stderr.trim()}`,
      'install git and make sure it is on your PATH',
    );
  if (r.code !== 0) {
    const refusal = explainGitRefusal(cwd, r.stderr);
    throw new LoopExit(LOOP_EXIT.refused, refusal.message, refusal.hint);
  }
}

// Each repository's hash as the start's rev-parse printed it (objects.ts readObjectFormat asks git only without it).
const printedFormats = new Map<string, 'sha1' | 'sha256'>();

/** The object format `resolveRepo` read for the repository at `top`, if it did. */
export function printedObjectFormat(top: string): 'sha1' | 'sha256' | undefined {
  return printedFormats.get(top);
}

/**
 * Where a repository is: its top folder and git's folders, as git names them (absolute), in one git process
 * (`rev-parse` prints each asked value on a line of its own), which also prints the repository's hash. A path with a
 * line break in it cannot be told apart that way: then each is asked on its own.
 */
export async function resolveRepo(cwd: string): Promise<RepoLocation> {
  const r = await runGit(cwd, [
    'rev-parse',
    '--show-toplevel',
    '--path-format=absolute',
    '--git-dir',
    '--git-common-dir',
    '--show-object-format',
  ]);
  refuseNoRepo(cwd, r);
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  if (lines.length === 4 && lines.every(Boolean)) {
    if (lines[3] === 'sha1' || lines[3] === 'sha256') printedFormats.set(lines[0], lines[3]);
    const repo = { top: lines[0], gitDir: lines[1], commonDir: lines[2] };
    pinGitDirs(repo.top, repo);
    return repo;
  }
  const top = await resolveRepoRoot(cwd);
  return { top, ...(await readGitDirs(top)) };
}

/**
 * git's own folder and its common folder for `cwd` (absolute), in one `rev-parse`; a path with a line break in it
 * cannot be told apart that way, and then each is asked on its own. The first answer for a tree is held for the
 * runner's later calls there (pinGitDirs), and given again without asking.
 */
export async function readGitDirs(cwd: string): Promise<Pick<RepoLocation, 'gitDir' | 'commonDir'>> {
  const held = pinnedGitDirs(cwd);
  if (held) return held;
  const r = await runGit(cwd, ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir']);
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  const dirs =
    r.code === 0 && lines.length === 2 && lines.every(Boolean)
      ? { gitDir: lines[0], commonDir: lines[1] }
      : { gitDir: await readGitPath(cwd, '--git-dir'), commonDir: await readGitPath(cwd, '--git-common-dir') };
  pinGitDirs(cwd, dirs);
  return dirs;
}

/** `git rev-parse --path-format=absolute <flag>` (--git-dir, --git-common-dir). */
export async function readGitPath(cwd: string, flag: string): Promise<string> {
  const r = await runGit(cwd, ['rev-parse', '--path-format=absolute', flag]);
  if (r.code !== 0) throw new Error(`git rev-parse ${flag} failed: ${r.stderr.trim()}`);
  return r.stdout.replace(/\n$/, '');
}

/**
 * Pure: git's complaint about `folder` in words for the user. "Not a repository" gets the usual
 * advice; anything else (dubious ownership, a broken .git) is git's own first line,
 * with the advice git printed after it (e.g. its `git config --global --add safe.directory` command).
 */
export function explainGitRefusal(folder: string, stderr: string): { message: string; hint?: string } {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const first = (lines[0] ?? '').replace(/^(fatal|error):\s*/, '');
  if (first === '' || /not a git repository/i.test(first)) {
    return {
      message: `not a git repository: ${folder}`,
      hint: 'the loop needs git: run `git init` and commit once, then start again',
    };
  }
  const advice = lines.slice(1).join(' ');
  return { message: `git refuses ${folder}: ${first}`, hint: advice || undefined };
}
