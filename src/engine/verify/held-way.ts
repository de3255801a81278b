// The folders on the way to what the runner guard holds (runner-guard.ts), and the links among git's logs: recorded
// when the loop starts, put back before anything held is read or written again, so that putting a file back never
// writes through a link the agent put there (its .git/info is its to write, under --sandbox too).
import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';

/**
 * A folder on the way to a held file, as it was when the loop started: a folder, a link (to `target`: a dotfiles
 * manager's ~/.config, say, stays one), or not there (nor anything below it).
 */
export type WayStep =
  | { abs: string; kind: 'dir' | 'missing' | 'other' }
  | { abs: string; kind: 'link'; target: string };

/** The deepest of `roots` that holds `abs` (below it), else the folder `abs` is in: nothing above that is looked at. */
export function rootOf(abs: string, roots: readonly string[]): string {
  const under = roots.filter((r) => {
    const rel = path.relative(r, abs);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel);
  });
  return under.sort((a, b) => b.length - a.length)[0] ?? path.dirname(abs);
}

/** Each folder from below `root` down to `dir`, as it is now; the steps end at the first that is not there. */
export function recordWay(root: string, dir: string): WayStep[] {
  const rel = path.relative(root, dir);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return [];
  const way: WayStep[] = [];
  let at = root;
  for (const part of rel.split(path.sep)) {
    at = path.join(at, part);
    const st = lstatOrNull(at);
    if (!st) {
      way.push({ abs: at, kind: 'missing' });
      break;
    }
    way.push(
      st.isSymbolicLink()
        ? { abs: at, kind: 'link', target: readlinkSync(at) }
        : { abs: at, kind: st.isDirectory() ? 'dir' : 'other' },
    );
  }
  return way;
}

/**
 * The way back as recorded, never followed: a link (or a file) where a folder was is removed and the folder made
 * again, empty (what was held in it is then put back file by file); a link moved is pointed back; a link where nothing
 * was is removed. Returns the steps put back.
 */
export function restoreWay(way: readonly WayStep[]): string[] {
  const fixed: string[] = [];
  for (const step of way) {
    const st = lstatOrNull(step.abs);
    if (step.kind === 'dir') {
      if (!st || st.isDirectory()) {
        if (!st) break; // gone: putBack makes it (and what is below) again
        continue;
      }
      rmSync(step.abs, { force: true });
      mkdirSync(step.abs);
      fixed.push(step.abs);
    } else if (step.kind === 'link') {
      if (st?.isSymbolicLink() && readlinkSync(step.abs) === step.target) continue;
      fixed.push(step.abs);
      // A real folder made in the link's place is left as it is (it may hold files now): nothing below it leads out.
      if (st?.isDirectory()) continue;
      if (st) rmSync(step.abs, { force: true });
      symlinkSync(step.target, step.abs);
    } else {
      if (step.kind === 'missing' && st?.isSymbolicLink()) {
        rmSync(step.abs, { force: true });
        fixed.push(step.abs);
      }
      break;
    }
  }
  return fixed;
}

/** Every symbolic link under `dir` (never followed), with its target. */
export function listLinksUnder(dir: string, out = new Map<string, string>()): Map<string, string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) out.set(abs, readlinkSync(abs));
    else if (entry.isDirectory()) listLinksUnder(abs, out);
  }
  return out;
}

/** Every symbolic link under `dir` that `kept` does not hold with the same target, removed; returns them. */
export function removeLinksUnder(dir: string, kept: ReadonlyMap<string, string>): string[] {
  const removed = [...listLinksUnder(dir)].filter(([abs, target]) => kept.get(abs) !== target).map(([abs]) => abs);
  for (const abs of removed) rmSync(abs, { force: true });
  return removed;
}

function lstatOrNull(abs: string) {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
}
