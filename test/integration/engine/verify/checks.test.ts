import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCheck } from '../../../../src/engine/verify/checks.js';
import { testdir } from '../../../support/repo.js';
import { goneWithin, pidFrom } from '../../../support/process.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('runCheck', () => {
  it.each<[string, number | null, boolean]>([
    ['true', 0, true],
    ['exit 3', 3, false],
    ['echo "a b" | grep -q b', 0, true],
    ['no-such-command-ralphkit', 127, false],
  ])('`%s` → exit %s', async (command, exitCode, ok) => {
    const r = await runCheck({ command, cwd: testdir(), timeoutMs: 20_000 });
    expect(r).toMatchObject({ command, exitCode, ok, timedOut: false });
  });

  it('runs in the given folder through sh -c, capturing stdout and stderr together', async () => {
    const cwd = testdir();
    const r = await runCheck({ command: 'pwd; echo err >&2', cwd, timeoutMs: 20_000 });
    expect(r.outputTail).toBe(`${cwd}\nerr\n`);
    expect(r.outputSha256).toBe(sha256(`${cwd}\nerr\n`));
  });

  it('keeps only the tail of a large output in memory but hashes all of it', async () => {
    const r = await runCheck({
      command: 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done',
      cwd: testdir(),
      timeoutMs: 20_000,
      keepBytes: 1000,
    });
    const all = Array.from({ length: 2000 }, (_, i) => `line ${i}\n`).join('');
    expect(r.outputSha256).toBe(sha256(all));
    expect(r.outputTail.length).toBe(1000);
    expect(all.endsWith(r.outputTail)).toBe(true);
  });

  it('kills the whole process group at the timeout, even a child that ignores SIGTERM', async () => {
    const cwd = testdir();
    // The timeout must come after the inner shell has set its trap and written its pid: two shells start first,
    // which on a loaded 2-core machine has been seen to take over 200 ms (300 ms was a coin toss).
    const r = await runCheck({
      command: 'sh -c \'trap "" TERM; echo $$ > child.pid; while :; do sleep 1; done\' & wait',
      cwd,
      timeoutMs: 3000,
    });
    expect(r).toMatchObject({ timedOut: true, ok: false, exitCode: null });
    expect(await goneWithin(Number(readFileSync(path.join(cwd, 'child.pid'), 'utf8')))).toBe(true);
  });

  it('does not wait for a background process left holding the output pipe, and kills it', async () => {
    const cwd = testdir();
    const r = await runCheck({ command: 'sleep 300 & echo $! > bg.pid; echo done', cwd, timeoutMs: 20_000 });
    expect(r).toMatchObject({ exitCode: 0, ok: true, timedOut: false, outputTail: 'done\n' });
    expect(await goneWithin(Number(readFileSync(path.join(cwd, 'bg.pid'), 'utf8')))).toBe(true);
  });

  it('stops the command when the runner is interrupted', async () => {
    const cwd = testdir();
    const ac = new AbortController();
    const pending = runCheck({ command: 'echo $$ > sh.pid; sleep 300', cwd, timeoutMs: 60_000, signal: ac.signal });
    // Interrupt once the command runs (not after a fixed 200 ms, which a loaded machine can spend starting sh).
    const pid = await pidFrom(path.join(cwd, 'sh.pid'));
    ac.abort();
    const r = await pending;
    expect(r).toMatchObject({ aborted: true, ok: false, timedOut: false });
    expect(await goneWithin(pid)).toBe(true);
  });
});
