// Verdict records (src/engine/store/verdict-record.ts) for tests: a key folder of the test's own ($RALPH_KEY_DIR,
// which the runner, `status` and `view` all honour), and notes under refs/notes/ralphkit written or edited by hand.
import { execFileSync } from 'node:child_process';
import { onTestFinished, vi } from 'vitest';
import { testdir, gitEnv } from './repo.js';
import { NOTES_REF, readKey, renderRecord, type VerdictRecord } from '../../src/engine/store/verdict-record.js';

/** An environment whose record key lives in a fresh temp folder (created on first use, removed with the test). */
export function keyEnv(): NodeJS.ProcessEnv & { RALPH_KEY_DIR: string } {
  return { RALPH_KEY_DIR: testdir('ralphkit-key-') };
}

/** For code under test that runs in this process (the dashboard's server): reads its key from `env` until the test ends. */
export function useKeyEnv(env: NodeJS.ProcessEnv): void {
  vi.stubEnv('RALPH_KEY_DIR', env.RALPH_KEY_DIR);
  onTestFinished(() => void vi.unstubAllEnvs());
}

/** Attaches `text` as the verdict note of `commit`, replacing any note there (what an agent with git can do). */
export function writeNote(repo: string, commit: string, text: string): void {
  execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-F', '-', commit], {
    cwd: repo,
    input: text,
    env: gitEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Removes the verdict note of `commit`. */
export function removeNote(repo: string, commit: string): void {
  execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'remove', commit], {
    cwd: repo,
    env: gitEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** The verdict note of `commit`, or null. */
export function readNote(repo: string, commit: string): string | null {
  try {
    return execFileSync('git', ['notes', `--ref=${NOTES_REF}`, 'show', commit], {
      cwd: repo,
      encoding: 'utf8',
      env: gitEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch {
    return null;
  }
}

/** A record sealed with the key of `env` (created if missing) and attached to `record.commit`, as the final gate does. */
export function sealNote(
  repo: string,
  record: Omit<VerdictRecord, 'ralphkit' | 'pins'> & { pins?: string | null },
  env: NodeJS.ProcessEnv,
): void {
  const key = readKey(true, env);
  if (!key) throw new Error(`could not create a record key in ${env.RALPH_KEY_DIR}`);
  writeNote(repo, record.commit, renderRecord({ ralphkit: 1, pins: null, ...record }, key));
}

/** The note's JSON with `edit` applied and its `mac` left as it was: a forgery without the key. */
export function editNote(repo: string, commit: string, edit: (doc: Record<string, any>) => void): void {
  const text = readNote(repo, commit);
  if (text === null) throw new Error(`no verdict note on ${commit}`);
  const doc = JSON.parse(text) as Record<string, any>;
  edit(doc);
  writeNote(repo, commit, `${JSON.stringify(doc)}\n`);
}
