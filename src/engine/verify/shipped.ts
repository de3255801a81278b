// The reviewer's SHIPs a loop accepted, kept across a resume (SPEC §11), so that the final gate of a later run seals
// them again instead of leaving them "(reported)". Kept in a ref of the runner's, sealed with the verdict record's key
// like the record itself: a ref someone rewrote without the key, or a SHIP of a commit HEAD no longer holds, is dropped.
import type { ShippedReview } from './types.js';
import { isAncestor } from '../git/head.js';
import { gitOk } from '../git/git.js';
import { readBlob, recordBlob, shippedRef } from './baseline.js';
import {
  parseRecord,
  readSealedReview,
  readVerdictRecordsSync,
  renderRecord,
  type VerdictRecord,
} from '../store/verdict-record.js';

/** A SHIP as records hold it: who, with which model, of which commit (where its diff started stays in memory). */
export function sealable(r: ShippedReview): ShippedReview {
  return { reviewer: r.reviewer, model: r.model, commit: r.commit };
}

/** Seals `shipped` into the loop's ref, named after `head` (the commit it was settled at). */
export async function recordShipped(
  top: string,
  loopId: string,
  head: string,
  shipped: ReadonlyMap<string, ShippedReview>,
  key: Buffer,
): Promise<void> {
  const record: VerdictRecord = {
    ralphkit: 1,
    loop: loopId,
    commit: head,
    pins: null,
    time: new Date().toISOString(),
    stories: {},
    reviews: Object.fromEntries([...shipped].map(([id, r]) => [id, sealable(r)])),
  };
  await recordBlob(top, shippedRef(loopId), renderRecord(record, key));
}

/**
 * A resumed loop's SHIPs: from its sealed ref, else from its newest valid verdict record (a loop settled before the
 * ref existed); only those whose reviewed commit is HEAD or an ancestor of it.
 */
export async function readShipped(
  top: string,
  loopId: string,
  head: string | null,
  key: Buffer | null,
): Promise<Map<string, ShippedReview>> {
  const out = new Map<string, ShippedReview>();
  if (!key || !head) return out;
  const record =
    parseSealed(await readBlob(top, shippedRef(loopId)), loopId, key) ??
    readVerdictRecordsSync(top).get(loopId) ??
    null;
  for (const id of Object.keys(record?.reviews ?? {})) {
    const review = readSealedReview(record, id);
    if (review && (await isAncestor(top, review.commit, head))) out.set(id, review);
  }
  return out;
}

function parseSealed(text: string | null, loopId: string, key: Buffer): VerdictRecord | null {
  if (text === null) return null;
  let commit: unknown;
  try {
    commit = (JSON.parse(text) as { commit?: unknown })?.commit;
  } catch {
    return null;
  }
  const record = typeof commit === 'string' ? parseRecord(text, commit, key) : null;
  return record?.loop === loopId ? record : null;
}

/** A story whose SHIP no longer covers its work: `by` changed `files` of the reviewed diff, and no reviewer read it. */
export interface StaleShip {
  id: string;
  /** The commit it was shipped at. */
  shipped: string;
  by: string;
  files: string[];
}

/**
 * The SHIPs of this run (those with the base their diff started at) whose reviewed files a later commit up to `tip`
 * changed where no reviewer read it: a commit outside every SHIP's range (a claim of a story with `"review": false`,
 * a commit between claims). `own` (the plan, its log: the runner's commits) does not count. `read`: every SHIP of this
 * run, those since dropped too (a story rejected after its review): what a reviewer read stays read. A SHIP read back
 * at a resume has no base, and is not judged here.
 */
export async function findStaleShips(
  top: string,
  tip: string,
  shipped: ReadonlyMap<string, ShippedReview>,
  own: readonly string[],
  read: readonly ShippedReview[] = [],
): Promise<StaleShip[]> {
  const ranged = [...shipped].filter(([, s]) => s.base !== undefined);
  const candidates = ranged.filter(([, s]) => s.commit !== tip);
  if (!candidates.length) return [];
  // Every commit some reviewer read: each SHIP's range, from where its diff started to what it shipped.
  const reviewed = new Set<string>();
  const ranges = new Set(
    [...ranged.map(([, r]) => r), ...read.filter((r) => r.base !== undefined)].map((s) =>
      s.base ? `${s.base}..${s.commit}` : s.commit,
    ),
  );
  for (const range of ranges)
    for (const c of (await gitOk(top, ['rev-list', range, '--'])).split('\n')) if (c) reviewed.add(c);
  const out: StaleShip[] = [];
  for (const [id, s] of candidates) {
    const files = new Set(await changedFiles(top, s.base ?? null, s.commit));
    for (const f of own) files.delete(f);
    for (const later of await commitsWithFiles(top, `${s.commit}..${tip}`)) {
      if (reviewed.has(later.commit)) continue;
      const touched = later.files.filter((f) => files.has(f));
      if (touched.length) {
        out.push({ id, shipped: s.commit, by: later.commit, files: touched });
        break;
      }
    }
  }
  return out;
}

async function changedFiles(top: string, base: string | null, commit: string): Promise<string[]> {
  const args = base
    ? ['diff', '--name-only', '--no-renames', '-z', base, commit, '--']
    : ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit];
  return (await gitOk(top, args)).split('\0').filter(Boolean);
}

/** The commits of `range`, newest first, each with the files it changed (against its first parent). */
async function commitsWithFiles(top: string, range: string): Promise<Array<{ commit: string; files: string[] }>> {
  const out = await gitOk(top, [
    'log',
    '--no-renames',
    '--first-parent',
    '--format=%x01%H',
    '--name-only',
    '-z',
    range,
    '--',
  ]);
  return out
    .split('\x01')
    .filter(Boolean)
    .map((chunk) => {
      const [commit, ...files] = chunk.split('\0');
      return { commit, files: files.map((f) => f.replace(/^\n/, '')).filter(Boolean) };
    });
}
