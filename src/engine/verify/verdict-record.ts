// The verdict record (SPEC §6): what the final gate decided, as a note on the final commit under refs/notes/ralphkit,
// sealed with an HMAC whose key lives in the user's configuration folder (never in the repository). `status` and
// the dashboard call a story verified only from a record that checks out; ledger lines are what a runner reported.
// Without --sandbox the agent runs as the user and could read the key; the sandbox hides that folder from it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { StoryVerdict } from '../contracts.js';
import { gitRun } from '../verify-git.js';

export interface VerdictRecord {
  ralphkit: 1;
  loop: string;
  /** The commit the final gate checked; the note is attached to exactly this commit. */
  commit: string;
  /** The plan commit whose tests were pinned. */
  pins: string | null;
  time: string;
  stories: Record<string, StoryVerdict['status']>;
}

export const NOTES_REF = 'refs/notes/ralphkit';

/** The folder holding the record key: $RALPH_KEY_DIR, else $XDG_CONFIG_HOME/ralphkit, else ~/.config/ralphkit. */
export function keyDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RALPH_KEY_DIR) return path.resolve(env.RALPH_KEY_DIR);
  return path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), '.config'), 'ralphkit');
}

/** The key, created (32 random bytes, mode 0600) on first use when `create`; null when it cannot be had. */
export function readKey(create: boolean, env: NodeJS.ProcessEnv = process.env): Buffer | null {
  const file = path.join(keyDir(env), 'verdict.key');
  try {
    const key = readFileSync(file);
    if (key.length >= 32) return key;
  } catch {
    /* none yet */
  }
  if (!create) return null;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const key = randomBytes(32);
    writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return key;
  } catch {
    // Another runner created it first (wx): use theirs.
    try {
      const key = readFileSync(file);
      return key.length >= 32 ? key : null;
    } catch {
      return null;
    }
  }
}

export function renderRecord(record: VerdictRecord, key: Buffer): string {
  return `${JSON.stringify({ ...record, mac: seal(record, key) })}\n`;
}

/** The record in `text` if its seal checks out with `key` and it names `commit`; otherwise null. */
export function parseRecord(text: string, commit: string, key: Buffer): VerdictRecord | null {
  let doc: (VerdictRecord & { mac?: unknown }) | null;
  try {
    doc = JSON.parse(text) as VerdictRecord & { mac?: unknown };
  } catch {
    return null;
  }
  if (!doc || typeof doc !== 'object' || typeof doc.mac !== 'string' || doc.commit !== commit || typeof doc.loop !== 'string') return null;
  const { mac, ...record } = doc;
  const want = Buffer.from(seal(record as VerdictRecord, key), 'hex');
  const got = Buffer.from(mac as string, 'hex');
  return want.length === got.length && timingSafeEqual(want, got) ? (record as VerdictRecord) : null;
}

function seal(record: VerdictRecord, key: Buffer): string {
  const { ralphkit, loop, commit, pins, time, stories } = record;
  const canonical = JSON.stringify([ralphkit, loop, commit, pins, time, Object.entries(stories).sort(([a], [b]) => (a < b ? -1 : 1))]);
  return createHmac('sha256', key).update(canonical).digest('hex');
}

/**
 * Every valid record in the repository, newest first per loop: a Map from loop id to its latest record. Records
 * with a bad seal, a commit other than the one they are attached to, or no key to check them are left out.
 */
export async function readVerdictRecords(repoRoot: string, env: NodeJS.ProcessEnv = process.env): Promise<Map<string, VerdictRecord>> {
  const out = new Map<string, VerdictRecord>();
  const key = readKey(false, env);
  if (!key) return out;
  const list = await gitRun(repoRoot, ['notes', `--ref=${NOTES_REF}`, 'list']);
  if (list.code !== 0) return out;
  for (const line of list.stdout.split('\n').filter(Boolean)) {
    const [blob, commit] = line.split(' ');
    const r = await gitRun(repoRoot, ['cat-file', 'blob', blob]);
    const record = r.code === 0 ? parseRecord(r.stdout, commit, key) : null;
    if (!record) continue;
    const prev = out.get(record.loop);
    if (!prev || prev.time < record.time) out.set(record.loop, record);
  }
  return out;
}
