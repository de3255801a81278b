// The one process helper of the tests: liveness (zombie-aware), a pid's start, /proc reads, waiting on a state
// (never on a fixed delay), and killing what a test left behind.
import { existsSync, readFileSync } from 'node:fs';
import { onTestFinished } from 'vitest';
import { pollUntil } from '../../src/util/poll.js';

export const HAS_PROC = process.platform === 'linux' && existsSync('/proc/self/environ');

/** Fields of /proc/<pid>/stat after the command name ([state, ppid, pgrp, ...]), or null when the pid is gone. */
export function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Gone means: no /proc entry, or a zombie waiting for a parent that may never reap it. */
export function isGone(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state === undefined || state === 'Z' || state === 'X';
}

export function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/**
 * Every wait below allows this many times the limit its caller names. A limit only turns a hang into a clear failure,
 * never a measure of speed (the benchmark owns those); on a CI machine at load 8-17 an agent that starts in 2 s when
 * quiet can take 20, so the named limits are the quiet machine's and the slack covers the loaded one.
 */
export const WAIT_SLACK = 3;

/**
 * The one wait of the tests (what is waited for, then the probe, then the limit): polls `probe` until it returns
 * something truthy and returns that; the timeout (times WAIT_SLACK) only turns a hang into a clear failure.
 */
export async function until<T>(
  what: string,
  probe: () => T | null | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  let value: T | null | undefined | false = null;
  const limit = timeoutMs * WAIT_SLACK;
  if (await pollUntil(() => Boolean((value = probe())), { timeoutMs: limit, intervalMs: 25 })) return value as T;
  throw new Error(`timed out after ${limit} ms waiting for ${what}`);
}

/**
 * SIGKILLs `pids` when the test ends, whatever happened: a failed test must not leave sleepers behind. Only the
 * processes seen now: a pid that has since been reused by someone else is left alone.
 */
export function killWhenDone(pids: number[]): void {
  const started = pids.map((pid) => ({ pid, start: statFields(pid)?.[19] }));
  onTestFinished(() => {
    for (const { pid, start } of started) {
      // pid 0 or 1 would signal our own group or init: never.
      if (pid <= 1 || start === undefined || statFields(pid)?.[19] !== start) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

/**
 * True while `pid` runs. A killed child stays a zombie (Z, or X while it is torn down) until its parent reaps
 * it, and must count as gone; the one liveness check of the test helpers.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Whether `pid` is gone within `ms` (SIGKILL is delivered asynchronously, so look a few times). */
export function goneWithin(pid: number, ms = 3000): Promise<boolean> {
  return pollUntil(() => !isAlive(pid), { timeoutMs: ms * WAIT_SLACK, intervalMs: 50 });
}

/**
 * The pid a process announced in `file` (a check's `echo $$ > file`), once it is there. The shell creates the file
 * before it writes the number, so an existing file can still be empty: read as a number that is 0, and pid 0 means
 * "my own process group" to kill(2) (`process.kill(-0, 'SIGKILL')` would kill the test runner itself).
 */
export function pidFrom(file: string, timeoutMs = 30_000): Promise<number> {
  return until(
    `a pid in ${file}`,
    () => {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const pid = /^\d+\n$/.test(text) ? Number(text) : 0;
      return pid > 1 ? pid : null;
    },
    timeoutMs,
  );
}

/** Field 22 of /proc/<pid>/stat, read independently of the engine's own parser. */
export function procStart(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
}
