// git's recorded conflict resolutions (.git/rr-cache) held as the loop found them: a folder the agent makes would turn
// rerere on for your merges, and a record it adds or rewrites would put its text into your files in one.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdRerere, restoreRerere } from '../../../../src/engine/verify/rerere-hold.js';
import { testdir } from '../../../support/repo.js';

function record(dir: string, id: string, post: string): void {
  mkdirSync(path.join(dir, id), { recursive: true });
  writeFileSync(path.join(dir, id, 'preimage'), '<<<<<<<\na\n=======\nb\n>>>>>>>\n');
  writeFileSync(path.join(dir, id, 'postimage'), post);
}

describe('rerere-hold', () => {
  it('a folder made since the loop started is removed: rerere stays off for your merges', () => {
    const dir = path.join(testdir('ralphkit-git-'), 'rr-cache');
    const hold = holdRerere(dir);
    expect(restoreRerere(hold)).toEqual([]);
    record(dir, 'abc', "the agent's text\n");
    expect(restoreRerere(hold)).toEqual([dir]);
    expect(existsSync(dir)).toBe(false);
  });

  it('records added or rewritten since are removed; yours stay as they were', () => {
    const dir = path.join(testdir('ralphkit-git-'), 'rr-cache');
    record(dir, 'mine', 'my resolution\n');
    record(dir, 'kept', 'another of mine\n');
    const hold = holdRerere(dir);
    record(dir, 'planted', "the agent's text\n");
    writeFileSync(path.join(dir, 'mine', 'postimage'), "the agent's text\n");
    expect(restoreRerere(hold).sort()).toEqual([path.join(dir, 'mine'), path.join(dir, 'planted')]);
    expect(existsSync(path.join(dir, 'kept', 'postimage'))).toBe(true);
    expect(existsSync(path.join(dir, 'mine'))).toBe(false);
    expect(restoreRerere(hold)).toEqual([]);
  });
});
