// The programs the runner starts itself once a loop ends (gh for --deliver pr, notify-send or osascript for --notify),
// found on PATH once, before the first agent runs: under --sandbox the agent can write HOME (~/.local/bin is often
// on PATH), and a program planted there later would run outside the sandbox with the runner's environment.
import path from 'node:path';
import { findExecutable } from '../agents/check.js';

export type EndProgram = 'gh' | 'notify-send' | 'osascript';
const NAMES: readonly EndProgram[] = ['gh', 'notify-send', 'osascript'];

let held: Map<EndProgram, string | null> | null = null;

/** Looks each program up now, as an absolute path; call it before the first agent runs. */
export function holdEndPrograms(env: NodeJS.ProcessEnv): void {
  held = new Map(
    NAMES.map((name) => {
      const found = findExecutable(name, env);
      return [name, found && path.resolve(found)];
    }),
  );
}

/** The program's absolute path as found at the loop's start (looked up now when nothing was held); null: not found. */
export function endProgram(name: EndProgram, env: NodeJS.ProcessEnv): string | null {
  if (held) return held.get(name) ?? null;
  const found = findExecutable(name, env);
  return found && path.resolve(found);
}
