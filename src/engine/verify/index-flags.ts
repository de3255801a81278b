// The index as the agent leaves it (SPEC §6, "what the agent can write"). Two of its per-file flags tell git not to
// look at a file: skip-worktree and assume-unchanged. `git status` and `git diff` then show nothing for it, whatever
// the file holds. An adversarial pass set one to hide work from the runner: a committed `a + b` with `return 0` on
// disk and a clean status (exit 0, and the tree you come back to is not the one verified), and one on ralph/prd.json
// made the runner's rejection commit a no-op (the branch kept `"passes": true`). So the index is listed when the loop
// starts (a flag set then is yours: a sparse checkout, a local file kept out of status) and after each agent run that
// changed it; a flag set since is cleared, and the iteration's claims are rejected. The same listing gives the
// gitlinks that verify/nested-git.ts holds.
import {
  chmodSync,
  chownSync,
  copyFileSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import path from 'node:path';
import { runGit, runGitBytes } from '../git/git.js';
import type { Violation } from './types.js';
import { statKey } from '../../util/read.js';
import { hashPathObject } from '../git/objects.js';

/** One listing of the index (`git ls-files --stage -v -z`), and the identity of the index file it was read from. */
export interface IndexView {
  key: string;
  /** The gitlinks (mode 160000) by name; `odd`: those whose path is not UTF-8, as bytes. */
  links: string[];
  odd: Buffer[];
  /** Entries with skip-worktree or assume-unchanged set, by path (latin1 of its bytes: any path round-trips). */
  flagged: ReadonlyMap<string, Flags>;
  /** Every other entry: its path as bytes, and its blob id (distrustStat). */
  files: Array<{ raw: Buffer; oid: string }>;
}

interface Flags {
  skipWorktree: boolean;
  assumeUnchanged: boolean;
}

/** `top`'s index listed, or `last` again when the index file is the one it was read from. */
export async function readIndexView(top: string, ownGitDir: string, last: IndexView | null): Promise<IndexView> {
  const key = statKey(path.join(ownGitDir, 'index'));
  if (last && last.key === key) return last;
  const r = await runGitBytes(top, ['ls-files', '--stage', '-v', '-z']);
  const links: string[] = [];
  const odd: Buffer[] = [];
  const flagged = new Map<string, Flags>();
  const files: IndexView['files'] = [];
  if (r.code === 0)
    for (const line of splitNul(r.bytes)) {
      // `<tag> <mode> <id> <stage>\t<path>`: tag S is skip-worktree, a lowercase tag assume-unchanged (git-ls-files(1)).
      const tag = String.fromCharCode(line[0]);
      const raw = line.subarray(line.indexOf(0x09) + 1);
      const skipWorktree = tag === 'S' || tag === 's';
      const assumeUnchanged = tag !== tag.toUpperCase();
      if (skipWorktree || assumeUnchanged) flagged.set(raw.toString('latin1'), { skipWorktree, assumeUnchanged });
      if (!line.subarray(2, 9).equals(GITLINK)) {
        files.push({ raw: Buffer.from(raw), oid: line.subarray(9, line.indexOf(0x20, 9)).toString('latin1') });
        continue;
      }
      const name = raw.toString('utf8');
      if (Buffer.from(name, 'utf8').equals(raw)) links.push(name);
      else odd.push(Buffer.from(raw));
    }
  return { key, links, odd, flagged, files };
}

/**
 * git tells a file unchanged by the stat data its index holds, and the index is the agent's to write: an adversarial
 * pass committed the fix, wrote a stub over it, recorded the stub's stat data in the index under the committed blob's
 * id, and had a clean git status over a tree that was not the one verified. So after an agent run that changed the
 * index, each tracked file changed since the loop started (`since`, ms) whose bytes are not its entry's blob is made
 * anew: a new inode with the same bytes, mode, owner and times, which no stat data recorded before matches, so git
 * compares its content and shows it (a change time alone is compared to the second by most builds of git). Returns
 * the paths made anew.
 */
export function distrustStat(top: string, view: IndexView, since: number): string[] {
  const root = Buffer.from(`${top}${path.sep}`);
  const out: string[] = [];
  for (const { raw, oid } of view.files) {
    const abs = Buffer.concat([root, raw]);
    let st: Stats;
    try {
      st = lstatSync(abs);
    } catch {
      continue;
    }
    if (st.ctimeMs < since || !folderWay(root, raw)) continue;
    if (hashPathObject(oid.length === 64 ? 'sha256' : 'sha1', abs) === oid) continue;
    try {
      renew(abs, st);
      out.push(raw.toString('utf8'));
    } catch {
      // Gone, or not ours to write: git compares what is there.
    }
  }
  return out;
}

/** Whether each folder on the way from `root` to `raw` is a real folder: nothing is read or written through a link. */
function folderWay(root: Buffer, raw: Buffer): boolean {
  for (let at = raw.indexOf(0x2f); at >= 0; at = raw.indexOf(0x2f, at + 1)) {
    try {
      if (!lstatSync(Buffer.concat([root, raw.subarray(0, at)])).isDirectory()) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** `abs` again under a new inode: a link made again; a file copied beside it and renamed over it, as it was. */
function renew(abs: Buffer, st: Stats): void {
  const twin = Buffer.concat([abs, Buffer.from(`.ralph-renew-${process.pid}`)]);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(abs, { encoding: 'buffer' }), twin);
  else if (st.isFile()) {
    copyFileSync(abs, twin);
    chmodSync(twin, st.mode & 0o7777);
    chownSync(twin, st.uid, st.gid);
    utimesSync(twin, st.atime, st.mtime);
  } else return;
  renameSync(twin, abs);
}

const GITLINK = Buffer.from('160000 ');

/**
 * A split index (`git update-index --split-index`, no configuration needed) keeps its entries in a `sharedindex.*`
 * file, which git touches on every read and which the agent can edit with `.git/index` left as it was: an adversarial
 * pass forged an entry there. So after an agent run a split index is made whole again (one git process, only when
 * there is one), and `.git/index` says what the index holds. A split index of yours is made whole too.
 */
export async function unsplitIndex(top: string, ownGitDir: string): Promise<void> {
  let names: string[] = [];
  try {
    names = readdirSync(ownGitDir);
  } catch {
    return;
  }
  const shared = names.filter((n) => n.startsWith('sharedindex.'));
  if (!shared.length) return;
  // Whole again, the shared files are read by nothing (git would expire them in two weeks): removed, so that the next
  // run costs no git process.
  if ((await runGit(top, ['update-index', '--no-split-index'])).code !== 0) return;
  for (const n of shared) rmSync(path.join(ownGitDir, n), { force: true });
}

/**
 * After an agent run: each flag of `now` that `start` (the loop's first listing) did not have is cleared in `top`'s
 * index. Returns the violation that rejects the iteration's claims, or undefined when none was set.
 */
export async function clearNewFlags(
  top: string,
  start: ReadonlyMap<string, Flags>,
  now: IndexView,
): Promise<Violation | undefined> {
  const added = [...now.flagged].filter(
    ([file, f]) =>
      (f.skipWorktree && !start.get(file)?.skipWorktree) || (f.assumeUnchanged && !start.get(file)?.assumeUnchanged),
  );
  if (!added.length) return undefined;
  const shown = added.map(([file]) => Buffer.from(file, 'latin1').toString('utf8'));
  // One flag per git process: update-index applies only the last of --no-skip-worktree and --no-assume-unchanged.
  const failed: string[] = [];
  for (const [flag, has] of [
    ['--no-skip-worktree', (f: Flags) => f.skipWorktree],
    ['--no-assume-unchanged', (f: Flags) => f.assumeUnchanged],
  ] as const) {
    const files = added.filter(([, f]) => has(f)).map(([file]) => Buffer.from(file, 'latin1'));
    if (!files.length) continue;
    const input = Buffer.concat(files.flatMap((f) => [f, Buffer.from([0])]));
    const r = await runGit(top, ['update-index', flag, '-z', '--stdin'], { input });
    if (r.code !== 0) failed.push(`${flag}: ${r.stderr.trim()}`);
  }
  const kinds = [
    ...(added.some(([, f]) => f.skipWorktree) ? ['skip-worktree'] : []),
    ...(added.some(([, f]) => f.assumeUnchanged) ? ['assume-unchanged'] : []),
  ].join(' and ');
  return {
    reason: `the agent set ${kinds} on ${shown.join(', ')} in the index, which hides a file's changes from git status and git diff (and from the runner's check for uncommitted work): ${
      failed.length
        ? `clearing them failed (${failed.join('; ')}); clear them yourself: git update-index --no-skip-worktree --no-assume-unchanged -- <file>`
        : 'cleared'
    }`,
    files: [],
  };
}

function splitNul(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let from = 0; from < bytes.length; ) {
    const at = bytes.indexOf(0, from);
    const end = at < 0 ? bytes.length : at;
    if (end > from) out.push(bytes.subarray(from, end));
    from = end + 1;
  }
  return out;
}
