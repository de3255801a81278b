// What an agent run found, written before it runs (ralph/.runs/<id>/agent-run.json): the put-back a runner owes that
// run, done from it by the loop's end and by a resume (a runner killed with -9 while the agent ran put back nothing).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentRunPath,
  finishAgentRun,
  readAgentRun,
  writeAgentRun,
} from '../../../../src/engine/verify/agent-run-record.js';
import { git, gitdir } from '../../../support/repo.js';

/** A repository on branch `loop` (one commit past main), and the record of a run that found it so. */
function setup(): { dir: string; main: string } {
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
  });
  return { dir, main };
}

describe('agent-run-record', () => {
  it("puts back what the run changed: main moved, a tag added and one moved, a skip-worktree flag; the loop's branch and other loops' are the run's to move", async () => {
    const { dir, main } = setup();
    const record = readAgentRun(dir, 'L1');
    expect(record).not.toBeNull();
    const evil = git(dir, 'commit-tree', '-p', main, '-m', 'evil', `${main}^{tree}`);
    git(dir, 'update-ref', 'refs/heads/main', evil);
    git(dir, 'branch', 'other--2', evil);
    git(dir, 'tag', 'loop', evil);
    git(dir, 'tag', '-f', 'mine', evil);
    git(dir, 'update-index', '--skip-worktree', 'a.txt');
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'more loop work');
    const loopTip = git(dir, 'rev-parse', 'refs/heads/loop');
    const { said, done } = await finishAgentRun(dir, 'L1', record!);
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
    expect(await finishAgentRun(dir, 'L1', record!)).toEqual({ said: [], done: true });
  });

  it('a moved branch checked out in this tree is named and left, and the record is not done: the next resume, off it, puts it back', async () => {
    const { dir, main } = setup();
    const record = readAgentRun(dir, 'L1')!;
    const evil = git(dir, 'commit-tree', '-p', main, '-m', 'evil', `${main}^{tree}`);
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
      ['[]', 'no version'],
      ['{"ralphkit":1,"branches":{"main":"HEAD"},"endRefs":{}}', 'a ref does not name an object id'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":"x"}', 'skip is not a list'],
      ['{"ralphkit":1,"branches":{},"endRefs":{},"skip":[],"flags":[]}', 'ownGitDir is not an absolute path'],
    ]) {
      writeFileSync(file, text);
      expect(() => readAgentRun(dir, 'L2')).toThrow(why);
    }
    expect(() => readAgentRun(dir, 'L2')).toThrow(
      'look at git for-each-ref refs/heads refs/tags refs/replace, then remove the file',
    );
  });
});
