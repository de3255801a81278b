// git's record of resolved conflicts, `.git/rr-cache` (git-rerere(1)). With `rerere.enabled` unset, the folder's mere
// existence turns rerere on, and a recorded resolution is written into your files the next time the same conflict
// comes up in a merge of yours. The folder is the agent's to write (under --sandbox too): a resolution planted there
// for the conflict it knows your merge of its branch will meet would put its text into your tree, unasked. So the
// folder is held as the loop found it: one made since is removed, and a record added or changed since is removed
// (git then asks you again, as if it had never been resolved).
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export interface RerereHold {
  dir: string;
  /** Each file of a record (`<conflict id>/<file>`) by identity; null: there was no folder. */
  files: ReadonlyMap<string, string> | null;
}

export function holdRerere(dir: string): RerereHold {
  return { dir, files: listRecords(dir) };
}

/** The records added or changed since the hold removed (the folder itself when there was none); what went, shown. */
export function restoreRerere(hold: RerereHold): string[] {
  const now = listRecords(hold.dir);
  if (now === null) return [];
  if (hold.files === null) {
    rmSync(hold.dir, { recursive: true, force: true });
    return [hold.dir];
  }
  const was = hold.files;
  const records = new Set([...now.keys()].map((key) => key.split('/')[0]));
  const changed = [...records].filter((id) => {
    const mine = [...now].filter(([key]) => key.split('/')[0] === id);
    const before = [...was].filter(([key]) => key.split('/')[0] === id);
    return mine.length !== before.length || mine.some(([key, identity]) => was.get(key) !== identity);
  });
  for (const id of changed) rmSync(path.join(hold.dir, id), { recursive: true, force: true });
  return changed.map((id) => path.join(hold.dir, id));
}

/** `<id>/<file>` → identity (inode, size, change time, type) of each entry two levels down; null when `dir` is not a folder. */
function listRecords(dir: string): Map<string, string> | null {
  let ids: string[];
  try {
    if (!lstatSync(dir).isDirectory()) return new Map([['', 'not a folder']]);
    ids = readdirSync(dir);
  } catch {
    return null;
  }
  const out = new Map<string, string>();
  for (const id of ids) {
    const at = path.join(dir, id);
    out.set(`${id}/`, identity(at));
    let files: string[] = [];
    try {
      if (lstatSync(at).isDirectory()) files = readdirSync(at);
    } catch {
      /* gone meanwhile */
    }
    for (const f of files) out.set(`${id}/${f}`, identity(path.join(at, f)));
  }
  return out;
}

function identity(p: string): string {
  try {
    const s = lstatSync(p);
    return `${s.ino}:${s.size}:${s.ctimeMs}:${s.mode}`;
  } catch {
    return 'gone';
  }
}
