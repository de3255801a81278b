// Watching real processes through Linux /proc in tests: by state, not by how long ago they were signalled.
import { existsSync, readFileSync } from 'node:fs';
import { onTestFinished } from 'vitest';

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

/** Polls `probe` until it returns something truthy; the timeout only turns a hang into a clear failure. */
export async function until<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 25))) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/** The pid a shell wrote with `echo $$ > file` (an existing file can still be empty: wait for the newline). */
export function pidIn(file: string): Promise<number> {
  return until(`a pid in ${file}`, () => {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    return /^\d+\n$/.test(text) ? Number(text) : null;
  });
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
