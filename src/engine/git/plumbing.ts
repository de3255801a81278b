// The git operations verification needs, run with execFile (never a shell: paths and messages are data).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { hardenedArgs, hardenedGitEnv } from './harden.js';

// Used only when git has no identity configured (a fresh CI box), so a runner commit never fails for want of one.
const RUNNER_IDENTITY = ['-c', 'user.name=ralphkit', '-c', 'user.email=ralphkit@localhost'];

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** One git command with the runner's hardening (git/harden.ts); `input` goes to its stdin. */
export function gitRun(cwd: string, args: string[], timeoutMs = 60_000, input?: string): Promise<GitOutput> {
  return new Promise((resolve) => {
    const options = { cwd, encoding: 'utf8' as const, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, env: hardenedGitEnv(process.env) };
    const child = execFile('git', hardenedArgs(args), options, (err, stdout, stderr) => {
      // err.code is the exit status, or a string such as ENOENT when git could not be started
      const code = !err ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr: stderr || (err ? err.message : '') });
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(input ?? '');
  });
}

export async function gitOk(cwd: string, args: string[], input?: string): Promise<string> {
  const r = await gitRun(cwd, args, 60_000, input);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

export async function readTopLevel(cwd: string): Promise<string> {
  return (await gitOk(cwd, ['rev-parse', '--show-toplevel'])).trim();
}

/** The sha of HEAD, or null before the first commit. */
export async function readHead(cwd: string): Promise<string | null> {
  const r = await gitRun(cwd, ['rev-parse', '--verify', '-q', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
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
  return readHead(top);
}

/** False when git would refuse to commit for want of a user name or email (a fresh CI box). */
async function hasIdentity(top: string): Promise<boolean> {
  for (const v of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT']) if ((await gitRun(top, ['var', v])).code !== 0) return false;
  return true;
}

/** A detached worktree of HEAD in a temp folder, for checks that must not see ignored build output. */
export async function addWorktree(top: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ralph-verify-'));
  await gitOk(top, ['worktree', 'add', '--detach', '--force', dir, 'HEAD']);
  return dir;
}

export async function removeWorktree(top: string, dir: string): Promise<void> {
  await gitRun(top, ['worktree', 'remove', '--force', '--force', dir]);
  rmSync(dir, { recursive: true, force: true });
  await gitRun(top, ['worktree', 'prune']);
}

/**
 * Attaches `text` to `commit` as a note under refs/notes/ralphkit (the verdict record, SPEC §6), replacing an
 * older note there. Notes commits are the runner's own: no hooks run for them, and no identity is needed.
 */
export async function writeVerdictNote(top: string, commit: string, text: string): Promise<void> {
  const identity = (await hasIdentity(top)) ? [] : RUNNER_IDENTITY;
  await gitOk(top, [...identity, 'notes', '--ref=ralphkit', 'add', '-f', '-F', '-', commit], text);
}

/** The verdict note on `commit`, or null. */
export async function readVerdictNote(top: string, commit: string): Promise<string | null> {
  const r = await gitRun(top, ['notes', '--ref=ralphkit', 'show', commit]);
  return r.code === 0 ? r.stdout : null;
}
