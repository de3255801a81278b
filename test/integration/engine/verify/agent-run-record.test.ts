// What an agent run found, written before it runs (ralph/.runs/<id>/agent-run.json): the put-back a runner owes that
// run, done from it by the loop's end and by a resume (a runner killed with -9 while the agent ran put back nothing).
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  agentRunPath,
  finishAgentRun,
  readAgentRun,
  writeAgentRun,
} from '../../../../src/engine/verify/agent-run-record.js';
import { skips } from '../../../../src/engine/verify/branch-moves.js';
import { git, gitdir } from '../../../support/repo.js';

/**
 * A repository on branch `loop` (one commit past main), the record of a run that found it so, read back, and a
 * look-alike of main's commit for the agent to point refs at.
 */
function setup() {
  const dir = gitdir({ 'a.txt': 'a\n' });
  git(dir, 'branch', '-M', 'main');
  git(dir, 'checkout', '-q', '-b', 'loop');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'loop work');
  const main = git(dir, 'rev-parse', 'main');
  git(dir, 'tag', 'mine', 'main');
  mkdirSync(path.join(dir, 'ralph/.runs/L1'), { recursive: true });
  writeAgentRun(dir, 'L1', {
    branches: { main, loop: git(dir, 'rev-parse', 'loop') },
    skip: ['loop', 'other--*'],
    endRefs: { 'refs/tags/mine': main },
    flags: [],
    ownGitDir: path.join(dir, '.git'),
    commonDir: path.join(dir, '.git'),
    stashLog: null,
  });
  const record = readAgentRun(dir, 'L1')!;
  return { dir, main, record, evil: git(dir, 'commit-tree', '-p', main, '-m', 'evil', `${main}^{tree}`) };
}

describe('agent-run-record', () => {
  it("puts back what the run changed: main moved, a tag added and one moved, a skip-worktree flag; the loop's branch and other loops' are the run's to move", async () => {
    const { dir, main, record, evil } = setup();
    expect(record).not.toBeNull();
    git(dir, 'update-ref', 'refs/heads/main', evil);
    git(dir, 'branch', 'other--2', evil);
    git(dir, 'tag', 'loop', evil);
    git(dir, 'tag', '-f', 'mine', evil);
    git(dir, 'update-index', '--skip-worktree', 'a.txt');
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'more loop work');
    const loopTip = git(dir, 'rev-parse', 'refs/heads/loop');
    const { said, done } = await finishAgentRun(dir, 'L1', record);
    expect(done).toBe(true);
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
    expect(git(dir, 'rev-parse', 'refs/ralphkit/loops/L1/moved/main')).toBe(evil);
    expect(git(dir, 'rev-parse', 'refs/heads/loop')).toBe(loopTip);
    expect(git(dir, 'rev-parse', 'other--2')).toBe(evil);
    expect(git(dir, 'tag', '--list')).toBe('mine');
    expect(git(dir, 'rev-parse', 'mine')).toBe(main);
    expect(git(dir, 'rev-parse', 'refs/ralphkit/loops/L1/moved/refs/tags/loop')).toBe(evil);
    expect(git(dir, 'ls-files', '-v', 'a.txt')).toBe('H a.txt');
    expect(said.join('\n')).toMatch(/main \(to [0-9a-f]{7}; put back at/);
    expect(said.join('\n')).toContain('refs/tags/loop');
    expect(said.join('\n')).toContain('the agent set skip-worktree on a.txt');
    // Done again, nothing is left to do.
    expect(await finishAgentRun(dir, 'L1', record)).toEqual({ said: [], done: true });
  });

  it("a lock the agent left on main fails git's put-back once: removed, and main put back; main made a symbolic ref counts as moved", async () => {
    const { dir, main, record, evil } = setup();
    git(dir, 'update-ref', 'refs/x/main', evil);
    git(dir, 'symbolic-ref', 'refs/heads/main', 'refs/x/main');
    writeFileSync(path.join(dir, '.git/refs/heads/main.lock'), `${evil}\n`);
    const { said, done } = await finishAgentRun(dir, 'L1', record);
    expect(done).toBe(true);
    expect(said.join('\n')).toMatch(/main \(to [0-9a-f]{7}, made a symbolic ref; put back at/);
    expect(git(dir, 'for-each-ref', '--format=%(objectname) %(symref)', 'refs/heads/main')).toBe(`${main} `.trim());
    expect(existsSync(path.join(dir, '.git/refs/heads/main.lock'))).toBe(false);
  });

  it('a branch the agent points at a missing object does not hide the others: main is put back', async () => {
    const { dir, main, record, evil } = setup();
    git(dir, 'update-ref', 'refs/heads/main', evil);
    writeFileSync(path.join(dir, '.git/refs/heads/zzz'), `${'1'.repeat(40)}\n`);
    const { said, failed } = await finishAgentRun(dir, 'L1', record);
    expect(failed).toBeUndefined();
    expect(said.join('\n')).toMatch(/main \(to [0-9a-f]{7}; put back at/);
    expect(git(dir, 'rev-parse', 'refs/heads/main')).toBe(main);
  });

  it("a ref file at git's folder named like a branch (.git/main), and a ref under refs/ of the same name: your merge would take them first; both go", async () => {
    const { dir, main, record, evil } = setup();
    writeFileSync(path.join(dir, '.git/main'), `${evil}\n`);
    // What git also reads there: capitals, and words after the id.
    writeFileSync(path.join(dir, '.git/loop'), `${evil.toUpperCase()} mode junk\n`);
    git(dir, 'update-ref', 'refs/loop', evil);
    const keep = path.join(dir, 'ralph/.runs/L1');
    const { said } = await finishAgentRun(dir, 'L1', record, keep);
    expect(said.join('\n')).toContain('.git/main (a file in git');
    expect(said.join('\n')).toContain('.git/loop (a file in git');
    expect(existsSync(path.join(dir, '.git/loop'))).toBe(false);
    expect(said.join('\n')).toContain('refs/loop');
    expect(existsSync(path.join(dir, '.git/main'))).toBe(false);
    expect(readFileSync(path.join(keep, 'shadows/main'), 'utf8')).toBe(`${evil}\n`);
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
    expect(git(dir, 'rev-parse', 'loop')).toBe(git(dir, 'rev-parse', 'refs/heads/loop'));
  });

  it("branches the agent made (one named like the loop commit's short id, at a decoy): moved under the loop's refs and named; one checked out in a worktree of yours, or skipped (another loop's), left; one in a worktree the agent made, moved", async () => {
    const { dir, record, evil } = setup();
    const short = git(dir, 'rev-parse', 'loop').slice(0, 7);
    git(dir, 'branch', short, evil);
    git(dir, 'branch', 'other--3', evil);
    git(dir, 'branch', 'elsewhere', evil);
    git(dir, 'worktree', 'add', '-q', `${dir}-wt`, 'elsewhere');
    onTestFinished(() => rmSync(`${dir}-wt`, { recursive: true, force: true }));
    // Worktrees the agent makes do not protect a branch: one inside the tree, one whose folder is gone (its /tmp).
    git(dir, 'branch', 'inside', evil);
    git(dir, 'worktree', 'add', '-q', path.join(dir, '.wt'), 'inside');
    git(dir, 'branch', 'gone', evil);
    git(dir, 'worktree', 'add', '-q', `${dir}-gone`, 'gone');
    rmSync(`${dir}-gone`, { recursive: true });
    const { said, done } = await finishAgentRun(dir, 'L1', record);
    expect(done).toBe(true);
    const text = said.join('\n');
    expect(text).toContain(
      `branches the agent made were moved to refs/ralphkit/loops/L1/created/: ${short} (at ${evil.slice(0, 7)})`,
    );
    expect(text).toContain('checked out in a worktree, so left: elsewhere');
    expect(git(dir, 'branch', '--list', short)).toBe('');
    expect(git(dir, 'rev-parse', `refs/ralphkit/loops/L1/created/${short}`)).toBe(evil);
    expect(git(dir, 'rev-parse', 'other--3')).toBe(evil);
    expect(git(dir, 'rev-parse', 'elsewhere')).toBe(evil);
    for (const b of ['inside', 'gone']) {
      expect(git(dir, 'branch', '--list', b)).toBe('');
      expect(git(dir, 'rev-parse', `refs/ralphkit/loops/L1/created/${b}`)).toBe(evil);
    }
    // Done again, nothing is left to move.
    const again = await finishAgentRun(dir, 'L1', record);
    expect(again.said.join('\n')).not.toContain('moved to');
  });

  it('main moved and checked out in a worktree the agent made inside the tree: put back all the same', async () => {
    const { dir, main, record, evil } = setup();
    git(dir, 'update-ref', 'refs/heads/main', evil);
    git(dir, 'worktree', 'add', '-q', path.join(dir, 'node_modules/.cache/wt'), 'main');
    const { said } = await finishAgentRun(dir, 'L1', record);
    expect(said.join('\n')).toMatch(/main \(to [0-9a-f]{7}; put back at/);
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
  });

  it('a moved branch checked out in this tree is named and left, and the record is not done: the next resume, off it, puts it back', async () => {
    const { dir, main, record, evil } = setup();
    git(dir, 'update-ref', 'refs/heads/main', evil);
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    const left = await finishAgentRun(dir, 'L1', record);
    expect(left.done).toBe(false);
    expect(left.said.join('\n')).toContain('main (to');
    expect(left.said.join('\n')).toContain('checked out here, so left as it is');
    expect(git(dir, 'rev-parse', 'main')).toBe(evil);
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/loop');
    expect((await finishAgentRun(dir, 'L1', record)).done).toBe(true);
    expect(git(dir, 'rev-parse', 'main')).toBe(main);
  });

  it("none: null; one that is not the runner's record: an error that says what it is and what to do", () => {
    const { dir } = setup();
    expect(readAgentRun(dir, 'L2')).toBeNull();
    const file = agentRunPath(dir, 'L2');
    mkdirSync(path.dirname(file), { recursive: true });
    for (const [text, why] of [
      ['{', 'it is not JSON'],
      ['null', 'not an object'],
      ['"x"', 'not an object'],
      ['[]', 'no version'],
      ['{"ralphkit":1,"branches":[],"endRefs":{}}', 'a ref does not name an object id'],
      ['{"ralphkit":1,"branches":{},"endRefs":{"refs/tags/t":"HEAD"}}', 'a ref does not name an object id'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[1]}', 'skip is not a list'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":{}}', 'flags is not a list'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":[[1]]}', 'flags is not a list'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":["a"]}', 'flags is not a list'],
      ['{"ralphkit":1,"branches":{"main":"HEAD"},"endRefs":{}}', 'a ref does not name an object id'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":"x"}', 'skip is not a list'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":[]}', 'ownGitDir is not an absolute path'],
      [
        '{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":[],"ownGitDir":"/g"}',
        'commonDir is not an absolute path',
      ],
      [
        '{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":[],"ownGitDir":"/g","commonDir":"/g","stashLog":1}',
        'stashLog is not base64 or null',
      ],
    ]) {
      writeFileSync(file, text);
      expect(() => readAgentRun(dir, 'L2')).toThrow(why);
    }
    expect(() => readAgentRun(dir, 'L2')).toThrow(
      'look at git for-each-ref refs/heads refs/tags refs/replace, then remove the file',
    );
  });

  it('a record the same as the one written last is not written again; a changed one, or one removed since, is', () => {
    const { dir, main } = setup();
    const file = agentRunPath(dir, 'L1');
    const record = readAgentRun(dir, 'L1')!;
    const { ralphkit: _, ...fields } = record;
    const inode = statSync(file).ino;
    writeAgentRun(dir, 'L1', fields);
    expect(statSync(file).ino).toBe(inode);
    writeAgentRun(dir, 'L1', { ...fields, branches: { main, other: main } });
    expect(statSync(file).ino).not.toBe(inode);
    expect(readAgentRun(dir, 'L1')!.branches).toEqual({ main, other: main });
    rmSync(file);
    writeAgentRun(dir, 'L1', { ...fields, branches: { main, other: main } });
    expect(readAgentRun(dir, 'L1')!.branches).toEqual({ main, other: main });
  });

  it("skips: a name is the branch itself; one ending in * is a prefix (another loop's story branches)", () => {
    expect(skips(['loop', 'other--*'], 'loop')).toBe(true);
    expect(skips(['loop', 'other--*'], 'other--2')).toBe(true);
    expect(skips(['loop', 'other--*'], 'other--')).toBe(true);
    expect(skips(['loop', 'other--*'], 'other-')).toBe(false);
    expect(skips(['loop', 'other--*'], 'xother--2')).toBe(false);
    expect(skips(['loop', 'other--*'], 'loop2')).toBe(false);
    expect(skips(['loop*x'], 'loop*x')).toBe(true);
    expect(skips(['loop*x'], 'loopax')).toBe(false);
    expect(skips([], 'loop')).toBe(false);
  });
});
