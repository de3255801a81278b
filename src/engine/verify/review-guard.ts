// The reviewer works in a throwaway clone, but it runs with the user's rights and could still reach the real
// repository (the clone's alternates file names its objects folder). So the repository is read before the review and
// put back after it: every ref and HEAD, the working tree as git status sees it (files the reviewer added are removed,
// tracked files it changed are checked out again, files that were already dirty get their bytes back). What changed
// is returned, and a review that changed anything is not a SHIP (review.ts).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { gitOk, runGit } from '../git/git.js';
import { readDirtyEntries } from '../git/read.js';
import { HeldFiles } from './held-files.js';

export interface RepoSnapshot {
  head: string;
  refs: Map<string, string>;
  dirty: Set<string>;
  held: HeldFiles;
}

/** HEAD (the branch it names, or its commit), every ref, and the bytes of the files already dirty (and `extra`). */
export async function snapshotRepo(top: string, extra: readonly string[]): Promise<RepoSnapshot> {
  const dirty = new Set((await readDirtyEntries(top)).map((e) => e.path));
  const held = new HeldFiles();
  held.hold([...[...dirty].map((p) => path.join(top, p)), ...extra]);
  return { head: await readHead(top), refs: await readAllRefs(top), dirty, held };
}

/** Puts back whatever differs from `snap`; returns what had changed, in words (empty: nothing did). */
export async function restoreRepo(top: string, snap: RepoSnapshot): Promise<string[]> {
  const changed = await restoreRefs(top, snap);
  const head = await readHead(top);
  if (head !== snap.head) {
    changed.push(`HEAD (${head.replace(/^ref: /, '')})`);
    if (snap.head.startsWith('ref: ')) await gitOk(top, ['symbolic-ref', 'HEAD', snap.head.slice(5)]);
    else await gitOk(top, ['update-ref', '--no-deref', 'HEAD', snap.head]);
  }
  changed.push(...(await restoreTree(top, snap)));
  return changed;
}

async function readHead(top: string): Promise<string> {
  const r = await runGit(top, ['symbolic-ref', '--quiet', 'HEAD']);
  if (r.code === 0) return `ref: ${r.stdout.trim()}`;
  return (await gitOk(top, ['rev-parse', '--verify', 'HEAD'])).trim();
}

async function readAllRefs(top: string): Promise<Map<string, string>> {
  const out = await gitOk(top, ['for-each-ref', '--format=%(objectname) %(refname)']);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))]),
  );
}

async function restoreRefs(top: string, snap: RepoSnapshot): Promise<string[]> {
  const now = await readAllRefs(top);
  const changed: string[] = [];
  for (const [ref, sha] of now) {
    if (snap.refs.get(ref) === sha) continue;
    changed.push(ref);
    if (snap.refs.has(ref)) await gitOk(top, ['update-ref', ref, snap.refs.get(ref)!]);
    else await gitOk(top, ['update-ref', '-d', ref]);
  }
  for (const [ref, sha] of snap.refs) {
    if (now.has(ref)) continue;
    changed.push(ref);
    await gitOk(top, ['update-ref', ref, sha]);
  }
  return changed;
}

async function restoreTree(top: string, snap: RepoSnapshot): Promise<string[]> {
  const added = (await readDirtyEntries(top)).filter((e) => !snap.dirty.has(e.path));
  const staged = added.filter((e) => !e.untracked).map((e) => e.path);
  // The index first (a file the reviewer staged that HEAD does not have becomes untracked), then the files.
  if (staged.length)
    await gitOk(
      top,
      ['--literal-pathspecs', 'reset', '-q', 'HEAD', '--pathspec-from-file=-', '--pathspec-file-nul'],
      staged.join('\0'),
    );
  const left = new Set(added.map((e) => e.path));
  const now = (await readDirtyEntries(top)).filter((e) => left.has(e.path));
  for (const e of now) if (e.untracked) rmSync(path.join(top, e.path), { force: true, recursive: true });
  const tracked = now.filter((e) => !e.untracked).map((e) => e.path);
  if (tracked.length)
    await gitOk(
      top,
      ['--literal-pathspecs', 'checkout', 'HEAD', '--pathspec-from-file=-', '--pathspec-file-nul'],
      tracked.join('\0'),
    );
  const rewritten = snap.held.restore().map((f) => path.relative(top, f).split(path.sep).join('/'));
  return [...added.map((e) => e.path), ...rewritten.filter((p) => !added.some((e) => e.path === p))];
}
