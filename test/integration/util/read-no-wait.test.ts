// The runner reads files the agent could have replaced (ralph/prd.json, progress.txt). An adversarial pass left a
// named pipe at ralph/prd.json: the runner's read blocked in open(2) for a writer that never came, and the loop hung
// past every timeout. A pipe (or anything but a file) there is now refused at once.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkOnTheWay, readBytesOrNull, readFileNoWait, readTextOrNull } from '../../../src/util/read.js';
import { testdir } from '../../support/repo.js';

describe('reading a file the agent could have replaced', () => {
  it('a named pipe is refused at once (EINVAL) or read as nothing, never waited on; a file reads as it is', () => {
    const dir = testdir();
    const pipe = path.join(dir, 'prd.json');
    execFileSync('mkfifo', [pipe]);
    expect(() => readFileNoWait(pipe)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(readBytesOrNull(pipe)).toBeNull();
    expect(readTextOrNull(pipe)).toBeNull();
    const file = path.join(dir, 'plan.json');
    writeFileSync(file, '{"a":1}\n');
    expect(readFileNoWait(file).toString('utf8')).toBe('{"a":1}\n');
    expect(readTextOrNull(file)).toBe('{"a":1}\n');
    expect(readTextOrNull(path.join(dir, 'gone'))).toBeNull();
    expect(() => readFileNoWait(path.join(dir, 'gone'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

describe('linkOnTheWay', () => {
  it('names the first folder between the root and the file that is a link; neither the root nor the file counts', () => {
    const dir = testdir();
    mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    symlinkSync(path.join(dir, 'a'), path.join(dir, 'a/b/c'));
    symlinkSync(path.join(dir, 'a'), path.join(dir, 'a/b/d'));
    expect(linkOnTheWay(dir, path.join(dir, 'a/b/x'))).toBeNull();
    expect(linkOnTheWay(dir, path.join(dir, 'a/b/c'))).toBeNull();
    expect(linkOnTheWay(dir, path.join(dir, 'a/b/c/d/x'))).toBe(path.join(dir, 'a/b/c'));
    expect(linkOnTheWay(path.join(dir, 'a/b/c'), path.join(dir, 'a/b/c/x'))).toBeNull();
    // Missing, or a file where a folder should be: the walk stops there, and the write fails on its own.
    writeFileSync(path.join(dir, 'f'), '');
    expect(linkOnTheWay(dir, path.join(dir, 'f/c/x'))).toBeNull();
    expect(linkOnTheWay(dir, path.join(dir, 'gone/a/b/c/x'))).toBeNull();
  });
});
