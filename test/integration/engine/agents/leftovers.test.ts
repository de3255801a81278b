// Real processes: leftovers that left the agent's process group are still found by their marker and stopped.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planAgentEnv } from '../../../../src/engine/agents/env.js';
import { findMarkedProcesses, stopMarkedProcesses } from '../../../../src/engine/agents/leftovers.js';
import { HAS_PROC, isGone, killWhenDone, pidFrom, readCmdline, statFields, until } from '../../../support/process.js';
import { testdir, writeFiles } from '../../../support/repo.js';

/**
 * Runs `script` with the marked environment the way the runner starts an agent (its own process group), and waits
 * for the shell to exit. `files` are written to `cwd` first: scripts that would need three levels of quoting inline.
 */
async function runMarked(
  cwd: string,
  script: string,
  files: Record<string, string> = {},
): Promise<{ token: string; group: number }> {
  writeFiles(cwd, files);
  const { env, token } = planAgentEnv(process.env, {});
  const child = spawn('sh', ['-c', script], { cwd, env, detached: true, stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return { token, group: child.pid! };
}

// setsid leaves the group and the session; the subshell's background child is orphaned at once (double fork);
// the third ignores SIGTERM, and SIG_IGN survives exec, so only SIGKILL ends it.
const LEFTOVERS = [
  `setsid sh -c 'echo $$ > a.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &`,
  `( sh -c 'echo $$ > b.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & )`,
  `setsid sh -c 'trap "" TERM; echo $$ > c.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &`,
].join('\n');

describe.skipIf(!HAS_PROC)('leftovers (Linux /proc)', () => {
  it('finds marked processes that left the process group or lost their parent, and no unmarked one', async () => {
    const dir = testdir();
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    killWhenDone([sleeper.pid!]);
    const { token, group } = await runMarked(dir, LEFTOVERS);
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => pidFrom(path.join(dir, `${n}.pid`))));
    killWhenDone([a, b, c]);
    await until('all three to exec sleep', () => [a, b, c].every((pid) => readCmdline(pid) === 'sleep 300'));
    // What makes them leftovers a group kill or a walk of the agent's process tree would miss.
    expect(statFields(a)?.[2]).not.toBe(String(group));
    expect(statFields(c)?.[2]).not.toBe(String(group));
    expect(statFields(b)?.[1]).not.toBe(String(group));

    expect(findMarkedProcesses(token).sort()).toEqual([a, b, c].sort());
    expect(findMarkedProcesses(token.slice(0, -1))).toEqual([]);
    expect(findMarkedProcesses(planAgentEnv(process.env, {}).token)).toEqual([]);
    expect(findMarkedProcesses('')).toEqual([]);
  });

  it('does not count a marked zombie', async () => {
    const dir = testdir();
    // The child exits only once its parent has exec'd sleep, which never waits for it: a zombie that stays.
    const { token } = await runMarked(dir, 'setsid sh parent.sh </dev/null >/dev/null 2>&1 &', {
      'parent.sh': `sh -c 'echo $$ > z.pid; until [ -e go ]; do sleep 0.02; done' &\necho $$ > p.pid\nexec sleep 300\n`,
    });
    const [zombie, parent] = await Promise.all([pidFrom(path.join(dir, 'z.pid')), pidFrom(path.join(dir, 'p.pid'))]);
    killWhenDone([zombie, parent]);
    await until('the parent to exec sleep', () => readCmdline(parent) === 'sleep 300');
    writeFiles(dir, { go: '' });
    await until('the zombie', () => statFields(zombie)?.[0] === 'Z');
    expect(findMarkedProcesses(token)).toEqual([parent]);
  });

  it('stops them all, SIGKILLs the one that ignores SIGTERM, and leaves the unmarked sleeper alone', async () => {
    const dir = testdir();
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    killWhenDone([sleeper.pid!]);
    const { token } = await runMarked(dir, LEFTOVERS);
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => pidFrom(path.join(dir, `${n}.pid`))));
    killWhenDone([a, b, c]);
    await until('all three to exec sleep', () => [a, b, c].every((pid) => readCmdline(pid) === 'sleep 300'));
    // Without this the SIGKILL path would go untested: SIGTERM (signal 15, mask 0x4000) must be in c's ignored set.
    const ignored = BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${c}/status`, 'utf8'))![1]}`);
    expect(ignored & 0x4000n).toBe(0x4000n);

    const result = await stopMarkedProcesses(token, { graceMs: 300 });

    expect(result.supported).toBe(true);
    expect(result.stopped.map((s) => s.pid).sort()).toEqual([a, b, c].sort());
    for (const s of result.stopped) expect(s.command).toBe('sleep 300');
    for (const pid of [a, b, c]) expect(isGone(pid)).toBe(true);
    expect(findMarkedProcesses(token)).toEqual([]);
    expect(isGone(sleeper.pid!)).toBe(false);
  });

  it('catches a child forked while its parent was being stopped', async () => {
    const dir = testdir();
    // On SIGTERM the parent forks a new marked child, notes its pid, then exits: the first round's scan cannot have
    // seen it. `wait` (unlike a foreground command) lets the trap run as soon as the signal arrives.
    const { token } = await runMarked(dir, 'setsid sh parent.sh </dev/null >/dev/null 2>&1 &', {
      'parent.sh': `trap 'sh late.sh & echo $! > late.pid; exit 0' TERM\necho $$ > p.pid\nsleep 300 &\nwait\n`,
      'late.sh': 'exec sleep 301\n',
    });
    const parent = await pidFrom(path.join(dir, 'p.pid'));
    killWhenDone([parent]);
    await until('the parent to wait on its sleeper', () =>
      findMarkedProcesses(token).some((pid) => readCmdline(pid) === 'sleep 300'),
    );

    const result = await stopMarkedProcesses(token, { graceMs: 2000 });

    const late = await pidFrom(path.join(dir, 'late.pid'));
    killWhenDone([late]);
    expect(result.stopped.map((s) => s.pid)).toEqual(expect.arrayContaining([parent, late]));
    for (const s of result.stopped) expect(isGone(s.pid)).toBe(true);
    expect(findMarkedProcesses(token)).toEqual([]);
  });

  it('returns nothing stopped when nothing carries the mark', async () => {
    expect(await stopMarkedProcesses(planAgentEnv(process.env, {}).token)).toEqual({ supported: true, stopped: [] });
  });
});
