// A new loop's start, where another loop's runner stopped while its agent ran (kill -9) and left the record of what
// that agent found: what differs from the record is named, with the resume that puts it back; nothing is moved, since
// a move made after that loop died may be yours. A loop whose runner still runs is not asked about.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nameOwedPutBacks } from '../../../../src/engine/run/ref-sweep.js';
import { writeAgentRun } from '../../../../src/engine/verify/agent-run-record.js';
import { processStart } from '../../../../src/engine/processes.js';
import { git, gitdir } from '../../../support/repo.js';

/** A loop `id` whose state.json says running with runner `pid`, and the record of an agent run that found `main`. */
function loopWithRecord(dir: string, id: string, pid: number, pidStart?: number): void {
  mkdirSync(path.join(dir, 'ralph/.runs', id), { recursive: true });
  writeFileSync(
    path.join(dir, 'ralph/.runs', id, 'state.json'),
    JSON.stringify({ id, status: 'running', pid, ...(pidStart ? { pidStart } : {}) }),
  );
  const main = git(dir, 'rev-parse', 'main');
  writeAgentRun(dir, id, {
    branches: { main, [`loop-${id}`]: main },
    skip: [`loop-${id}`],
    endRefs: { 'refs/tags/mine': main },
    flags: [],
    ownGitDir: path.join(dir, '.git'),
    commonDir: path.join(dir, '.git'),
    stashLog: null,
  });
}

describe('nameOwedPutBacks', () => {
  it("names what moved since a dead loop's record (a branch, a tag added, one deleted), moves nothing; a live loop's record and this loop's own are not read", async () => {
    const dir = gitdir({ 'a.txt': 'a\n' });
    git(dir, 'branch', '-M', 'main');
    git(dir, 'tag', 'mine');
    const main = git(dir, 'rev-parse', 'main');
    // No process has this pid (above pid_max): that runner is gone.
    loopWithRecord(dir, 'dead', 4194305);
    loopWithRecord(dir, 'live', process.pid, processStart(process.pid));
    loopWithRecord(dir, 'own', 4194305);
    const quiet: string[] = [];
    await nameOwedPutBacks(dir, 'own', dir, (e) => quiet.push((e as { message: string }).message));
    expect(quiet).toEqual([]);
    const evil = git(dir, 'commit-tree', '-p', main, '-m', 'evil', 'HEAD^{tree}');
    git(dir, 'update-ref', 'refs/heads/main', evil);
    git(dir, 'update-ref', 'refs/heads/loop-dead', evil);
    git(dir, 'tag', 'ralph/add', evil);
    git(dir, 'tag', '-d', 'mine');
    const said: string[] = [];
    await nameOwedPutBacks(dir, 'own', dir, (e) => said.push((e as { message: string }).message));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('loop dead stopped while its agent ran');
    expect(said[0]).toContain('refs/heads/main moved, refs/tags/mine deleted, refs/tags/ralph/add added.');
    expect(said[0]).not.toContain('loop-dead');
    expect(said[0]).toContain('./ralph/ralph.sh --resume dead puts them back');
    expect(git(dir, 'rev-parse', 'main')).toBe(evil);
  });
});
