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
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { appendOwnFileSync, atomicWriteFileSync } from '../../util/atomic.js';
import { linkOnTheWay, listOrEmpty, lstatOrNull, readBytesOrNull } from '../../util/read.js';
import { gitOk, runGit } from '../git/git.js';
import { gitDiskFullError } from '../errors.js';
import { updateRefsRetrying } from './branch-moves.js';

/**
 * The refs held for the loop's end: every ref but the branches (put back after each agent run, branch-moves.ts), the
 * remote-tracking ones (a push moves them; none comes before a branch in git's lookup of a name) and the runner's own.
 * git looks a name up as refs/<name> before refs/tags/<name> and refs/heads/<name>, so a `refs/ralph/add` the agent
 * makes is what your `git merge ralph/add` takes: no namespace is the agent's.
 */
export function isEndRef(ref: string): boolean {
  // refs/prefetch: what `git maintenance` fetches in the background, like the remote-tracking refs.
  // refs/notes/ralphkit-pending/: a verdict note being written by another loop of the repository (git/commit.ts).
  // refs/remotes/<id> and refs/remotes/<id>/HEAD named like a commit's short id: git takes them for that id before
  // the commit (pass 30 had `git merge <the id the runner printed>` merge a decoy); no remote of yours is named so.
  if (/^refs\/remotes\/[0-9a-f]{4,64}(\/HEAD)?$/i.test(ref)) return true;
  return (
    !/^refs\/(heads|remotes|prefetch|ralphkit|notes\/ralphkit-pending)\//.test(ref) && ref !== 'refs/notes/ralphkit'
  );
}

/**
 * What the loop's end puts back as the loop's start found it: read once (trust.ts), kept in agent-run.json for a
 * resume. The refs named by isEndRef; your stash list, the reflog of refs/stash; and the HEAD reflog of the loop's
 * tree, which `git checkout -` and `@{-1}` read (a line the agent adds there sends you to its commit).
 */
export interface HeldRefs {
  /** Each ref held for the end, and its object. */
  refs: ReadonlyMap<string, string>;
  /** git's common dir: the refs, their locks, the stash list, the files at its top named like a branch. */
  commonDir: string;
  /** The stash reflog's bytes (null: none). */
  stashLog: Buffer | null;
  /** The HEAD reflog of the loop's tree: its file and bytes (null: none). */
  headLog?: { file: string; bytes: Buffer | null };
}

function stashLogPath(commonDir: string): string {
  return path.join(commonDir, 'logs', 'refs', 'stash');
}

/** HeldRefs of `refs` (the start's), with the two reflogs as they are now. */
export function readHeldRefs(refs: ReadonlyMap<string, string>, commonDir: string, ownGitDir?: string): HeldRefs {
  const head = ownGitDir ? path.join(ownGitDir, 'logs', 'HEAD') : null;
  return {
    refs,
    commonDir,
    stashLog: readBytesOrNull(stashLogPath(commonDir)),
    ...(head ? { headLog: { file: head, bytes: readBytesOrNull(head) } } : {}),
  };
}

/**
 * Puts the refs of `top` back as `held` (the loop's start) had them: one added is deleted, one moved is set back;
 * what the agent had made is kept as `refs/ralphkit/loops/<id>/moved/<ref>`, and the files it left at git's top in
 * `keepDir` (the loop's records). Then the two reflogs. Returns what it put back.
 */
export async function restoreEndRefs(top: string, loopId: string, held: HeldRefs, keepDir?: string): Promise<string[]> {
  const out = await gitOk(top, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const shadows = removeRootShadows(held.commonDir, out, keepDir);
  const now = new Map(
    out.split('\n').flatMap((l) => {
      const [ref, sha] = l.trim().split(' ');
      return ref && sha && isEndRef(ref) ? [[ref, sha] as const] : [];
    }),
  );
  const changed = [...now].filter(([ref, sha]) => held.refs.get(ref) !== sha);
  const gone = [...held.refs].filter(([ref]) => !now.has(ref));
  // What the agent made, kept first and on its own: a ref the agent named to clash with a keep-ref (it can read the
  // loop's id) fails that, never the put-back.
  if (changed.length)
    await runGit(top, ['update-ref', '--stdin'], {
      input: changed.map(([ref, sha]) => `update refs/ralphkit/loops/${loopId}/moved/${ref} ${sha}\n`).join(''),
    });
  // Deletes and moves, then the creates: a ref the agent made in the way of one of yours (refs/tags/v1/x where your
  // refs/tags/v1 was) is gone before yours is made again.
  const steps = [
    changed.flatMap(([ref]) => [
      'option no-deref',
      held.refs.has(ref) ? `update ${ref} ${held.refs.get(ref)}` : `delete ${ref}`,
    ]),
    gone.map(([ref, sha]) => `create ${ref} ${sha}`),
  ];
  const refs = [...changed, ...gone].map(([ref]) => ref);
  for (const lines of steps) {
    if (!lines.length) continue;
    const r = await updateRefsRetrying(top, `${lines.join('\n')}\n`, refs, held.commonDir);
    if (r.code !== 0)
      throw (
        gitDiskFullError(top, 'git update-ref', r.stderr) ??
        new Error(`git update-ref --stdin failed: ${r.stderr.trim()}`)
      );
  }
  // After the refs: git's update of refs/stash above wrote a line of its own there.
  const log = [
    ...(restoreLog(stashLogPath(held.commonDir), held.stashLog, keepDir, 'stash-reflog')
      ? ['the stash list (.git/logs/refs/stash)']
      : []),
    ...(held.headLog && (await restoreLastCheckout(top, held.headLog.file, held.headLog.bytes))
      ? ['where git checkout - goes (.git/logs/HEAD)']
      : []),
  ];
  return [...shadows, ...refs, ...log];
}

// What git keeps at its folder's top itself: a branch or tag named like one of these is not shadowed by it.
const GIT_OWN = new Set(
  'HEAD ORIG_HEAD FETCH_HEAD MERGE_HEAD MERGE_MSG MERGE_MODE MERGE_RR CHERRY_PICK_HEAD REVERT_HEAD REBASE_HEAD AUTO_MERGE BISECT_HEAD BISECT_LOG BISECT_START BISECT_TERMS BISECT_NAMES BISECT_EXPECTED_REV BISECT_ANCESTORS_OK SQUASH_MSG TAG_EDITMSG COMMIT_EDITMSG NOTES_MERGE_PARTIAL NOTES_MERGE_REF config config.worktree index description packed-refs shallow commondir gitdir gc.pid gc.log refs logs objects info hooks worktrees modules branches remotes rr-cache lfs sequencer rebase-merge rebase-apply'.split(
    ' ',
  ),
);

/**
 * git looks a name up in its folder first (`.git/<name>`), before refs/: a file `.git/ralph/add` is what your `git
 * merge ralph/add` takes (git reads more than a bare commit id there), and `git for-each-ref` lists no such file. For
 * each branch, tag and remote-tracking name in `refs` (for-each-ref's lines), a file there is moved into `keepDir` (or
 * removed), whatever it holds; names git keeps there itself (GIT_OWN, and the folders under them) are left.
 */
function removeRootShadows(commonDir: string, refs: string, keepDir: string | undefined): string[] {
  const names = new Set<string>();
  for (const line of refs.split('\n')) {
    const m = /^refs\/(?:heads|tags|remotes)\/(\S+) /.exec(line);
    if (m && !GIT_OWN.has(m[1].split('/')[0] ?? '') && !m[1].startsWith('sharedindex.')) names.add(m[1]);
  }
  // And a file named like a commit's short id: git takes `.git/<id>` for that id before the commit itself (pass 30).
  for (const name of listOrEmpty(commonDir)) if (/^[0-9a-f]{4,64}$/i.test(name)) names.add(name);
  const out: string[] = [];
  for (const name of names) {
    const file = path.join(commonDir, name);
    if (!isPlainFileWithin(commonDir, file)) continue;
    const bytes = readBytesOrNull(file) ?? Buffer.alloc(0);
    if (keepDir) {
      mkdirSync(path.join(keepDir, 'shadows'), { recursive: true });
      atomicWriteFileSync(path.join(keepDir, 'shadows', name.replaceAll('/', '%2F')), bytes);
    }
    rmSync(file, { force: true });
    out.push(`.git/${name} (a file in git's folder that your git takes for ${name} before the branch or tag)`);
  }
  return out;
}

/** `file` is a regular file reached from `root` through folders only (no link on the way, nor at it). */
function isPlainFileWithin(root: string, file: string): boolean {
  return !linkOnTheWay(root, file) && lstatOrNull(file)?.isFile() === true;
}

/**
 * A reflog (`<git dir>/logs/HEAD`, `<common dir>/logs/refs/stash`) is written only through git's own folders: a link
 * the agent put at the two above it (the git dir's own, logs/, logs/refs/) is said, not followed.
 */
function refuseLinkAbove(file: string, what: string): void {
  const at = linkOnTheWay(path.dirname(path.dirname(path.dirname(file))), file);
  if (at) throw new Error(`${at} is a link: ${what} was not put back`);
}

/** The branch `git checkout -` would go to after `log` (a HEAD reflog): the "from" of its last checkout line. */
export function lastCheckoutFrom(log: Buffer | null): string | null {
  const lines = log?.toString('utf8').split('\n') ?? [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /\tcheckout: moving from (.+) to \S+$/.exec(lines[i] ?? '');
    if (m?.[1]) return m[1];
  }
  return null;
}

/**
 * `git checkout -` goes where the HEAD reflog's last checkout line came from: a line the agent adds there sends you to
 * its commit. When that differs from the loop's start, a line of the runner's is added (nothing is removed) that sends
 * `-` where it went then, or nowhere new when it went nowhere. The loop's own switches and commits stay in the log.
 */
async function restoreLastCheckout(top: string, file: string, held: Buffer | null): Promise<boolean> {
  const want = lastCheckoutFrom(held);
  if (lastCheckoutFrom(readBytesOrNull(file)) === want) return false;
  const [sha, name] = (await gitOk(top, ['rev-parse', 'HEAD', '--abbrev-ref', 'HEAD'])).trim().split('\n');
  if (!sha || !name) return false;
  refuseLinkAbove(file, 'where git checkout - goes');
  const at = Math.floor(Date.now() / 1000);
  appendOwnFileSync(
    file,
    `${sha} ${sha} ralphkit <ralphkit@localhost> ${at} +0000\tcheckout: moving from ${want ?? name} to ${name}\n`,
  );
  return true;
}

/**
 * A reflog put back as `held` had it (null: none); the agent's kept in `keepDir` (the loop's records) as `keepAs`.
 * Written only through folders of git's: a link the agent put at logs/ or logs/refs is said, not followed.
 */
function restoreLog(file: string, held: Buffer | null, keepDir: string | undefined, keepAs: string): boolean {
  const now = readBytesOrNull(file);
  if (now === null ? held === null : held !== null && now.equals(held)) return false;
  refuseLinkAbove(file, `${path.basename(file)}'s reflog`);
  if (now !== null && keepDir) atomicWriteFileSync(path.join(keepDir, keepAs), now);
  if (held === null) rmSync(file, { force: true });
  // The file itself may be a link: the write's rename replaces it, and writes nothing where it led.
  else atomicWriteFileSync(file, held);
  return true;
}
