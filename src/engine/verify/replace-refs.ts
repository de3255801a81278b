// `refs/replace/<id>` has git show another object wherever <id> is named (git-replace(1)). The runner reads none
// (GIT_NO_REPLACE_OBJECTS, git/harden.ts), so what it verifies is the commit itself; your git does read them. An
// adversarial pass replaced the verified commit with a look-alike whose tree held an engine of its own, and your
// merge of the branch brought that engine into your tree, where the next ./ralph/ralph.sh ran it outside the sandbox.
// Tags likewise: git takes a bare name for a tag before a branch, so a tag `ralph/add` the agent makes is what your
// `git merge ralph/add` merges (a pass did, with an engine of its own in it). So the replace refs and tags the loop
// did not start with, or that moved since, are put back when the loop ends, what the agent made kept under the loop's
// refs; under --sandbox refs/replace is read-only to the agent as well (run/sandbox.ts), packed-refs is checked here.
// Your stash too: the runner's own hint for a dirty tree is `git stash -u`, then `git stash pop` after the loop, and
// what the pop applies is `refs/stash` and, entry by entry, its reflog (.git/logs/refs/stash). An agent's stash there
// would put its files (an engine and a manifest to match) into your tree. Both are put back as the loop found them.
import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readBytesOrNull } from '../../util/read.js';
import { gitOk } from '../git/git.js';
import { removeRefLocks } from './branch-moves.js';

/**
 * The refs held for the loop's end: every ref but the branches (put back after each agent run, branch-moves.ts), the
 * remote-tracking ones (a push moves them; none comes before a branch in git's lookup of a name) and the runner's own.
 * git looks a name up as refs/<name> before refs/tags/<name> and refs/heads/<name>, so a `refs/ralph/add` the agent
 * makes is what your `git merge ralph/add` takes: no namespace is the agent's.
 */
export function isEndRef(ref: string): boolean {
  // refs/prefetch: what `git maintenance` fetches in the background, like the remote-tracking refs.
  // refs/notes/ralphkit-pending/: a verdict note being written by another loop of the repository (git/commit.ts).
  return (
    !/^refs\/(heads|remotes|prefetch|ralphkit|notes\/ralphkit-pending)\//.test(ref) && ref !== 'refs/notes/ralphkit'
  );
}

/** Your stash list as the loop found it: the reflog of refs/stash in the common dir (null: none). */
export interface StashLog {
  commonDir: string;
  bytes: Buffer | null;
}

function stashLogPath(commonDir: string): string {
  return path.join(commonDir, 'logs', 'refs', 'stash');
}

export function readStashLog(commonDir: string): StashLog {
  return { commonDir, bytes: readBytesOrNull(stashLogPath(commonDir)) };
}

/**
 * Puts the replace refs and tags of `top` back as `held` (the loop's start) had them: one added is deleted, one moved
 * is set back; what the agent had made is kept as `refs/ralphkit/loops/<id>/moved/<ref>`. Returns the refs put back.
 */
export async function restoreEndRefs(
  top: string,
  loopId: string,
  held: ReadonlyMap<string, string>,
  stash?: StashLog,
  keepDir?: string,
): Promise<string[]> {
  const out = await gitOk(top, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const shadows = stash ? removeRootShadows(stash.commonDir, out, keepDir) : [];
  const now = new Map(
    out.split('\n').flatMap((l) => {
      const [ref, sha] = l.trim().split(' ');
      return ref && sha && isEndRef(ref) ? [[ref, sha] as const] : [];
    }),
  );
  const changed = [...now].filter(([ref, sha]) => held.get(ref) !== sha);
  const gone = [...held].filter(([ref]) => !now.has(ref));
  const lines = [
    ...changed.flatMap(([ref, sha]) => [
      'option no-deref',
      held.has(ref) ? `update ${ref} ${held.get(ref)}` : `delete ${ref}`,
      `update refs/ralphkit/loops/${loopId}/moved/${ref} ${sha}`,
    ]),
    ...gone.map(([ref, sha]) => `create ${ref} ${sha}`),
  ];
  if (lines.length) {
    const input = `${lines.join('\n')}\n`;
    const refs = [...changed, ...gone].map(([ref]) => ref);
    // A lock the agent left on one of them fails the whole transaction: removed (the agent is gone), then once more.
    await gitOk(top, ['update-ref', '--stdin'], input).catch((err: unknown) => {
      if (!stash || !removeRefLocks(stash.commonDir, refs)) throw err;
      return gitOk(top, ['update-ref', '--stdin'], input);
    });
  }
  // After the refs: git's update of refs/stash above wrote a line of its own there.
  const log = stash && restoreStashLog(stash, keepDir) ? ['the stash list (.git/logs/refs/stash)'] : [];
  return [...shadows, ...[...changed, ...gone].map(([ref]) => ref), ...log];
}

/**
 * git looks a name up in its folder first (`.git/<name>`), before refs/: a file `.git/ralph/add` holding a commit id
 * is what your `git merge ralph/add` takes, and `git for-each-ref` lists no such file. For each branch, tag and
 * remote-tracking name in `refs` (for-each-ref's lines), such a file is moved into `keepDir` (or removed). git's own
 * files there (HEAD, ORIG_HEAD, FETCH_HEAD: capitals) are not names a branch can shadow and are left.
 */
function removeRootShadows(commonDir: string, refs: string, keepDir: string | undefined): string[] {
  const names = new Set<string>();
  for (const line of refs.split('\n')) {
    const m = /^refs\/(?:heads|tags|remotes)\/(\S+) /.exec(line);
    if (m && !/^[A-Z_]+$/.test(m[1])) names.add(m[1]);
  }
  const out: string[] = [];
  for (const name of names) {
    const file = path.join(commonDir, name);
    if (!isPlainFileWithin(commonDir, file)) continue;
    const text = readBytesOrNull(file)?.toString('utf8') ?? '';
    if (!/^([0-9a-f]{40}|[0-9a-f]{64}|ref: \S+)\s*$/.test(text)) continue;
    if (keepDir) {
      mkdirSync(path.join(keepDir, 'shadows'), { recursive: true });
      atomicWriteFileSync(path.join(keepDir, 'shadows', name.replaceAll('/', '%2F')), text);
    }
    rmSync(file, { force: true });
    out.push(`.git/${name} (a ref file in git's folder that your git takes for ${name} before the branch or tag)`);
  }
  return out;
}

/** `file` is a regular file reached from `root` through folders only (no link on the way, nor at it). */
function isPlainFileWithin(root: string, file: string): boolean {
  let at = root;
  for (const part of path.relative(root, file).split(path.sep)) {
    at = path.join(at, part);
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink()) return false;
    if (at === file) return st.isFile();
    if (!st.isDirectory()) return false;
  }
  return false;
}

/**
 * The stash reflog put back as `held` had it; the agent's kept in `keepDir` (the loop's records) as `stash-reflog`.
 * Written only through folders of the common dir: a link the agent put at logs/ or logs/refs is said, not followed.
 */
function restoreStashLog(held: StashLog, keepDir: string | undefined): boolean {
  const file = stashLogPath(held.commonDir);
  const now = readBytesOrNull(file);
  if (now === null ? held.bytes === null : held.bytes !== null && now.equals(held.bytes)) return false;
  for (const dir of [path.dirname(path.dirname(file)), path.dirname(file)]) {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) throw new Error(`${dir} is a link: the stash list was not put back`);
  }
  if (now !== null && keepDir) atomicWriteFileSync(path.join(keepDir, 'stash-reflog'), now);
  if (held.bytes === null) rmSync(file, { force: true });
  // The file itself may be a link: the write's rename replaces it, and writes nothing where it led.
  else atomicWriteFileSync(file, held.bytes);
  return true;
}
