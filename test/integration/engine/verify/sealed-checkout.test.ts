// The verification checkout reads nothing the agent could have written in place of what the plan commit holds
// (SPEC §6, docs/verification.md "What the verdict reads"): the pinned files come from the runner's own copy of their
// bytes, hashed against their ids, not from the object store; and a committed link that leads out of the checkout is
// refused. Each attack is the agent's trick on real git, next to the honest work on the same plan.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { verifyIteration } from '../../../../src/engine/verify/verify.js';
import { runFinalGate } from '../../../../src/engine/verify/final-gate.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { createCheckout, removeCheckout } from '../../../../src/engine/verify/checkout.js';
import { ObjectMismatch, readVerifiedTree } from '../../../../src/engine/git/objects.js';
import { isAncestor } from '../../../../src/engine/git/head.js';
import { gitOk } from '../../../../src/engine/git/git.js';
import { restoreRunnerFiles, snapshotRunnerFiles } from '../../../../src/engine/verify/runner-guard.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git, testdir, writeFiles } from '../../../support/repo.js';
import {
  claim,
  commitAll,
  plan,
  readLedgerLines,
  readPrd,
  story,
  verifyRepo,
  type VerifyRepo,
} from '../../../support/verify-repo.js';

// A pinned check script (test/ is pinned) that passes once the story's code says "done".
const CHECK = 'sh test/check.sh';
const PLAN = plan([story('US-1', { checks: [CHECK] })]);
const FILES = { 'test/check.sh': 'grep -q done src/code.txt\n', 'src/code.txt': 'todo\n', '.gitignore': 'build/\n' };

/** The repository at its plan commit, and the pins the runner takes there when the loop starts. */
async function planRepo(prd: Prd = PLAN, files: Record<string, string> = FILES) {
  const r = verifyRepo(prd, files);
  const pins = await readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), prd);
  return { r, pins, input: (extra = {}) => r.input({ pins, ...extra }) };
}

/** Plays the agent: the loose object `oid` rewritten in place to hold `text` (same id, other bytes). */
function rewriteLooseObject(dir: string, oid: string, text: string): void {
  const file = path.join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2));
  const body = Buffer.from(text);
  chmodSync(file, 0o644);
  writeFileSync(file, deflateSync(Buffer.concat([Buffer.from(`blob ${body.length}\0`), body])));
}

const blobOf = (r: VerifyRepo, file: string) => git(r.dir, 'rev-parse', `HEAD:${file}`);
const checksRun = (r: VerifyRepo) => readLedgerLines(r).filter((l) => l.kind === 'check').length;

describe("object store: the pinned files come from the runner's copy, hashed against their ids", () => {
  it('object store: an overwritten loose object of a pinned test is caught, and the claim rejected without running it', async () => {
    const { r, input } = await planRepo();
    rewriteLooseObject(r.dir, blobOf(r, 'test/check.sh'), 'exit 0\n');
    expect(git(r.dir, 'show', 'HEAD:test/check.sh')).toBe('exit 0');
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (no work)');
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toMatch(
      /^the object store was rewritten: the checkout of [0-9a-f]{7} is not the commit's files: test\/check\.sh \(other bytes than [0-9a-f]{7}\)/,
    );
    expect(r.logs.some((l) => l.startsWith('warn: the object store was rewritten'))).toBe(true);
    expect(readPrd(r).userStories[0].passes).toBe(false);
    expect(checksRun(r)).toBe(0);
  });

  it("object store: the implementation's own object rewritten in place (the commit holds a stub, the store working code under its id) rejects the claim, and the final gate", async () => {
    const { r, pins, input } = await planRepo();
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/code.txt': 'still todo\n' }, 'feat: US-1 (a stub)');
    rewriteLooseObject(r.dir, blobOf(r, 'src/code.txt'), 'done\n');
    expect(git(r.dir, 'show', 'HEAD:src/code.txt')).toBe('done');
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toMatch(
      /^the object store was rewritten: the checkout of [0-9a-f]{7} is not the commit's files: src\/code\.txt \(other bytes than [0-9a-f]{7}\) .*; the claim is rejected/,
    );
    expect(checksRun(r)).toBe(0);
    const gate = await runFinalGate({
      ...r.input({ pins }),
      prd: { ...readPrd(r), userStories: readPrd(r).userStories.map((s) => ({ ...s, passes: true })) },
      topLevel: r.dir,
      verifiedAt: new Map(),
      shipped: new Map(),
      verdictKey: null,
    });
    expect(gate.passed).toBe(false);
    expect(gate.verdicts[0].reason).toMatch(
      /^the final gate at [0-9a-f]{7}: the object store was rewritten: the checkout of [0-9a-f]{7} is not the commit's files: src\/code\.txt/,
    );
  });

  it('object store: a tree of the claimed commit rewritten in place (its file listed with the working blob) rejects the claim', async () => {
    const { r, input } = await planRepo();
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/code.txt': 'still todo\n' }, 'feat: US-1 (a stub)');
    const outside = path.join(testdir('ralphkit-blob-'), 'done.txt');
    writeFileSync(outside, 'done\n');
    const working = git(r.dir, 'hash-object', '-w', outside);
    const forged = Buffer.concat([Buffer.from('100644 code.txt\0'), Buffer.from(working, 'hex')]);
    const srcTree = blobOf(r, 'src');
    const file = path.join(r.dir, '.git/objects', srcTree.slice(0, 2), srcTree.slice(2));
    chmodSync(file, 0o644);
    writeFileSync(file, deflateSync(Buffer.concat([Buffer.from(`tree ${forged.length}\0`), forged])));
    expect(git(r.dir, 'show', 'HEAD:src/code.txt')).toBe('done');
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toMatch(
      /^the object store was rewritten: src\/ \([0-9a-f]{7}\) of [0-9a-f]{7} does not hold the bytes its id is the hash of/,
    );
    expect(checksRun(r)).toBe(0);
  });

  it('object store: the honest work on the same plan is verified', async () => {
    const { r, input } = await planRepo();
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/code.txt': 'done\n' });
    expect((await verifyIteration(input())).verdicts[0].status).toBe('verified');
  });

  it('object store: a store of its own (the object deleted, the same id with other bytes in an alternate) is caught; the guard puts the alternates file back', async () => {
    const { r, input } = await planRepo();
    const guard = await snapshotRunnerFiles(r.dir);
    const oid = blobOf(r, 'test/check.sh');
    const store = testdir('ralphkit-alt-');
    mkdirSync(path.join(store, oid.slice(0, 2)), { recursive: true });
    writeFileSync(path.join(store, oid.slice(0, 2), oid.slice(2)), deflateSync(Buffer.from('blob 7\0exit 0\n')));
    unlinkSync(path.join(r.dir, '.git/objects', oid.slice(0, 2), oid.slice(2)));
    writeFileSync(path.join(r.dir, '.git/objects/info/alternates'), `${store}\n`);
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (no work)');
    expect((await verifyIteration(input())).verdicts[0].reason).toMatch(
      /^the object store was rewritten: the checkout of [0-9a-f]{7} is not the commit's files: test\/check\.sh \(/,
    );
    const restored = restoreRunnerFiles(guard);
    expect(restored.rejecting).toEqual(['.git/objects/info/alternates']);
    expect(existsSync(path.join(r.dir, '.git/objects/info/alternates'))).toBe(false);
  });

  it("object store: grafts the agent writes make up no history for the runner's git, and are put back with the claims rejected", async () => {
    const { r } = await planRepo();
    const guard = await snapshotRunnerFiles(r.dir);
    const root = git(r.dir, 'rev-parse', 'HEAD');
    const head = commitAll(r.dir, { 'src/code.txt': 'later\n' }, 'later');
    writeFileSync(path.join(r.dir, '.git/info/grafts'), `${head}\n`);
    expect(git(r.dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(await isAncestor(r.dir, root, head)).toBe(true);
    expect(restoreRunnerFiles(guard).rejecting).toEqual(['.git/info/grafts']);
    expect(existsSync(path.join(r.dir, '.git/info/grafts'))).toBe(false);
  });

  it("git's global attributes file (eol, ident, working-tree-encoding in every checkout the runner makes) is held like .git/info/attributes and put back", async () => {
    const { r } = await planRepo();
    const home = testdir('ralphkit-home-');
    vi.stubEnv('HOME', home);
    vi.stubEnv('XDG_CONFIG_HOME', '');
    try {
      const guard = await snapshotRunnerFiles(r.dir);
      mkdirSync(path.join(home, '.config/git'), { recursive: true });
      writeFileSync(path.join(home, '.config/git/attributes'), '*.txt ident\n');
      expect(restoreRunnerFiles(guard).changed).toEqual(['~/.config/git/attributes']);
      expect(existsSync(path.join(home, '.config/git/attributes'))).toBe(false);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("git's configuration outside the repository is held whole: a file ~/.gitconfig includes, the file core.attributesFile names, and the system file (one there is none of yet)", async () => {
    const { r } = await planRepo();
    const home = testdir('ralphkit-home-');
    const system = path.join(testdir('ralphkit-etc-'), 'gitconfig');
    vi.stubEnv('HOME', home);
    vi.stubEnv('XDG_CONFIG_HOME', '');
    vi.stubEnv('GIT_CONFIG_SYSTEM', system);
    try {
      writeFileSync(
        path.join(home, '.gitconfig'),
        '[include]\n\tpath = ~/.gitconfig.local\n[core]\n\tattributesFile = ~/.gitattributes\n',
      );
      const guard = await snapshotRunnerFiles(r.dir);
      // The agent: a smudge filter where the runner's checkout would run it, and the attributes that name it.
      const filter = '[filter "fmt"]\n\tsmudge = sed s/todo/done/\n';
      writeFileSync(path.join(home, '.gitconfig.local'), filter);
      writeFileSync(system, filter);
      writeFileSync(path.join(home, '.gitattributes'), 'src/*.txt filter=fmt\n');
      const restored = restoreRunnerFiles(guard);
      expect(restored.changed.sort()).toEqual(['~/.gitattributes', '~/.gitconfig.local', system].sort());
      expect(restored.rejecting.length).toBe(3);
      for (const file of [path.join(home, '.gitconfig.local'), system, path.join(home, '.gitattributes')])
        expect(existsSync(file), file).toBe(false);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("object store: a commit-graph the agent writes (a commit's parent made up) changes no history the runner's git walks", async () => {
    const { r } = await planRepo();
    const head = commitAll(r.dir, { 'src/code.txt': 'later\n' }, 'later');
    const count = git(r.dir, 'rev-list', '--count', 'HEAD');
    git(r.dir, 'commit-graph', 'write', '--reachable');
    // The graph's entry for `head`: its tree id, then its first parent's position; made "no parent", checksum redone.
    const file = path.join(r.dir, '.git/objects/info/commit-graph');
    const graph = readFileSync(file);
    const body = graph.subarray(0, graph.length - 20);
    const at = body.indexOf(Buffer.from(git(r.dir, 'rev-parse', `${head}^{tree}`), 'hex'));
    body.writeUInt32BE(0x70000000, at + 20);
    chmodSync(file, 0o644);
    writeFileSync(file, Buffer.concat([body, createHash('sha1').update(body).digest()]));
    expect(git(r.dir, 'rev-list', '--count', 'HEAD')).toBe('1'); // git itself now walks the made-up history
    expect((await gitOk(r.dir, ['rev-list', '--count', 'HEAD'])).trim()).toBe(count);
  });

  it("git's common dir, from a linked worktree (--worktree, --parallel): its own commondir is held as it was, and one planted in the main .git is removed", async () => {
    const { r } = await planRepo();
    const tree = `${testdir('ralphkit-wt-')}/tree`;
    git(r.dir, 'worktree', 'add', '-q', '-b', 'ralph/wt', tree);
    const own = git(tree, 'rev-parse', '--path-format=absolute', '--git-dir');
    const before = readFileSync(path.join(own, 'commondir'));
    const guard = await snapshotRunnerFiles(tree);
    const other = testdir('ralphkit-commondir-');
    cpSync(path.join(r.dir, '.git'), other, { recursive: true });
    writeFileSync(path.join(own, 'commondir'), `${other}\n`);
    writeFileSync(path.join(r.dir, '.git/commondir'), `${other}\n`);
    expect(git(tree, 'rev-parse', '--path-format=absolute', '--git-common-dir')).toBe(other);
    expect(restoreRunnerFiles(guard).rejecting.map((f) => path.basename(f))).toEqual(['commondir', 'commondir']);
    expect(readFileSync(path.join(own, 'commondir'))).toEqual(before);
    expect(existsSync(path.join(r.dir, '.git/commondir'))).toBe(false);
    expect(git(tree, 'rev-parse', '--path-format=absolute', '--git-common-dir')).toBe(
      realpathSync(path.join(r.dir, '.git')),
    );
  });

  it('object store: a .git/shallow the agent writes (history cut at a commit of its choice) is put back with the claims rejected', async () => {
    const { r } = await planRepo();
    const guard = await snapshotRunnerFiles(r.dir);
    const head = commitAll(r.dir, { 'src/code.txt': 'later\n' }, 'later');
    writeFileSync(path.join(r.dir, '.git/shallow'), `${head}\n`);
    expect(git(r.dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(restoreRunnerFiles(guard).rejecting).toEqual(['.git/shallow']);
    expect(git(r.dir, 'rev-list', '--count', 'HEAD')).not.toBe('1');
  });

  it("git's common dir: a .git/commondir the agent writes (its own config, hooks and store) is removed before the runner's git reads it, and rejects the claims", async () => {
    const { r } = await planRepo();
    const guard = await snapshotRunnerFiles(r.dir);
    const other = testdir('ralphkit-commondir-');
    cpSync(path.join(r.dir, '.git'), other, { recursive: true });
    writeFileSync(
      path.join(other, 'config'),
      '[core]\n\trepositoryformatversion = 0\n[filter "x"]\n\tsmudge = touch pwned\n',
    );
    writeFileSync(path.join(r.dir, '.git/commondir'), `${other}\n`);
    expect(git(r.dir, 'config', 'filter.x.smudge')).toBe('touch pwned');
    const restored = restoreRunnerFiles(guard);
    expect(restored.rejecting).toEqual(['.git/commondir']);
    expect(existsSync(path.join(r.dir, '.git/commondir'))).toBe(false);
    expect(() => git(r.dir, 'config', 'filter.x.smudge')).toThrow();
  });

  it('object store: a replace ref over the pinned test changes nothing the checks read (the check runs, and fails)', async () => {
    const { r, input } = await planRepo();
    writeFiles(r.dir, { 'evil.sh': 'exit 0\n' });
    const evil = git(r.dir, 'hash-object', '-w', 'evil.sh');
    rmSync(path.join(r.dir, 'evil.sh'));
    git(r.dir, 'replace', blobOf(r, 'test/check.sh'), evil);
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (no work)');
    expect((await verifyIteration(input())).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: `check \`${CHECK}\` exited 1`,
    });
  });

  it('object store: at a resume, a plan commit whose pinned test was rewritten is not read as pins', async () => {
    const { r } = await planRepo();
    rewriteLooseObject(r.dir, blobOf(r, 'test/check.sh'), 'exit 0\n');
    await expect(readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), PLAN)).rejects.toThrow(ObjectMismatch);
  });

  it("object store: a rewritten tree object (which the listing that guesses the trees to fetch reads too) is not read as the plan commit's", async () => {
    const { r } = await planRepo();
    const tree = git(r.dir, 'rev-parse', 'HEAD:test');
    // The agent's tree under the old id: test/ now names a check.sh of its own.
    writeFileSync(path.join(r.dir, 'fake.sh'), 'exit 0\n');
    const fake = git(r.dir, 'hash-object', '-w', 'fake.sh');
    unlinkSync(path.join(r.dir, 'fake.sh'));
    const entries = Buffer.concat([Buffer.from('100644 check.sh\0'), Buffer.from(fake, 'hex')]);
    const file = path.join(r.dir, '.git/objects', tree.slice(0, 2), tree.slice(2));
    chmodSync(file, 0o644);
    writeFileSync(file, deflateSync(Buffer.concat([Buffer.from(`tree ${entries.length}\0`), entries])));
    expect(git(r.dir, 'ls-tree', '-r', 'HEAD', 'test')).toContain(fake); // git itself now lists the agent's tree
    await expect(readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), PLAN)).rejects.toThrow(ObjectMismatch);
  });

  it('object store: a sealed checkout holds every file git wrote against the commit (a file larger than a pipe chunk, an empty one, a link, a CRLF file under an eol rule); one rewritten in the store is named', async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => `line ${i}`).join('\n');
    const { r } = await planRepo(PLAN, {
      ...FILES,
      'data/big.txt': big,
      'data/empty.txt': '',
      'data/crlf.txt': 'a\nb\n',
      'data/committed-crlf.txt': 'a\r\nb\r\n',
      '.gitattributes': 'data/crlf.txt eol=crlf\ndata/committed-crlf.txt text\n',
    });
    symlinkSync('big.txt', path.join(r.dir, 'data/link'));
    commitAll(r.dir, {}, 'a link');
    const head = git(r.dir, 'rev-parse', 'HEAD');
    const honest = await createCheckout(r.dir, head, null, [], true);
    expect(readFileSync(path.join(honest.dir, 'data/crlf.txt'), 'utf8')).toBe('a\r\nb\r\n');
    expect(honest.tracked).toContain('data/link');
    removeCheckout(honest.dir);
    rewriteLooseObject(r.dir, blobOf(r, 'data/big.txt'), `${big.slice(0, -1)}X`);
    await expect(createCheckout(r.dir, head, null, [], true)).rejects.toThrow(
      new RegExp(
        `^the object store was rewritten: the checkout of ${head.slice(0, 7)} is not the commit's files: data/big\\.txt \\(other bytes than ${blobOf(r, 'data/big.txt').slice(0, 7)}\\)`,
      ),
    );
  });

  it("pinned files: a fixture git checks out with CRLF (the plan commit's eol rule) stays as git wrote it, after setup too; under rules the claim changed the pinned bytes go in", async () => {
    const check = 'sh test/check.sh';
    const prd = plan([story('US-1', { checks: [check] })], { setup: 'touch setup-ran' });
    const files = {
      ...FILES,
      'test/check.sh': "printf 'a\\r\\nb\\r\\n' | cmp -s - test/fixture.txt && grep -q done src/code.txt\n",
      'test/fixture.txt': 'a\nb\n',
      '.gitattributes': 'test/fixture.txt eol=crlf\n',
    };
    const honest = await planRepo(prd, files);
    claim(honest.r, 'US-1');
    commitAll(honest.r.dir, { 'src/code.txt': 'done\n' });
    const res = await verifyIteration(honest.input());
    expect(res.verdicts[0].status, res.verdicts[0].reason).toBe('verified');
    // The same work with the rule changed by the claim: the pinned bytes (LF) go in, whatever git made of them.
    const changed = await planRepo(prd, files);
    claim(changed.r, 'US-1');
    commitAll(changed.r.dir, { 'src/code.txt': 'done\n', '.gitattributes': 'test/fixture.txt eol=crlf ident\n' });
    const again = await verifyIteration(changed.input());
    expect(again.verdicts[0].status).toBe('rejected');
    expect(again.verdicts[0].reason).toMatch(/check `sh test\/check\.sh` exited 1/);
  });

  it('object store: files whose names git would read otherwise (a leading quote, no UTF-8) are checked by their bytes: honest ones pass, one rewritten in the store is named', async () => {
    const { r } = await planRepo(PLAN, { ...FILES, '"draft".md': 'draft\n', draft: 'other\r\n' });
    writeFileSync(Buffer.from(`${r.dir}/caf\xe9.txt`, 'latin1'), 'latin-1 name\n');
    commitAll(r.dir, { '.gitattributes': 'draft text eol=lf\n' }, 'odd names');
    const head = git(r.dir, 'rev-parse', 'HEAD');
    const honest = await createCheckout(r.dir, head, null, [], true);
    removeCheckout(honest.dir);
    rewriteLooseObject(r.dir, blobOf(r, '"draft".md'), 'draft, rewritten\n');
    await expect(createCheckout(r.dir, head, null, [], true)).rejects.toThrow(
      /is not the commit's files: "draft"\.md \(other bytes than [0-9a-f]{7}\)/,
    );
  });

  it('object store: a tree gone from the store, or a folder whose id names a blob, is named with what is wrong', async () => {
    const { r } = await planRepo(PLAN, { ...FILES, 'data/a.txt': 'a\n' });
    const head = git(r.dir, 'rev-parse', 'HEAD');
    const gone = blobOf(r, 'data');
    unlinkSync(path.join(r.dir, '.git/objects', gone.slice(0, 2), gone.slice(2)));
    const missing = (await readVerifiedTree(r.dir, 'sha1', head).catch((e: unknown) => e)) as ObjectMismatch;
    expect([missing.problem, missing.path, missing.oid]).toEqual(['missing', 'data/', gone]);
    expect(missing.message).toBe(`object ${gone} (data/) is missing`);
    // A commit whose tree lists a folder under the id of a file (written as it is: git checks no entry's type).
    const file = blobOf(r, 'src/code.txt');
    const entries = Buffer.concat([Buffer.from('40000 a\0'), Buffer.from(file, 'hex')]);
    const listing = path.join(testdir('ralphkit-tree-'), 'tree');
    writeFileSync(listing, entries);
    const tree = git(r.dir, 'hash-object', '-t', 'tree', '-w', '--literally', listing);
    const commit = git(r.dir, 'commit-tree', '-m', 'a folder that is a file', tree);
    const wrong = (await readVerifiedTree(r.dir, 'sha1', commit).catch((e: unknown) => e)) as ObjectMismatch;
    expect([wrong.problem, wrong.path, wrong.message]).toEqual([
      'type',
      'a/',
      `object ${file} (a/) is not of the type its parent names`,
    ]);
  });

  it('object store: nested folders are read whole, each tree hashed, whatever the depth', async () => {
    const { r, pins } = await planRepo(PLAN, { ...FILES, 'a/b/c/d/deep.txt': 'deep\n', 'a/b/side.txt': 'side\n' });
    const listed = git(
      r.dir,
      'ls-tree',
      '-r',
      '--full-tree',
      '--format=%(objectmode) %(objectname) %(path)',
      'HEAD',
    ).split('\n');
    expect(listed).toHaveLength(pins.tree.size);
    for (const line of listed) {
      const [mode, oid, file] = line.split(' ');
      expect(pins.tree.get(file), file).toEqual({ mode, oid });
    }
  });

  it("object store: a sha256 repository's pins are read through its own trees and hashed with its own hash", async () => {
    const dir = testdir('ralphkit-sha256-');
    git(dir, 'init', '-q', '--object-format=sha256', '-b', 'main');
    writeFiles(dir, { ...FILES, 'test/deep/er/x.test.sh': 'true\n', 'ralph/prd.json': JSON.stringify(PLAN) });
    git(dir, 'add', '-A');
    git(dir, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'plan');
    const pins = await readPins(dir, git(dir, 'rev-parse', 'HEAD'), PLAN);
    expect(pins.format).toBe('sha256');
    expect(pins.tree.get('test/deep/er/x.test.sh')?.oid).toBe(git(dir, 'rev-parse', 'HEAD:test/deep/er/x.test.sh'));
    expect([...pins.held].map(([f, b]) => `${f}=${b.toString()}`).sort()).toEqual([
      'test/check.sh=grep -q done src/code.txt\n',
      'test/deep/er/x.test.sh=true\n',
    ]);
  });

  it("object store: the final gate rejects a story verified earlier once its pinned test's object is rewritten", async () => {
    const { r, pins } = await planRepo();
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/code.txt': 'done\n' });
    rewriteLooseObject(r.dir, blobOf(r, 'test/check.sh'), 'exit 0\n');
    commitAll(r.dir, { 'src/code.txt': 'broken\n' }, 'refactor: later work');
    const gate = await runFinalGate({
      ...r.input({ pins }),
      prd: readPrd(r),
      topLevel: r.dir,
      verifiedAt: new Map(),
      shipped: new Map(),
      verdictKey: null,
    });
    expect(gate.passed).toBe(false);
    expect(gate.verdicts[0].reason).toMatch(/the object store was rewritten/);
  });
});

describe("the runner's own files: a commit that holds others than the loop started with is refused", () => {
  it("runner files: a claimed commit with an engine of the agent's (any clone of the branch would run it) is rejected without running a check; the same work with the runner's engine is verified", async () => {
    const { r, pins } = await planRepo(PLAN, { ...FILES, 'ralph/ralph.mjs': 'the engine\n' });
    const runnerFiles = new Map([
      ['ralph/ralph.mjs', blobOf(r, 'ralph/ralph.mjs')],
      ['ralph/.ralphkit.json', null],
    ]);
    const input = () => r.input({ pins: { ...pins, runnerFiles } });
    claim(r, 'US-1');
    commitAll(r.dir, { 'src/code.txt': 'done\n', 'ralph/ralph.mjs': "an engine of the agent's\n" }, 'feat: US-1');
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toContain(
      `the commit ${git(r.dir, 'rev-parse', 'HEAD~1').slice(0, 7)} holds the runner's own ralph/ralph.mjs other than the loop started with`,
    );
    expect(checksRun(r)).toBe(0);
    // A manifest the plan commit did not have counts as well.
    claim(r, 'US-1');
    commitAll(r.dir, { 'ralph/ralph.mjs': 'the engine\n', 'ralph/.ralphkit.json': '{}\n' }, 'feat: US-1 (a manifest)');
    expect((await verifyIteration(input())).verdicts[0].reason).toContain(
      "holds the runner's own ralph/.ralphkit.json",
    );
    claim(r, 'US-1');
    git(r.dir, 'rm', '-q', 'ralph/.ralphkit.json');
    commitAll(r.dir, {}, 'feat: US-1 (the runner files as they were)');
    expect((await verifyIteration(input())).verdicts[0].status).toBe('verified');
  });
});

describe('symlinks: a link where the plan commit pins an absence', () => {
  it("symlinks: a PYTHONPATH folder committed as a link to a folder holding a pytest.py of the agent's (pytest's console script would import it) is refused; a real folder there is not", async () => {
    const prd = plan([story('US-1', { checks: ['pytest -q tests'] })]);
    const r = verifyRepo(prd, { 'src/calc.py': 'def add(a, b):\n    return 0\n', 'tests/test_calc.py': 'x = 1\n' });
    const head = git(r.dir, 'rev-parse', 'HEAD');
    const pins = await readPins(r.dir, head, prd, [], ['src']);
    expect(pins.absentPaths).toContain('src/pytest.py');
    rmSync(path.join(r.dir, 'src'), { recursive: true });
    writeFiles(r.dir, {
      'lib/calc.py': 'def add(a, b):\n    return a + b\n',
      'lib/pytest.py': 'def console_main():\n    return 0\n',
    });
    symlinkSync('lib', path.join(r.dir, 'src'));
    commitAll(r.dir, {}, 'feat: US-1 (src moved)');
    const linked = git(r.dir, 'rev-parse', 'HEAD');
    await expect(createCheckout(r.dir, linked, pins, [], true)).rejects.toThrow(
      new RegExp(
        `^in the checkout of ${linked.slice(0, 7)}, src is a link where the plan commit pins the absence of \\d+ names in it \\(src/_pytest\\.py, `,
      ),
    );
    // The same files with src a real folder: checked out, with the pinned absence kept.
    rmSync(path.join(r.dir, 'src'));
    writeFiles(r.dir, { 'src/calc.py': 'def add(a, b):\n    return a + b\n' });
    commitAll(r.dir, {}, 'feat: US-1');
    const checkout = await createCheckout(r.dir, git(r.dir, 'rev-parse', 'HEAD'), pins, [], true);
    removeCheckout(checkout.dir);
  });
});

describe('symlinks: a committed link out of the checkout is refused', () => {
  it("symlinks: the runner's note goes into progress.txt itself, never through a link the agent put there (to a file outside that does not exist yet, a Python .pth) or into a pipe, and a link's target is written with its line breaks escaped", async () => {
    const { r, input } = await planRepo();
    const outside = path.join(testdir('ralphkit-outside-'), 'evil.pth');
    // A committed link out of the checkout (rejected), whose target would start a line of its own in the note.
    symlinkSync('/\nimport os; os.system("touch pwned")\n', path.join(r.dir, 'src/x'));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1');
    rmSync(r.progressPath);
    symlinkSync(outside, r.progressPath);
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(existsSync(outside)).toBe(false);
    const note = readFileSync(r.progressPath, 'utf8');
    expect(note).toContain('src/x -> /<U+000A>import os;');
    expect(note.split('\n').some((line) => line.startsWith('import os'))).toBe(false);
    // A pipe where the log was: no wait for a reader, a file of the runner's made there.
    rmSync(r.progressPath);
    execFileSync('mkfifo', [r.progressPath]);
    claim(r, 'US-1');
    expect((await verifyIteration(input())).verdicts[0].status).toBe('rejected');
    expect(readFileSync(r.progressPath, 'utf8')).toContain('US-1');
  });

  it('symlinks: a committed link out of the checkout is refused (an absolute link to an ignored file of the working tree)', async () => {
    const { r, input } = await planRepo();
    // The work lies in an ignored file; the commit holds only a link to it.
    writeFiles(r.dir, { 'build/code.txt': 'done\n' });
    rmSync(path.join(r.dir, 'src/code.txt'));
    symlinkSync(path.join(r.dir, 'build/code.txt'), path.join(r.dir, 'src/code.txt'));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (a link)');
    const res = await verifyIteration(input());
    expect(res.verdicts[0].status).toBe('rejected');
    expect(res.verdicts[0].reason).toBe(
      `a symbolic link leads out of the checkout of ${git(r.dir, 'rev-parse', 'HEAD~1').slice(0, 7)}: src/code.txt -> ${path.join(r.dir, 'build/code.txt')}; the checks would read files no commit holds, so the claim is rejected (commit the files themselves, or a link that stays inside the repository)`,
    );
    expect(checksRun(r)).toBe(0);
  });

  it('symlinks: a relative link that climbs out of the checkout, and a link where a pinned folder was, are refused; nothing is written through them', async () => {
    const { r, input } = await planRepo();
    const outside = testdir('ralphkit-outside-');
    writeFiles(outside, { 'check.sh': 'exit 0\n', 'code.txt': 'done\n' });
    rmSync(path.join(r.dir, 'test'), { recursive: true });
    symlinkSync(outside, path.join(r.dir, 'test'));
    rmSync(path.join(r.dir, 'src/code.txt'));
    symlinkSync(`../../../../../../../../../../..${outside}/code.txt`, path.join(r.dir, 'src/code.txt'));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1 (links)');
    const reason = (await verifyIteration(input())).verdicts[0].reason ?? '';
    expect(reason).toMatch(/^symbolic links lead out of the checkout of [0-9a-f]{7}: /);
    expect(reason).toContain(`src/code.txt -> ../../../../../../../../../../..${outside}/code.txt`);
    expect(reason).toContain(`test -> ${outside}`);
    expect(readdirSync(outside).sort()).toEqual(['check.sh', 'code.txt']);
    expect(readFileSync(path.join(outside, 'check.sh'), 'utf8')).toBe('exit 0\n');
  });

  it('symlinks: a setup that puts a link out of the checkout where a committed file was is refused after setup', async () => {
    const prd = { ...PLAN, setup: `ln -sf "$SECRET_DONE" src/code.txt` };
    const { r, input } = await planRepo(prd);
    writeFiles(r.dir, { 'build/code.txt': 'done\n' });
    process.env.SECRET_DONE = path.join(r.dir, 'build/code.txt');
    try {
      claim(r, 'US-1');
      commitAll(r.dir, {}, 'feat: US-1 (setup links)');
      const reason = (await verifyIteration(input())).verdicts[0].reason ?? '';
      expect(reason).toMatch(
        new RegExp(
          `^a symbolic link leads out of the checkout of [0-9a-f]{7} after setup: src/code.txt -> ${path.join(r.dir, 'build/code.txt')}`,
        ),
      );
    } finally {
      delete process.env.SECRET_DONE;
    }
  });

  it('symlinks: the honest work with a committed link inside the repository is verified', async () => {
    const { r, input } = await planRepo();
    writeFiles(r.dir, { 'lib/code.txt': 'done\n' });
    rmSync(path.join(r.dir, 'src/code.txt'));
    symlinkSync('../lib/code.txt', path.join(r.dir, 'src/code.txt'));
    claim(r, 'US-1');
    commitAll(r.dir, {}, 'feat: US-1');
    expect((await verifyIteration(input())).verdicts[0].status).toBe('verified');
  });
});
