// What git says of files: their text as committed (one `cat-file --batch` for several), the work tree's status, the
// paths two commits differ in, and the configuration with the scope of each entry.
import { gitOk, runGit, runGitBytes } from './git.js';
import {
  parseBatch,
  parseConfigList,
  parseStatusV2,
  type BatchObject,
  type ConfigEntry,
  type DirtyEntry,
  type HeadState,
} from './parse.js';

export type { BatchObject, ConfigEntry, DirtyEntry };

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
  return (await readNamedObjects(cwd, specs)).map((o) =>
    o && o.type === 'blob' ? { text: o.text, ...(o.sha ? { sha: o.sha } : {}) } : null,
  );
}

/** readBlobs for any object (a ref, a commit): null for a name git finds nothing by. */
export async function readNamedObjects(
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

/** A file as committed on a local branch, or null when the branch or the file does not exist there. */
export function readFileOnBranch(cwd: string, branch: string, relPath: string): Promise<string | null> {
  return readFileAt(cwd, `refs/heads/${branch}`, relPath);
}

/**
 * Every configuration entry git sees here, with the scope and the file it came from (`config --list --show-scope
 * --show-origin`), included files followed (their entries under the scope of the file that includes them), in one
 * git process. null when git cannot read it.
 */
export async function readConfigList(cwd: string): Promise<ConfigEntry[] | null> {
  const r = await runGit(cwd, ['config', '-z', '--list', '--show-scope', '--show-origin', '--includes']);
  return r.code === 0 ? parseConfigList(r.stdout) : null;
}

/**
 * Paths (relative to the top level) with uncommitted changes: modified, staged, deleted, renamed, and
 * untracked files that are not ignored. Ignored files are not work the agent owes a commit for. A submodule is not
 * looked into (`--ignore-submodules=dirty`: only the commit its gitlink names counts): git would run a status inside
 * it, in a repository the agent made, whose filters then run outside the sandbox.
 */
export async function readDirtyPaths(top: string): Promise<string[]> {
  return (await readDirtyEntries(top)).map((e) => e.path);
}

/** readDirtyPaths, saying which paths git does not track yet. */
export async function readDirtyEntries(top: string): Promise<DirtyEntry[]> {
  const out = await gitOk(top, [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=dirty',
  ]);
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
      '--ignore-submodules=dirty',
    ]),
  );
}

/** Paths (relative to the top level) that differ between two commits; renames count as a delete and an add. */
export async function readChangedPaths(top: string, from: string, to: string): Promise<string[]> {
  const out = await gitOk(top, ['diff', '--name-only', '--no-renames', '-z', from, to, '--']);
  return out.split('\0').filter(Boolean);
}
