// The verdict record (SPEC §6): what the final gate decided, as a note on the final commit under refs/notes/ralphkit,
// sealed with an HMAC whose key lives in the user's configuration folder (never in the repository). `status` and
// the dashboard call a story verified only from a record that checks out; ledger lines are what a runner reported.
// Without --sandbox the agent runs as the user and could read the key; the sandbox hides that folder from it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ShippedReview, StoryVerdict } from '../verify/types.js';
import { gitSyncBytes } from '../git/program.js';
import { isObjectId } from '../git/parse.js';
import { isVerdictStatus, type StoryReview, type VerdictStatus } from './ledger.js';

export interface VerdictRecord {
  ralphkit: 1;
  loop: string;
  /** The commit the final gate checked; the note is attached to exactly this commit. */
  commit: string;
  /** The plan commit whose tests were pinned. */
  pins: string | null;
  time: string;
  stories: Record<string, StoryVerdict['status']>;
  /** The reviewer's SHIP of each reviewed story that passed (SPEC §11); absent in records without reviews. */
  reviews?: Record<string, ShippedReview>;
  /** Verified stories whose checks already passed on the plan commit, before any work: `verified (weak check)`. */
  weak?: string[];
}

export const NOTES_REF = 'refs/notes/ralphkit';

/** The folder holding the record key: $RALPH_KEY_DIR, else $XDG_CONFIG_HOME/ralphkit, else ~/.config/ralphkit. */
export function keyDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RALPH_KEY_DIR) return path.resolve(env.RALPH_KEY_DIR);
  return path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), '.config'), 'ralphkit');
}

/**
 * The key, created (32 random bytes, mode 0600) on first use when `create`; null when it cannot be had, or when the
 * file there is one the runner would not have written (keyProblem says why: it is never replaced).
 */
export function readKey(create: boolean, env: NodeJS.ProcessEnv = process.env): Buffer | null {
  const found = inspectKey(env);
  if (found.key || found.problem || !create) return found.key ?? null;
  const file = path.join(keyDir(env), 'verdict.key');
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const key = randomBytes(32);
    writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return key;
  } catch {
    // Another runner created it first (wx): use theirs.
    return inspectKey(env).key ?? null;
  }
}

/** Why the key file is refused, or null (no file, or a good one). */
export function keyProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  return inspectKey(env).problem ?? null;
}

/**
 * The key file as it is: the key, why it is refused, or neither (no file yet). Refused: a link, a file or folder owned
 * by another user, a file others may read or write, a folder others may write, fewer than 32 bytes. Without --sandbox
 * the agent runs as the user and can write a file that passes all of this (docs/verification.md); under --sandbox the
 * runner creates the key before anything sandboxed runs, so its folder is always hidden there.
 */
function inspectKey(env: NodeJS.ProcessEnv): { key?: Buffer; problem?: string } {
  const dir = keyDir(env);
  const file = path.join(dir, 'verdict.key');
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? {}
      : { problem: `${file} cannot be read (${code === 'ELOOP' ? 'a symbolic link' : code})` };
  }
  try {
    const problem = refuseKeyStat(fstatSync(fd), 'file', 0o077) ?? refuseKeyStat(statSync(dir), 'folder', 0o022);
    if (problem) return { problem: `${problem}: ${file}` };
    const key = readFileSync(fd);
    return key.length >= 32 ? { key } : { problem: `the key file holds ${key.length} bytes, not 32: ${file}` };
  } finally {
    closeSync(fd);
  }
}

function refuseKeyStat(st: Stats, what: 'file' | 'folder', open: number): string | null {
  if (what === 'file' ? !st.isFile() : !st.isDirectory()) return `the key ${what} is not a ${what}`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    return `the key ${what} is owned by uid ${st.uid}, not by this user (${uid})`;
  return st.mode & open ? `the key ${what} is open to other users (mode ${(st.mode & 0o777).toString(8)})` : null;
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
  if (
    !doc ||
    typeof doc !== 'object' ||
    typeof doc.mac !== 'string' ||
    doc.commit !== commit ||
    typeof doc.loop !== 'string'
  )
    return null;
  const { mac, ...record } = doc;
  const want = Buffer.from(seal(record as VerdictRecord, key), 'hex');
  const got = Buffer.from(mac as string, 'hex');
  return want.length === got.length && timingSafeEqual(want, got) ? (record as VerdictRecord) : null;
}

function seal(record: VerdictRecord, key: Buffer): string {
  const { ralphkit, loop, commit, pins, time, stories, reviews, weak } = record;
  const sorted = (o: Record<string, unknown>) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1));
  // Reviews are sealed when the record has them; a record without them (an older runner's) seals as it always did.
  const reviewed = reviews === undefined ? [] : [sorted(reviews).map(([id, r]) => [id, sealedReview(r)])];
  // So are weak stories, tagged (an array of pairs, the reviews, never starts with a string); absent: as before.
  const weakPart = weak === undefined ? [] : [['weak', Array.isArray(weak) ? [...weak].map(String).sort() : null]];
  const canonical = JSON.stringify([ralphkit, loop, commit, pins, time, sorted(stories), ...reviewed, ...weakPart]);
  return createHmac('sha256', key).update(canonical).digest('hex');
}

/** A review as sealed: its three fields in a fixed order, whatever else the JSON held. */
function sealedReview(r: unknown): unknown[] {
  const v = (r && typeof r === 'object' ? r : {}) as Partial<ShippedReview>;
  return [v.reviewer ?? null, v.model ?? null, v.commit ?? null];
}

/** The sealed SHIP of story `id` in `record`, when it names the reviewed commit; null otherwise. */
export function readSealedReview(record: Pick<VerdictRecord, 'reviews'> | null, id: string): ShippedReview | null {
  const reviews = record?.reviews;
  if (!reviews || typeof reviews !== 'object' || !Object.hasOwn(reviews, id)) return null;
  const r = reviews[id] as Partial<ShippedReview> | null;
  return r && typeof r.reviewer === 'string' && typeof r.commit === 'string'
    ? { reviewer: r.reviewer, model: typeof r.model === 'string' ? r.model : null, commit: r.commit }
    : null;
}

/**
 * The reviews with `sealed` set on each SHIP that `record` names exactly: same reviewer, model and commit (status and
 * the dashboard). A ledger line is anyone's to append; one that re-attributes a sealed SHIP is only reported.
 */
export function sealReviews(
  reviews: Readonly<Record<string, StoryReview>>,
  record: Pick<VerdictRecord, 'reviews'> | null,
): Record<string, StoryReview> {
  const out: Record<string, StoryReview> = Object.create(null);
  for (const [id, r] of Object.entries(reviews)) {
    const seal = r.verdict === 'ship' && r.commit !== null ? readSealedReview(record, id) : null;
    const sealed = !!seal && seal.commit === r.commit && seal.reviewer === r.reviewer && seal.model === r.model;
    out[id] = sealed ? { ...r, sealed } : r;
  }
  return out;
}

/**
 * Every valid record in the repository: a Map from loop id to its newest record. Records with a bad seal, a commit
 * other than the one they are attached to, or no key to check them are left out. Two git processes whatever the
 * number of notes (one lists them, one `cat-file --batch` reads them all), synchronous for `status` and the
 * dashboard's snapshots, with the runner's git hardening. Any git failure is no records: nothing counts as verified.
 */
export function readVerdictRecordsSync(
  repoRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Map<string, VerdictRecord> {
  const key = readKey(false, env);
  if (!key) return new Map();
  const list = gitSyncBytes(repoRoot, LIST_NOTES);
  const notes = list ? parseNotesList(list.toString('utf8')) : [];
  if (!notes.length) return new Map();
  const batch = gitSyncBytes(repoRoot, ['cat-file', '--batch'], renderBatchInput(notes));
  return batch
    ? collectRecords(
        notes,
        parseCatFileBatch(
          batch,
          notes.map((n) => n.blob),
        ),
        key,
      )
    : new Map();
}

const LIST_NOTES = ['notes', `--ref=${NOTES_REF}`, 'list'];

interface NoteEntry {
  blob: string;
  commit: string;
}

/** `git notes list`: one "<note blob> <annotated object>" per line; anything else is skipped. */
export function parseNotesList(text: string): NoteEntry[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((f) => f.length === 2 && isObjectId(f[0]) && isObjectId(f[1]))
    .map(([blob, commit]) => ({ blob, commit }));
}

function renderBatchInput(notes: readonly NoteEntry[]): string {
  return `${notes.map((n) => n.blob).join('\n')}\n`;
}

/**
 * `git cat-file --batch` output for `shas` asked in that order: "<sha> blob <size>\n<content>\n" each, or
 * "<sha> missing\n". Sizes are bytes, so this reads a Buffer; output that does not follow the order stops the parse.
 */
export function parseCatFileBatch(out: Buffer, shas: readonly string[]): Map<string, string> {
  const blobs = new Map<string, string>();
  let at = 0;
  for (const sha of shas) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) break;
    const header = out.subarray(at, eol).toString('latin1').split(' ');
    if (header[0] !== sha) break;
    if (header[1] === 'missing' && header.length === 2) {
      at = eol + 1;
      continue;
    }
    const size = Number(header[2]);
    if (header.length !== 3 || !Number.isSafeInteger(size) || size < 0 || eol + 1 + size > out.length) break;
    if (header[1] === 'blob') blobs.set(sha, out.subarray(eol + 1, eol + 1 + size).toString('utf8'));
    at = eol + 1 + size + 1;
  }
  return blobs;
}

function collectRecords(
  notes: readonly NoteEntry[],
  blobs: ReadonlyMap<string, string>,
  key: Buffer,
): Map<string, VerdictRecord> {
  const out = new Map<string, VerdictRecord>();
  for (const { blob, commit } of notes) {
    const text = blobs.get(blob);
    const record = text === undefined ? null : parseRecord(text, commit, key);
    if (!record || !isStoryMap(record.stories) || typeof record.time !== 'string') continue;
    const prev = out.get(record.loop);
    if (!prev || prev.time < record.time) out.set(record.loop, record);
  }
  return out;
}

function isStoryMap(value: unknown): value is Record<string, VerdictStatus> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every(isVerdictStatus);
}

/**
 * What one story counts as, for `status` and the dashboard alike, from a sealed record's word on it and the latest
 * ledger verdict (what a runner reported): `rejected` from the ledger (the final gate writes its own verdict lines
 * just before the record, so a latest rejection came after it; a forged one only understates); `verified` and
 * `unverified` only from the record; `reported` when the ledger says verified and no record confirms it (a live
 * loop, or a record that is missing or does not check out). Inputs come from disk: only the three statuses count.
 */
export function planVerification(sealed: unknown, ledger: unknown): VerdictStatus | 'reported' | null {
  if (ledger === 'rejected') return 'rejected';
  if (sealed === 'verified') return 'verified';
  if (ledger === 'verified') return 'reported';
  return sealed === 'unverified' ? 'unverified' : null;
}

/** A story's status in a record's (or any JSON object's) story map, never one inherited from Object.prototype. */
export function readStoryStatus(
  stories: Readonly<Record<string, unknown>> | null | undefined,
  id: string,
): VerdictStatus | undefined {
  if (!stories || !Object.hasOwn(stories, id)) return undefined;
  const value = stories[id];
  return isVerdictStatus(value) ? value : undefined;
}
