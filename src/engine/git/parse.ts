// Pure readers of git's machine output (no git process here: git/git.ts runs git and hands the bytes over).

export interface HeadState {
  /** The checked-out local branch (without refs/heads/), or null on a detached HEAD. */
  branch: string | null;
  /** The commit HEAD points at, or null on a branch with no commit yet. */
  head: string | null;
}

export interface DirtyEntry {
  path: string;
  /** Not tracked by git at all (`??`): new work, or output nobody listed in .gitignore. */
  untracked: boolean;
}

/** An object `cat-file --batch` found: its name, type and content (as text). */
export interface BatchObject {
  sha: string;
  type: string;
  text: string;
}

/** Pure: a whole object id as git prints it (sha1: 40 hex digits, sha256: 64), with nothing around it. */
export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value);
}

/** Pure: `cat-file --batch` output, `count` answers: each object found, null for a name git found nothing by; null if it does not parse. */
export function parseBatch(out: Buffer, count: number): Array<BatchObject | null> | null {
  const answers: Array<BatchObject | null> = [];
  let at = 0;
  while (answers.length < count) {
    const eol = out.indexOf(10, at);
    if (eol < 0) return null;
    const header = out.subarray(at, eol).toString('utf8');
    at = eol + 1;
    const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
    if (!m) {
      // "<name> missing", "<name> ambiguous", ...: no content follows.
      answers.push(null);
      continue;
    }
    const size = Number(m[3]);
    if (at + size + 1 > out.length || out[at + size] !== 10) return null;
    answers.push({ sha: m[1], type: m[2], text: out.subarray(at, at + size).toString('utf8') });
    at += size + 1;
  }
  return answers;
}

export interface ConfigEntry {
  /** Where git read it: system, global, local, worktree, command. */
  scope: string;
  /** The file git read it from (`--show-origin`), when it was a file. */
  file?: string;
  /** As git names it: section and key lowercased, a subsection as written. */
  key: string;
  /** null for a key written without `=` (a boolean true). */
  value: string | null;
}

/**
 * `git config -z --list --show-scope --show-origin`: scope, origin and entry in turn, each entry `key\nvalue` (just
 * `key` without a value); an origin `file:<path>` names the file (relative paths as git printed them).
 */
export function parseConfigList(out: string): ConfigEntry[] {
  const fields = out.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const nl = fields[i + 2].indexOf('\n');
    const origin = fields[i + 1];
    entries.push({
      scope: fields[i],
      ...(origin.startsWith('file:') ? { file: origin.slice('file:'.length) } : {}),
      key: nl < 0 ? fields[i + 2] : fields[i + 2].slice(0, nl),
      value: nl < 0 ? null : fields[i + 2].slice(nl + 1),
    });
  }
  return entries;
}

// Fields before the path in each kind of porcelain v2 entry: ordinary (1), renamed or copied (2), unmerged (u).
const V2_FIELDS: Record<string, number> = { '1': 8, '2': 9, u: 10 };

/** Pure: `git status --porcelain=v2 --branch -z` read. */
export function parseStatusV2(out: string): { entries: DirtyEntry[]; head: HeadState | null } {
  const fields = out.split('\0');
  const tracked: DirtyEntry[] = [];
  const untracked: DirtyEntry[] = [];
  let oid: string | undefined;
  let name: string | undefined;
  let unmerged = false;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.startsWith('# branch.oid ')) oid = f.slice('# branch.oid '.length);
    else if (f.startsWith('# branch.head ')) name = f.slice('# branch.head '.length);
    else if (f.startsWith('? ')) untracked.push({ path: f.slice(2), untracked: true });
    else if (V2_FIELDS[f[0]] !== undefined && f[1] === ' ') {
      tracked.push({ path: afterFields(f, V2_FIELDS[f[0]]), untracked: false });
      unmerged ||= f[0] === 'u';
      // a rename or copy is followed by its source path
      if (f[0] === '2') i++;
    }
  }
  // v2 lists conflicts after the other changes; v1 (readDirtyEntries) lists them all in git's path order.
  if (unmerged) tracked.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const entries = [...tracked, ...untracked];
  const head = oid === '(initial)' ? null : oid;
  const plain =
    name !== undefined &&
    name !== '(detached)' &&
    (head === null || (head !== undefined && /^[0-9a-f]{40,64}$/.test(head)));
  return { entries, head: plain ? { branch: name!, head: head ?? null } : null };
}

function afterFields(entry: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count; n++) at = entry.indexOf(' ', at) + 1;
  return entry.slice(at);
}
