// The tip a --parallel run left its plan branch at, sealed. Only the merge queue writes that branch, but an agent can
// move it (refs/heads is its to write, under the sandbox too); the run finds such a move before each merge and when
// it settles with every agent gone. A runner killed with -9 settles nothing, so before each move of its own it writes
// ralph/.runs/<id>/plan-tip.json (read-only to a sandboxed agent), sealed with the verdict record's key (hidden from
// the sandbox), and a resume holds the branch against it (exit 6 when it moved). A run that settled marks the seal
// ended: from then on the branch is yours to commit a fix on before --resume-last.
import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../../util/atomic.js';
import { readTextOrNull } from '../../../util/read.js';
import { loopDir } from '../../store/layout.js';
import { sameMac } from '../../verify/anchors.js';
import { isObjectId } from '../../git/parse.js';

export interface TipSeal {
  /** The tip the runner left the branch at, or is about to move it to. */
  tip: string;
  /** Where it was before: a runner killed between the seal and the move left it there. */
  previous: string;
  /** A runner's commit on the branch under way: its sha is not known before it is made. */
  pending: boolean;
  /** The run settled with no agent alive: what moved the branch since is not the run's to judge. */
  ended: boolean;
}

export type TipCheck = { kind: 'none' } | { kind: 'ok'; seal: TipSeal } | { kind: 'broken'; problem: string };

export function tipSealPath(repoRoot: string, loopId: string): string {
  return path.join(loopDir(repoRoot, loopId), 'plan-tip.json');
}

export function writeTipSeal(repoRoot: string, loopId: string, seal: TipSeal, key: Buffer | null): void {
  const file = tipSealPath(repoRoot, loopId);
  mkdirSync(path.dirname(file), { recursive: true });
  const body = { ralphkit: 1, loop: loopId, ...seal };
  atomicWriteFileSync(file, `${JSON.stringify({ ...body, mac: key ? mac(loopId, seal, key) : null }, null, 2)}\n`);
}

/** The seal as written, checked with `key`: none (an older run, or a new one), one that holds, or why it does not. */
export function readTipSeal(repoRoot: string, loopId: string, key: Buffer | null): TipCheck {
  const file = tipSealPath(repoRoot, loopId);
  const text = readTextOrNull(file);
  if (text === null) return { kind: 'none' };
  const shown = path.relative(repoRoot, file).split(path.sep).join('/') || file;
  const broken = {
    kind: 'broken' as const,
    problem: `the seal of its plan branch's tip in ${shown} does not check out`,
  };
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return broken;
  }
  if (
    doc?.ralphkit !== 1 ||
    doc.loop !== loopId ||
    !isObjectId(doc.tip) ||
    !isObjectId(doc.previous) ||
    typeof doc.pending !== 'boolean' ||
    typeof doc.ended !== 'boolean'
  )
    return broken;
  const seal: TipSeal = { tip: doc.tip, previous: doc.previous, pending: doc.pending, ended: doc.ended };
  if (key && !sameMac(doc.mac, mac(loopId, seal, key))) return broken;
  return { kind: 'ok', seal };
}

/**
 * Whether the branch at `now` is where the seal lets a resume take it: anywhere once the run ended; else the sealed
 * tip or the one before it, or, with a runner's commit under way, a child of the sealed tip that changes only the
 * runner's own files (`changed` lists what it changes, null when `now` is no child of the tip).
 */
export function tipAccepted(
  seal: TipSeal,
  now: string | null,
  changed: readonly string[] | null,
  own: readonly string[],
): boolean {
  if (seal.ended) return true;
  if (now === seal.tip || now === seal.previous) return true;
  return seal.pending && changed !== null && changed.every((f) => own.includes(f));
}

function mac(loopId: string, seal: TipSeal, key: Buffer): string {
  const canonical = JSON.stringify(['ralphkit-plan-tip', 1, loopId, seal.tip, seal.previous, seal.pending, seal.ended]);
  return createHmac('sha256', key).update(canonical).digest('hex');
}
