// The reviewer's SHIPs a loop accepted, kept across a resume (SPEC §11), so that the final gate of a later run seals
// them again instead of leaving them "(reported)". Kept in a ref of the runner's, sealed with the verdict record's key
// like the record itself: a ref someone rewrote without the key, or a SHIP of a commit HEAD no longer holds, is dropped.
import type { ShippedReview } from './types.js';
import { isAncestor } from '../git/head.js';
import { readBlob, recordBlob, shippedRef } from './baseline.js';
import {
  parseRecord,
  readSealedReview,
  readVerdictRecordsSync,
  renderRecord,
  type VerdictRecord,
} from '../store/verdict-record.js';

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
    reviews: Object.fromEntries(shipped),
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
