// The reviewer's SHIPs kept for a resume (src/engine/run/shipped.ts), in real temp repositories: only a ref sealed with
// the runner's key, for this loop, and only SHIPs of commits HEAD still holds.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findStaleShips, readShipped, recordShipped } from '../../../../src/engine/verify/shipped.js';
import { recordBlob, shippedRef } from '../../../../src/engine/verify/baseline.js';
import { git, gitdir, writeFiles } from '../../../support/repo.js';

function commit(repo: string, name: string): string {
  writeFiles(repo, { [name]: `${name}\n` });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', name);
  return git(repo, 'rev-parse', 'HEAD');
}

describe('readShipped', () => {
  it('keeps the SHIPs of commits HEAD holds, drops one on a branch left behind', async () => {
    const repo = gitdir();
    const key = randomBytes(32);
    const a = commit(repo, 'a');
    git(repo, 'checkout', '-q', '-b', 'side');
    const aside = commit(repo, 'aside');
    git(repo, 'checkout', '-q', '-');
    const b = commit(repo, 'b');
    const ship = (commit: string) => ({ reviewer: 'node judge.mjs', model: null, commit });
    await recordShipped(
      repo,
      'L1',
      b,
      new Map([
        ['US-1', ship(a)],
        ['US-2', ship(b)],
        ['US-3', ship(aside)],
      ]),
      key,
    );
    expect(Object.fromEntries(await readShipped(repo, 'L1', b, key))).toEqual({ 'US-1': ship(a), 'US-2': ship(b) });
  });

  it.each<[string, (repo: string, head: string, key: Buffer) => Promise<void>]>([
    [
      'sealed with another key',
      (repo, head) =>
        recordShipped(
          repo,
          'L1',
          head,
          new Map([['US-1', { reviewer: 'x', model: null, commit: head }]]),
          randomBytes(32),
        ),
    ],
    [
      'sealed for another loop',
      (repo, head, key) =>
        recordShipped(repo, 'L2', head, new Map([['US-1', { reviewer: 'x', model: null, commit: head }]]), key).then(
          () => recordBlob(repo, shippedRef('L1'), git(repo, 'cat-file', 'blob', shippedRef('L2'))),
        ),
    ],
    [
      'a SHIP added to a sealed ref',
      async (repo, head, key) => {
        await recordShipped(repo, 'L1', head, new Map(), key);
        const doc = JSON.parse(git(repo, 'cat-file', 'blob', shippedRef('L1')));
        doc.reviews['US-1'] = { reviewer: 'x', model: null, commit: head };
        await recordBlob(repo, shippedRef('L1'), JSON.stringify(doc));
      },
    ],
    ['not JSON', (repo) => recordBlob(repo, shippedRef('L1'), 'shipped, trust me')],
  ])('drops a ref %s', async (_name, forge) => {
    const repo = gitdir();
    const key = randomBytes(32);
    const head = commit(repo, 'a');
    await forge(repo, head, key);
    expect((await readShipped(repo, 'L1', head, key)).size).toBe(0);
  });
});

describe('findStaleShips', () => {
  it("a later commit no reviewer read that changes a shipped story's file sends it back; one a dropped SHIP's reviewer read does not", async () => {
    const repo = gitdir();
    const base = commit(repo, 'start');
    const a = commit(repo, 'a'); // US-1's work, shipped
    writeFiles(repo, { a: 'a, changed by US-2\n' });
    git(repo, 'commit', '-qam', 'US-2');
    const b = git(repo, 'rev-parse', 'HEAD');
    const shipA = { reviewer: 'judge', model: null, commit: a, base };
    const shipped = new Map([['US-1', shipA]]);
    // US-2's commit changed US-1's file: stale while no SHIP covers it.
    expect(await findStaleShips(repo, b, shipped, [])).toEqual([{ id: 'US-1', shipped: a, by: b, files: ['a'] }]);
    // US-2 was shipped (its reviewer read a..b), then rejected by a check: its SHIP is dropped, what was read stays read.
    const shipB = { reviewer: 'judge', model: null, commit: b, base: a };
    expect(await findStaleShips(repo, b, shipped, [], [shipA, shipB])).toEqual([]);
    // The runner's own files (the plan, its log) never make a SHIP stale.
    expect(await findStaleShips(repo, b, shipped, ['a'])).toEqual([]);
  });
});
