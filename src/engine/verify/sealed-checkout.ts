// A sealed checkout (SPEC §6, "could the agent have written what I am reading?"): git does not check an object
// against its id when it reads one, and without --sandbox the agent can write .git/objects (a loose object rewritten
// in place, a pack of its own looked in first). So before the checkout the commit and its trees are read and hashed
// here (readSealedTree), and after it every file git wrote is hashed against them, no file more or less
// (refuseRewrittenFiles): what the checks read is what any clone of the commit gets.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Pins } from './types.js';
import { gitOk } from '../git/git.js';
import {
  hashPathObject,
  ObjectMismatch,
  readObjectFormat,
  readVerifiedTree,
  type ObjectFormat,
  type TreeEntry,
} from '../git/objects.js';
import { SealBroken } from '../errors.js';
import { readBytesOrNull } from '../../util/read.js';

/**
 * Every file of `commit` (path → mode and blob id) as its own objects say, read in the clone `dir` (borrowing the
 * objects of `top`), the commit and each tree hashed against its id; one that does not hash to it is a rewritten
 * store: SealBroken, naming the folder.
 */
export async function readSealedTree(top: string, dir: string, commit: string): Promise<Map<string, TreeEntry>> {
  try {
    const files = await readVerifiedTree(dir, await readObjectFormat(top), commit);
    // In the index's order (paths byte by byte), as `git ls-files` lists a checkout: folder by folder it is not.
    const order = [...files.keys()].map((file) => ({ file, bytes: Buffer.from(file) }));
    order.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
    return new Map(order.map(({ file }) => [file, files.get(file)!]));
  } catch (err) {
    if (!(err instanceof ObjectMismatch)) throw err;
    const what = err.path ? `${err.path} (${err.oid.slice(0, 7)})` : err.oid.slice(0, 7);
    throw new SealBroken(
      err.problem === 'missing'
        ? `the object store lost an object of ${commit.slice(0, 7)}: ${what} is missing, so no checkout of the commit can be made; the claim is rejected (\`git fsck --full\` names what else is gone)`
        : `the object store was rewritten: ${what} of ${commit.slice(0, 7)} does not hold the bytes its id is the hash of (an object in .git/objects replaced in place, or a pack or alternate store of its own), so the checks would read what no clone of the commit gets; the claim is rejected (\`git fsck --full\` names the damaged objects)`,
    );
  }
}

/**
 * What git wrote into a fresh checkout of `commit` is the commit's files, `files` (read from hashed trees): no file
 * more or less, and each holds its blob. Each file's bytes (a link's target) are hashed here; one that does not match
 * may be git's conversion on the way out (an eol, ident or encoding rule, a filter of yours), so git hashes it again
 * through the checkout's attributes (`hash-object`), where its name can be given to git as it is. A git that read an
 * object from a store the agent rewrote (a loose object replaced in place, a pack of its own that git looked in first)
 * wrote other bytes: SealBroken, naming them.
 */
export async function refuseRewrittenFiles(
  dir: string,
  commit: string,
  files: ReadonlyMap<string, TreeEntry>,
  format: ObjectFormat,
): Promise<void> {
  const found = listCheckoutFiles(Buffer.from(dir));
  const present = new Set(found.map((f) => f.file));
  const extra = found.filter((f) => !files.has(f.file)).map((f) => f.file);
  const missing = [...files].filter(([file, e]) => e.mode !== '160000' && !present.has(file)).map(([file]) => file);
  const suspects = found
    .filter((f) => files.has(f.file) && files.get(f.file)!.mode !== '160000')
    .filter((f) => hashPathObject(format, f.abs) !== files.get(f.file)!.oid);
  // `--stdin-paths` reads a line as a path, and a line that starts with a quote as a C-quoted one: such a name (or
  // one that is no UTF-8, or has a line break) is not given to git, and its bytes must be the blob's. Only a file
  // (not a link, nor a pipe that would hold git) can be one git converted on the way out.
  const viaGit = suspects
    .filter((f) => f.regular && files.get(f.file)!.mode.startsWith('100') && !/^"|[\r\n\uFFFD]/.test(f.file))
    .map((f) => f.file);
  const hashed = viaGit.length
    ? (await gitOk(dir, ['hash-object', '--stdin-paths'], `${viaGit.join('\n')}\n`)).split('\n')
    : [];
  const converted = new Set(viaGit.filter((file, i) => hashed[i] === files.get(file)!.oid));
  const wrong = [
    ...suspects
      .map((f) => f.file)
      .filter((file) => !converted.has(file))
      .map((file) => `${file} (other bytes than ${files.get(file)!.oid.slice(0, 7)})`),
    ...missing.map((file) => `${file} (not written)`),
    ...extra.map((file) => `${file} (not in the commit)`),
  ];
  if (wrong.length)
    throw new SealBroken(
      `the object store was rewritten: the checkout of ${commit.slice(0, 7)} is not the commit's files: ${wrong.slice(0, 5).join(', ')}${wrong.length > 5 ? ` and ${wrong.length - 5} more` : ''} (git read an object the agent replaced under its id: a loose object rewritten in place, or a pack of its own looked in first), so the checks would read what no clone of the commit gets; the claim is rejected (\`git fsck --full\` names the damaged objects)`,
    );
}

/**
 * The files and links of a fresh checkout, its .git aside: each by its repository path (decoded as the tree's names
 * are) and its path on disk as bytes (a name that is no UTF-8 is still found).
 */
function listCheckoutFiles(dir: Buffer, rel = ''): Array<{ file: string; abs: Buffer; regular: boolean }> {
  const out: Array<{ file: string; abs: Buffer; regular: boolean }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const name = entry.name.toString('utf8');
    if (!rel && name === '.git') continue;
    const file = rel ? `${rel}/${name}` : name;
    const abs = Buffer.concat([dir, Buffer.from('/'), entry.name]);
    if (entry.isDirectory()) out.push(...listCheckoutFiles(abs, file));
    else out.push({ file, abs, regular: entry.isFile() });
  }
  return out;
}

/**
 * The pinned files git wrote other than their blob's bytes (a CRLF fixture under an eol rule, an ident), as it wrote
 * them: only where the claimed commit has the pinned blob and mode, and every .gitattributes of the claimed commit is
 * the plan commit's (the rules the agent cannot have changed; the files outside the repository are held). The
 * checkout's files were checked through git against their ids just before (refuseRewrittenFiles).
 */
export function readAsGitWrote(dir: string, files: ReadonlyMap<string, TreeEntry>, pins: Pins): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const rules = (tree: ReadonlyMap<string, TreeEntry>) =>
    [...tree]
      .filter(([file]) => file === '.gitattributes' || file.endsWith('/.gitattributes'))
      .map(([file, e]) => `${file} ${e.mode} ${e.oid}`)
      .sort()
      .join('\n');
  if (rules(files) !== rules(pins.tree)) return out;
  for (const [file, held] of pins.held) {
    const mine = files.get(file);
    const pinned = pins.tree.get(file)!;
    if (!mine || mine.oid !== pinned.oid || mine.mode !== pinned.mode || !pinned.mode.startsWith('100')) continue;
    // A name that is no UTF-8 is not found by its decoded name: its pinned bytes go in (sealPins says if they cannot).
    const bytes = readBytesOrNull(path.join(dir, file));
    if (bytes && !bytes.equals(held)) out.set(file, bytes);
  }
  return out;
}
