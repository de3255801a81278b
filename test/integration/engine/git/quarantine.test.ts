// The objects quarantine of a sandboxed agent (src/engine/git/quarantine.ts) moved into a real store: each object
// hashed against its id, packs through git index-pack, nothing ever written over an object the store holds.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  listQuarantines,
  makeQuarantine,
  migrateQuarantine,
  SANDBOX_STORE,
} from '../../../../src/engine/git/quarantine.js';
import { hashObject } from '../../../../src/engine/git/objects.js';
import { git, gitdir, gitEnv } from '../../../support/repo.js';

const looseBytes = (text: string) =>
  deflateSync(Buffer.concat([Buffer.from(`blob ${Buffer.byteLength(text)}\0`), Buffer.from(text)]), { level: 1 });
const idOf = (text: string) => hashObject('sha1', 'blob', Buffer.from(text));

function putLoose(quarantine: string, oid: string, bytes: Buffer): void {
  mkdirSync(path.join(quarantine, oid.slice(0, 2)), { recursive: true });
  writeFileSync(path.join(quarantine, oid.slice(0, 2), oid.slice(2)), bytes);
}

describe('migrateQuarantine', () => {
  it('takes new loose objects and valid packs; drops forged, linked, FIFO and broken ones; never replaces an object the store has', async () => {
    const repo = gitdir({ 'test/one.test.mjs': 'the real test\n' });
    const store = path.join(repo, '.git/objects');
    const pinned = git(repo, 'rev-parse', 'HEAD:test/one.test.mjs');
    const pinnedFile = path.join(store, pinned.slice(0, 2), pinned.slice(2));
    const pinnedBefore = readFileSync(pinnedFile);
    const q = makeQuarantine(store, '123~456');
    expect(readFileSync(path.join(q, 'info/alternates'), 'utf8')).toBe(`${SANDBOX_STORE}\n`);
    expect(listQuarantines(store)).toEqual([q]);
    // A new object; the pinned test's own bytes again (compressed otherwise); other bytes under the pinned test's id.
    putLoose(q, idOf('new\n'), looseBytes('new\n'));
    putLoose(q, pinned, looseBytes('the real test\n'));
    const forged = idOf('forged target\n');
    putLoose(q, forged, looseBytes('something else\n'));
    const linked = idOf('linked\n');
    mkdirSync(path.join(q, linked.slice(0, 2)), { recursive: true });
    symlinkSync(pinnedFile, path.join(q, linked.slice(0, 2), linked.slice(2)));
    // A FIFO named like an object and one named like a pack: a plain open of either would wait for a writer forever.
    const fifo = idOf('a fifo\n');
    mkdirSync(path.join(q, fifo.slice(0, 2)), { recursive: true });
    execFileSync('mkfifo', [path.join(q, fifo.slice(0, 2), fifo.slice(2)), path.join(q, 'pack', 'pack-fifo.pack')]);
    // A pack of another repository's commit, and a pack that is not one.
    const other = gitdir({ 'other.txt': 'other\n' });
    const tip = git(other, 'rev-parse', 'HEAD');
    const list = git(other, 'rev-list', '--objects', 'HEAD')
      .split('\n')
      .map((l) => l.split(' ')[0])
      .join('\n');
    execFileSync('git', ['pack-objects', path.join(q, 'pack', 'pack')], {
      cwd: other,
      input: `${list}\n`,
      env: gitEnv(),
    });
    writeFileSync(path.join(q, 'pack', 'pack-junk.pack'), 'junk');
    // An object whose header lies about its size, under the id of exactly those bytes (so only the header check refuses
    // it; git would fail to read it later).
    const lying = Buffer.from('blob 99\0short\n');
    const lyingId = createHash('sha1').update(lying).digest('hex');
    putLoose(q, lyingId, deflateSync(lying));
    // Names that are no object's: skipped, not reported (git leaves temporary files in the same places).
    writeFileSync(path.join(q, 'README'), 'not an object\n');
    mkdirSync(path.join(q, 'zz'));
    writeFileSync(path.join(q, 'zz', idOf('zz').slice(2)), looseBytes('zz'));
    writeFileSync(path.join(q, idOf('new\n').slice(0, 2), 'tmp_obj_123'), 'half written');
    writeFileSync(path.join(q, idOf('new\n').slice(0, 2), `${idOf('new\n').slice(2, 39)}G`), looseBytes('new\n'));
    const m = await migrateQuarantine(repo, 'sha1', q, store);
    expect({ loose: m.loose, packs: m.packs }).toEqual({ loose: 1, packs: 1 });
    expect(m.dropped).toHaveLength(6);
    expect(m.dropped).toEqual(
      expect.arrayContaining([
        `${forged}: its content does not hash to its id`,
        `${lyingId}: no valid object header`,
        `${linked}: not a readable file (ENOTFILE)`,
        `${fifo}: not a readable file (ENOTFILE)`,
        'pack-fifo.pack: not a plain file',
        expect.stringMatching(/^pack-junk\.pack: git index-pack refused it \(fatal: /),
      ]),
    );
    expect(readFileSync(pinnedFile)).toEqual(pinnedBefore);
    expect(git(repo, 'cat-file', 'blob', idOf('new\n'))).toBe('new');
    expect(git(repo, 'cat-file', '-t', tip)).toBe('commit');
    expect(git(repo, 'show', `${tip}:other.txt`)).toBe('other');
    expect(existsSync(path.join(store, forged.slice(0, 2), forged.slice(2)))).toBe(false);
    expect(existsSync(q)).toBe(false);
    expect(readdirSync(path.join(store, 'pack')).filter((n) => n.startsWith('tmp_'))).toEqual([]);
    // Nothing of the copies left behind in the store's own folders either.
    expect(
      readdirSync(store, { recursive: true, encoding: 'utf8' }).filter((n) => path.basename(n).startsWith('tmp_obj')),
    ).toEqual([]);
    expect(git(repo, 'fsck', '--no-dangling')).toBe('');
  });

  it('drops a loose object that inflates past the limit (a zlib bomb is never read whole into memory)', async () => {
    const repo = gitdir({ 'a.txt': 'a\n' });
    const store = path.join(repo, '.git/objects');
    const q = makeQuarantine(store, 'bomb');
    const big = 'x'.repeat(4096);
    const small = 'small\n';
    putLoose(q, idOf(big), looseBytes(big));
    putLoose(q, idOf(small), looseBytes(small));
    const m = await migrateQuarantine(repo, 'sha1', q, store, 1024);
    expect(m.loose).toBe(1);
    expect(m.dropped).toEqual([`${idOf(big)}: it inflates to more than 1024 bytes`]);
    expect(git(repo, 'cat-file', 'blob', idOf(small))).toBe('small');
  });
});
