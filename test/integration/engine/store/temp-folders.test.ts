// The runner's temp folders (store/temp-folders.ts): named after their loop and runner, and removed once that runner
// is gone (a kill -9 leaves them: issue #27), never while it lives, and never a folder the runner did not name.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testdir } from '../../../support/repo.js';
import {
  parseTempFolderName,
  removeDeadTempFolders,
  renderRemovedTempFolders,
} from '../../../../src/engine/store/temp-folders.js';
import { processStart } from '../../../../src/engine/processes.js';

/** A pid no process has now: one that has exited. */
function deadPid(): number {
  return spawnSync('true').pid as number;
}

describe('parseTempFolderName', () => {
  it.each([
    [
      'ralph-verify-20261205-113632-a069~4242~987654-AbC123',
      { kind: 'ralph-verify', loop: '20261205-113632-a069', pid: 4242, start: 987654 },
    ],
    ['ralph-review-my.loop~7~-x_Y9zq', { kind: 'ralph-review', loop: 'my.loop', pid: 7 }],
    ['ralphkit-log--~12~34-aaaaaa', { kind: 'ralphkit-log', loop: '-', pid: 12, start: 34 }],
    ['ralph-verify-AbC123', null],
    ['ralph-verify-x~y~1-abcdef', null],
    ['ralphkit-trial-abcdef', null],
  ])('%s', (name, expected) => {
    expect(parseTempFolderName(name)).toEqual(expected);
  });
});

describe('removeDeadTempFolders', () => {
  it("removes the folders of runners that are gone (node_modules and all); keeps a live runner's, an older name, a file and a symlink", () => {
    const tmp = testdir('ralphkit-temp-');
    const dead = path.join(tmp, `ralph-verify-e2e~${deadPid()}~-aaaaaa`);
    mkdirSync(path.join(dead, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(path.join(dead, 'node_modules', 'pkg', 'index.js'), '');
    const deadLog = path.join(tmp, `ralphkit-log-par~${deadPid()}~1-bbbbbb`);
    mkdirSync(deadLog);
    // The live pid with another start time: the pid was reused, its runner is gone.
    const reused = path.join(tmp, `ralph-review-e2e~${process.pid}~${(processStart(process.pid) ?? 0) + 1}-cccccc`);
    mkdirSync(reused);
    const live = `ralph-verify-other~${process.pid}~${processStart(process.pid) ?? ''}-dddddd`;
    mkdirSync(path.join(tmp, live));
    mkdirSync(path.join(tmp, 'ralph-verify-eeeeee'));
    const file = `ralph-verify-file~${deadPid()}~-ffffff`;
    writeFileSync(path.join(tmp, file), '');
    const target = testdir('ralphkit-target-');
    const link = `ralph-verify-link~${deadPid()}~-gggggg`;
    symlinkSync(target, path.join(tmp, link));

    const removed = removeDeadTempFolders(tmp);
    const expected = process.platform === 'linux' ? [dead, deadLog, reused] : [dead, deadLog];
    expect(removed.map((r) => r.path).sort()).toEqual(expected.sort());
    expect(readdirSync(tmp).sort()).toEqual([live, 'ralph-verify-eeeeee', file, link].sort());
    expect(existsSync(target)).toBe(true);
    const reviewer = process.platform === 'linux' ? ', 1 reviewer folder' : '';
    expect(renderRemovedTempFolders(removed)).toEqual([
      `removed 1 verification checkout${reviewer} and 1 log folder of stopped runners from ${tmpdir()} (loop e2e, par)`,
    ]);
  });

  it.each([
    [['ralph-verify'], 'removed 1 verification checkout of'],
    [['ralph-verify', 'ralph-home'], "removed 1 verification checkout and 1 checks' HOME folder of"],
    [
      ['ralph-home', 'ralph-home', 'ralph-review', 'ralphkit-log'],
      "removed 1 reviewer folder, 2 checks' HOME folders and 1 log folder of",
    ],
  ] as const)('the message names each kind: %j', (kinds, start) => {
    const removed = kinds.map((kind) => ({ kind, loop: 'e2e' }));
    expect(renderRemovedTempFolders(removed)[0]).toMatch(
      new RegExp(`^${start.replace(/[()]/g, '\\$&')} stopped runners from \\S+ \\(loop e2e\\)$`),
    );
  });
});
