// Every git command the runner runs goes through runGit: spawn with argument arrays only, never a shell (a
// branchName from prd.json or a path is data, never a command), the runner's hardening (harden.ts) on each call,
// and a timeout so a wedged git cannot hang the loop.
import { gitProgram } from './program.js';
import { hardenedArgs, hardenedGitEnv } from './harden.js';
import {
  parseBatch,
  parseConfigList,
  parseStatusV2,
  type BatchObject,
  type ConfigEntry,
  type DirtyEntry,
  type HeadState,
} from './parse.js';

export type { BatchObject, ConfigEntry, DirtyEntry, HeadState };
import { LoopExit, gitDiskFullError, LOOP_EXIT } from '../errors.js';
import { signalGroup } from '../processes.js';
import { spawnInGroup } from '../group-spawn.js';
import { formatDuration } from '../core/duration.js';
import type { RepoLocation } from '../types.js';

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
async function runGitBytes(
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
  // A git stopped is killed at once (graceMs 0): nothing of a half-done git step is worth waiting for.
  const run = spawnInGroup({
    file: gitProgram(),
    args: hardenedArgs(args),
    cwd,
    env: { ...hardenedGitEnv(process.env), ...options.env },
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
    return { top: lines[0], gitDir: lines[1], commonDir: lines[2] };
  }
  const top = await resolveRepoRoot(cwd);
  return { top, gitDir: await readGitPath(top, '--git-dir'), commonDir: await readGitPath(top, '--git-common-dir') };
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

export async function currentBranch(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headSha(cwd: string): Promise<string | null> {
  const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * currentBranch and headSha, and whether the local branch `other` exists, in one git process: `rev-parse
 * HEAD^{commit} --symbolic-full-name HEAD refs/heads/<other> --` prints the commit, refs/heads/<branch> (HEAD when
 * detached), then the full name `other` resolves to (git's own lookup, which may find another ref by that name: only
 * refs/heads/<other> itself counts), or stops with "bad revision" when nothing does. A branch with no commit yet fails
 * the first: then each is asked on its own.
 */
export async function readHead(cwd: string, other?: string): Promise<HeadState & { otherExists?: boolean }> {
  const asked = other === undefined ? [] : [`refs/heads/${other}`];
  const r = await runGit(cwd, ['rev-parse', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD', ...asked, '--']);
  const lines = r.stdout.split('\n');
  const [sha, name] = lines;
  const parsed = /^[0-9a-f]{40,64}$/.test(sha) && (name === 'HEAD' || name?.startsWith('refs/heads/'));
  const at = { head: sha, branch: name === 'HEAD' ? null : name?.slice('refs/heads/'.length) };
  if (parsed && r.code === 0 && lines.length === 4 + asked.length)
    return { ...at, ...(other === undefined ? {} : { otherExists: lines[2] === asked[0] }) };
  if (parsed && r.code !== 0 && other !== undefined && lines.length === 3 && /bad revision/.test(r.stderr))
    return { ...at, otherExists: false };
  const head = { branch: await currentBranch(cwd), head: await headSha(cwd) };
  return other === undefined ? head : { ...head, otherExists: await branchExists(cwd, other) };
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
 * from `base` (or HEAD). `known`: the branch HEAD is on (null: detached) and whether `branch` exists, when the
 * caller has just read them (git/git.ts readHead).
 */
export async function checkoutBranch(
  cwd: string,
  branch: string,
  base?: string,
  known?: { current: string | null; exists?: boolean },
): Promise<CheckoutResult> {
  if ((known ? known.current : await currentBranch(cwd)) === branch)
    return { message: `on branch ${branch}`, created: false };
  if (known?.exists ?? (await branchExists(cwd, branch))) {
    await gitOrRefuse(cwd, ['checkout', '--quiet', branch, '--'], `cannot check out ${branch}`);
    return { message: `checked out ${branch}`, created: false };
  }
  let start = 'HEAD';
  if (base) {
    const r = await runGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
    if (r.code !== 0)
      throw new LoopExit(
        LOOP_EXIT.refused,
        `baseBranch "${base}" does not name a commit in this repository`,
        'fix baseBranch in prd.json or remove it to branch from HEAD',
      );
    start = r.stdout.trim();
  }
  await gitOrRefuse(cwd, ['checkout', '--quiet', '-b', branch, start, '--'], `cannot create branch ${branch}`);
  return { message: `created ${branch} from ${base ?? 'HEAD'}`, created: true };
}

async function gitOrRefuse(cwd: string, args: string[], what: string): Promise<void> {
  const r = await runGit(cwd, args);
  if (r.code !== 0)
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${what}: ${r.stderr.trim()}`,
      'commit or stash your changes, then start again',
    );
}

/** A file as committed at `rev` (a sha, HEAD, refs/heads/<name>), or null when the revision or the file does not exist. */
export async function readFileAt(cwd: string, rev: string, relPath: string): Promise<string | null> {
  const r = await runGit(cwd, ['cat-file', 'blob', `${rev}:${relPath.split('\\').join('/')}`]);
  return r.code === 0 ? r.stdout : null;
}

/** A file's committed text, with its object name when git said it (cat-file --batch). */
export interface Blob {
  text: string;
  sha?: string;
}

/**
 * Several files as committed (`<rev>:<path>`, as readFileAt takes them) in one git process (`cat-file --batch`); null
 * for each that does not exist or is not a file. A name with a line break in it cannot go to --batch: it is asked alone.
 */
export async function readBlobs(cwd: string, specs: readonly string[]): Promise<Array<Blob | null>> {
  return (await readObjects(cwd, specs)).map((o) =>
    o && o.type === 'blob' ? { text: o.text, ...(o.sha ? { sha: o.sha } : {}) } : null,
  );
}

/** readBlobs for any object (a ref, a commit): null for a name git finds nothing by. */
export async function readObjects(
  cwd: string,
  specs: readonly string[],
): Promise<Array<(Omit<BatchObject, 'sha'> & { sha?: string }) | null>> {
  const batch = specs.filter((s) => !/[\r\n]/.test(s));
  const found = new Map<string, (Omit<BatchObject, 'sha'> & { sha?: string }) | null>();
  if (batch.length) {
    const r = await runGitBytes(cwd, ['cat-file', '--batch'], { input: batch.map((s) => `${s}\n`).join('') });
    const answers = r.code === 0 ? parseBatch(r.bytes, batch.length) : null;
    batch.forEach((spec, i) => found.set(spec, answers ? answers[i] : null));
    if (!answers) for (const spec of batch) found.set(spec, await readBlob(cwd, spec));
  }
  for (const spec of specs) if (!found.has(spec)) found.set(spec, await readBlob(cwd, spec));
  return specs.map((s) => found.get(s) ?? null);
}

async function readBlob(cwd: string, spec: string): Promise<{ type: string; text: string } | null> {
  const r = await runGit(cwd, ['cat-file', 'blob', spec]);
  return r.code === 0 ? { type: 'blob', text: r.stdout } : null;
}

/** Points each ref at its object in one transaction (`update-ref --stdin`): all of them move, or none. */
export async function updateRefs(cwd: string, updates: ReadonlyArray<{ ref: string; sha: string }>): Promise<void> {
  await gitOk(cwd, ['update-ref', '--stdin'], updates.map((u) => `update ${u.ref} ${u.sha}\n`).join(''));
}

/** A file as committed on a local branch, or null when the branch or the file does not exist there. */
export function readFileOnBranch(cwd: string, branch: string, relPath: string): Promise<string | null> {
  return readFileAt(cwd, `refs/heads/${branch}`, relPath);
}

/**
 * Every configuration entry git sees here, with the scope it came from (`config --list --show-scope`), in one git
 * process; included files are not followed (as `git config --local` does not). null when git cannot read it.
 */
export async function readConfigList(cwd: string): Promise<ConfigEntry[] | null> {
  const r = await runGit(cwd, ['config', '-z', '--list', '--show-scope', '--no-includes']);
  return r.code === 0 ? parseConfigList(r.stdout) : null;
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
  const [{ branch, head }, tips] = [await readHead(cwd), await readBranchTips(cwd)];
  return { branch, head, tips };
}

/** `<short sha> <subject>` of the commits reachable from `rev` but from none of `tips` (newest first, at most `limit`). */
export async function readCommitsSince(
  cwd: string,
  rev: string | string[],
  tips: string[],
  limit = 20,
): Promise<string[]> {
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

/**
 * readDirtyEntries and HEAD (readHead's answer) from one `git status` (porcelain v2 with its branch header). `head` is
 * null when the header does not say it plainly: a detached HEAD is "(detached)" there, as a branch may be named too.
 */
export async function readStatusAndHead(top: string): Promise<{ entries: DirtyEntry[]; head: HeadState | null }> {
  return parseStatusV2(
    await gitOk(top, [
      'status',
      '--porcelain=v2',
      '--branch',
      '--no-ahead-behind',
      '-z',
      '--untracked-files=all',
      '--ignore-submodules=none',
    ]),
  );
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
export async function commitRunnerFiles(
  top: string,
  paths: string[],
  message: string,
  dirty?: string[],
): Promise<string | null> {
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
export async function tryCommitRunnerFiles(
  top: string,
  paths: string[],
  message: string,
  warn: (reason: string) => void,
  dirty?: string[],
): Promise<string | null> {
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

// Repositories where git had an identity to commit with: asked once per process (two git processes a commit before).
// A missing one is asked again each time, so an identity configured while the loop runs is used from then on.
const identityFound = new Set<string>();

/** False when git would refuse to commit for want of a user name or email (a fresh CI box). */
async function hasIdentity(top: string): Promise<boolean> {
  if (identityFound.has(top)) return true;
  for (const v of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'])
    if ((await runGit(top, ['var', v])).code !== 0) return false;
  identityFound.add(top);
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
