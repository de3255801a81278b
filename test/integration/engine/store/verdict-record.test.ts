// Reading the sealed verdict records (src/engine/store/verdict-record.ts) back from refs/notes/ralphkit, and what
// `status` and the dashboard then count, in real temp repositories. A record counts only with its seal, on its commit.
import { chmodSync, copyFileSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitdir, testdir, writeFiles } from '../../../support/repo.js';
import {
  editNote,
  keyEnv,
  readNote,
  removeNote,
  sealNote,
  useKeyEnv,
  writeNote,
} from '../../../support/verdict-note.js';
import {
  keyProblem,
  parseCatFileBatch,
  readKey,
  readVerdictRecordsSync,
} from '../../../../src/engine/store/verdict-record.js';
import { readLoopSummaries } from '../../../../src/engine/store/summaries.js';
import { resolveViewPaths } from '../../../../src/view/snapshot.js';
import { readPrdSnapshot } from '../../../../src/view/prd-body.js';
import { commitPlan, plan, writeLedger, writeLoop, writePlan } from '../../../support/view-fixtures.js';

function commit(repo: string, name: string): string {
  writeFiles(repo, { [name]: `${name}\n` });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', name);
  return git(repo, 'rev-parse', 'HEAD');
}

async function records(repo: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return Object.fromEntries(readVerdictRecordsSync(repo, env));
}

describe('readVerdictRecordsSync', () => {
  it('reads every sealed note in one batch, the newest record per loop, story ids of any script', async () => {
    const repo = gitdir();
    const env = keyEnv();
    const c1 = commit(repo, 'a');
    const c2 = commit(repo, 'b');
    const c3 = commit(repo, 'c');
    sealNote(repo, { loop: 'L1', commit: c1, time: '2026-01-01T00:00:00.000Z', stories: { 'US-1': 'verified' } }, env);
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: c2,
        time: '2026-01-02T00:00:00.000Z',
        stories: { 'US-1': 'verified', 'US-2': 'unverified' },
      },
      env,
    );
    sealNote(
      repo,
      {
        loop: 'L2',
        commit: c3,
        time: '2026-01-03T00:00:00.000Z',
        stories: { 'ÜS-ß→3': 'verified', 'US-4': 'verified' },
      },
      env,
    );
    const got = await records(repo, env);
    expect(Object.keys(got).sort()).toEqual(['L1', 'L2']);
    expect(got.L1).toMatchObject({ commit: c2, stories: { 'US-1': 'verified', 'US-2': 'unverified' } });
    expect(got.L2).toMatchObject({ commit: c3, stories: { 'ÜS-ß→3': 'verified', 'US-4': 'verified' } });
  });

  it.each<[string, (repo: string, c: string, other: string) => void]>([
    [
      'a story changed to verified, the old mac kept',
      (repo, c) => editNote(repo, c, (d) => (d.stories['US-2'] = 'verified')),
    ],
    ['a story added', (repo, c) => editNote(repo, c, (d) => (d.stories['US-9'] = 'verified'))],
    ['the loop renamed', (repo, c) => editNote(repo, c, (d) => (d.loop = 'L9'))],
    ['the time moved on', (repo, c) => editNote(repo, c, (d) => (d.time = '2999-01-01T00:00:00.000Z'))],
    ['the mac removed', (repo, c) => editNote(repo, c, (d) => delete d.mac)],
    [
      'the note moved to another commit',
      (repo, c, other) => {
        writeNote(repo, other, readNote(repo, c)!);
        removeNote(repo, c);
      },
    ],
    ['not JSON', (repo, c) => writeNote(repo, c, 'verified, trust me\n')],
    [
      'a SHIP added to the reviews',
      (repo, c) => editNote(repo, c, (d) => (d.reviews['US-2'] = { reviewer: 'claude', model: null, commit: c })),
    ],
    [
      'a sealed SHIP moved to another commit',
      (repo, c, other) => editNote(repo, c, (d) => (d.reviews['US-1'].commit = other)),
    ],
    [
      'a sealed SHIP given another reviewer',
      (repo, c) => editNote(repo, c, (d) => (d.reviews['US-1'].reviewer = 'opus-judge')),
    ],
    ['the reviews removed', (repo, c) => editNote(repo, c, (d) => delete d.reviews)],
  ])('leaves out a forged record: %s', async (_name, forge) => {
    const repo = gitdir();
    const env = keyEnv();
    const other = git(repo, 'rev-parse', 'HEAD');
    const c = commit(repo, 'a');
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: c,
        time: '2026-01-01T00:00:00.000Z',
        stories: { 'US-1': 'verified', 'US-2': 'unverified' },
        reviews: { 'US-1': { reviewer: 'node judge.mjs', model: 'opus', commit: c } },
      },
      env,
    );
    expect(Object.keys(await records(repo, env))).toEqual(['L1']); // sealed as made
    forge(repo, c, other);
    expect(await records(repo, env)).toEqual({});
  });

  it('is nothing without the key that sealed it, outside a repository, and without notes', async () => {
    const repo = gitdir();
    const env = keyEnv();
    const c = commit(repo, 'a');
    expect(await records(repo, env)).toEqual({}); // no notes yet
    sealNote(repo, { loop: 'L1', commit: c, time: '2026-01-01T00:00:00.000Z', stories: { 'US-1': 'verified' } }, env);
    expect(await records(repo, keyEnv())).toEqual({}); // another key folder: a fresh key is not created for reading
    expect(await records(testdir(), env)).toEqual({});
  });
});

describe('readKey', () => {
  it.each<[string, (file: string) => void, RegExp]>([
    ['readable by others', (file) => chmodSync(file, 0o644), /the key file is open to other users \(mode 644\)/],
    [
      'a symbolic link to a file of the same bytes',
      (file) => {
        copyFileSync(file, `${file}.real`);
        rmSync(file);
        symlinkSync(`${file}.real`, file);
      },
      /cannot be read \(a symbolic link\)/,
    ],
    [
      'in a folder others may write',
      (file) => chmodSync(path.dirname(file), 0o777),
      /the key folder is open to other users \(mode 777\)/,
    ],
    ['too short', (file) => writeFileSync(file, 'short', { mode: 0o600 }), /holds 5 bytes, not 32/],
  ])('refuses a key file the runner would not have made: %s, and never replaces it', (_name, spoil, problem) => {
    const env = keyEnv();
    const key = readKey(true, env)!;
    expect(readKey(false, env)).toEqual(key);
    const file = path.join(env.RALPH_KEY_DIR, 'verdict.key');
    spoil(file);
    expect(readKey(false, env)).toBeNull();
    expect(readKey(true, env)).toBeNull();
    expect(keyProblem(env)).toMatch(problem);
    expect(lstatSync(file)).toBeTruthy();
  });
});

describe('parseCatFileBatch', () => {
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  it.each<[string, string, string[], Record<string, string>]>([
    ['two blobs, sizes in bytes', `${a} blob 3\nü!\n${b} blob 2\nok\n`, [a, b], { [a]: 'ü!', [b]: 'ok' }],
    ['a missing object is skipped', `${a} missing\n${b} blob 2\nok\n`, [a, b], { [b]: 'ok' }],
    ['output out of order stops the parse', `${b} blob 2\nok\n`, [a, b], {}],
    ['a size past the end stops the parse', `${a} blob 99\nok\n`, [a], {}],
    ['a non-blob is not a note', `${a} tree 2\nok\n${b} blob 1\nx\n`, [a, b], { [b]: 'x' }],
  ])('%s', (_name, out, shas, expected) => {
    expect(Object.fromEntries(parseCatFileBatch(Buffer.from(out, 'utf8'), shas))).toEqual(expected);
  });
});

describe('status and the dashboard count verified only from the record', () => {
  function repoWithLoop(): { repo: string; env: NodeJS.ProcessEnv; head: string } {
    const repo = gitdir();
    const env = keyEnv();
    const prd = plan(3);
    prd.userStories.forEach((s) => (s.passes = true));
    writePlan(repo, prd);
    const head = commitPlan(repo);
    mkdirSync(path.join(repo, 'ralph/.runs'), { recursive: true });
    writeLoop(repo, { id: 'L1', status: 'complete', pid: null, exitCode: 0, branch: 'ralph/fixture' });
    const verdict = (story: string, status: 'verified' | 'unverified') => ({
      time: '2026-01-01T00:00:00Z',
      loop: 'L1',
      iteration: 1,
      story,
      command: null,
      exitCode: null,
      status,
    });
    writeLedger(repo, 'L1', [
      verdict('US-001', 'verified'),
      verdict('US-002', 'verified'),
      verdict('US-003', 'verified'),
    ]);
    return { repo, env, head };
  }

  it('a ledger alone: everything reported, nothing verified', () => {
    const { repo, env } = repoWithLoop();
    expect(readLoopSummaries(repo, env)[0]).toMatchObject({
      id: 'L1',
      verified: 0,
      reported: 3,
      unverified: 0,
      rejected: 0,
    });
  });

  it('a record for two of the three: two verified, the third reported; the dashboard agrees', () => {
    const { repo, env, head } = repoWithLoop();
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: head,
        time: '2026-01-01T00:00:01.000Z',
        stories: { 'US-001': 'verified', 'US-002': 'verified' },
      },
      env,
    );
    expect(readLoopSummaries(repo, env)[0]).toMatchObject({ verified: 2, reported: 1, unverified: 0, rejected: 0 });
    expect(readLoopSummaries(repo, keyEnv())[0]).toMatchObject({ verified: 0, reported: 3 }); // a key that did not seal it
    useKeyEnv(env); // the dashboard reads the key from its environment, as the user's `ralphkit view` does
    const snap = readPrdSnapshot(resolveViewPaths(repo));
    expect(snap.cards?.map((c) => [c.id, c.state, c.verification])).toEqual([
      ['US-001', 'verified', 'verified'],
      ['US-002', 'verified', 'verified'],
      ['US-003', 'passed', 'reported'],
    ]);
    expect(snap.summary).toEqual({ total: 3, passed: 3, verified: 2, reported: 1, rejected: 0, open: 0, skipped: 0 });
  });
});
