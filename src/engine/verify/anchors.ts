// The loop's trust anchors (SPEC §6): its plan commit (`refs/ralphkit/loops/<id>/pins`) and its plan record
// (`.../plan`, a blob) are refs, which the agent can move (a sandboxed one too: it commits, so `.git/refs` is its to
// write). A resume reads both, so they are bound to the loop: every time the runner moves them it first writes
// ralph/.runs/<id>/anchors.json (read-only to a sandboxed agent) naming the values, sealed with the verdict record's
// key (hidden from the sandbox). A resume whose refs are not what the seal names stops (exit 6).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull } from '../../util/read.js';
import { gitOk, runGit } from '../git/git.js';
import { updateRefs } from '../git/head.js';
import { loopDir } from '../store/layout.js';
import { baselineRef, pinsRef, shippedRef } from './baseline.js';
import { isObjectId } from '../git/parse.js';
import { isEndRef } from './replace-refs.js';

/** What the two refs name: the plan commit and the plan record's blob (null: no such ref). */
export interface AnchorValues {
  pins: string | null;
  plan: string | null;
}

interface AnchorFile extends AnchorValues {
  ralphkit: 1;
  loop: string;
  /** What the refs named just before the runner moved them: a runner killed between the two writes left them so. */
  previous: AnchorValues;
  /** HMAC-SHA256 with the verdict key; null when the runner had no key. */
  mac: string | null;
}

/** How a resumed loop's refs compare with what the runner sealed: `problems` is empty when they may be used. */
export interface AnchorCheck {
  problems: string[];
  /** The values the runner sealed, when the seal checks out (or could not be checked: no key); else null. */
  sealed: AnchorValues | null;
  /** Said as a warning, not a stop: the seal could not be checked. */
  warning?: string;
}

export function anchorsPath(repoRoot: string, loopId: string): string {
  return path.join(loopDir(repoRoot, loopId), 'anchors.json');
}

/** The loop's two refs as they are now, in one git call. */
export async function readAnchorRefs(cwd: string, loopId: string): Promise<AnchorValues> {
  return (await readLoopRefs(cwd, loopId)).anchors;
}

/**
 * readAnchorRefs, and whether the loop's SHIPs ref exists (verify/shipped.ts), in the same git process: a new loop
 * named as an earlier one finds that loop's refs, and an old SHIPs record must be written over, not read on a resume.
 */
export async function readLoopRefs(
  cwd: string,
  loopId: string,
): Promise<{ anchors: AnchorValues; shipped: boolean; held: Map<string, string>; branches: Map<string, string> }> {
  // Every ref, in one process: the loop's own, and yours (the branches, and those held for the end: replace-refs.ts).
  const out = await gitOk(cwd, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const anchors: AnchorValues = { pins: null, plan: null };
  let shipped = false;
  const held = new Map<string, string>();
  const branches = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [ref, sha] = line.trim().split(' ');
    if (!ref || !sha) continue;
    if (ref === pinsRef(loopId)) anchors.pins = sha;
    if (ref === baselineRef(loopId)) anchors.plan = sha;
    if (ref === shippedRef(loopId)) shipped = true;
    if (ref.startsWith('refs/heads/')) branches.set(ref.slice('refs/heads/'.length), sha);
    if (isEndRef(ref)) held.set(ref, sha);
  }
  return { anchors, shipped, held, branches };
}

/**
 * Moves the loop's refs from the runner's own `previous` values to `next`, sealing `next` first: a runner killed
 * between the two leaves the refs at what the seal names as `previous`, which a resume accepts and moves on to `next`.
 * A ref the runner does not move is left as it is: one that someone else moved stays moved, for the resume to find.
 */
export async function moveAnchoredRefs(
  cwd: string,
  loopId: string,
  next: AnchorValues,
  previous: AnchorValues,
  key: Buffer | null,
): Promise<void> {
  writeAnchorFile(cwd, loopId, next, previous, key);
  const moves = [
    ...(next.pins && next.pins !== previous.pins ? [{ ref: pinsRef(loopId), sha: next.pins }] : []),
    ...(next.plan && next.plan !== previous.plan ? [{ ref: baselineRef(loopId), sha: next.plan }] : []),
  ];
  // One transaction, one git process: both refs move or neither does.
  if (moves.length) await updateRefs(cwd, moves);
}

/**
 * A loop's refs set at its start, sealed: the plan commit, and the plan text as its record (`hook start`, which has
 * no trust of its own to settle). Whatever the refs named before (a session's earlier loop) is the seal's `previous`.
 */
export async function anchorNewLoop(
  cwd: string,
  loopId: string,
  commit: string,
  planText: string,
  key: Buffer | null,
): Promise<void> {
  const plan = (await gitOk(cwd, ['hash-object', '-w', '--stdin'], planText)).trim();
  await moveAnchoredRefs(cwd, loopId, { pins: commit, plan }, await readAnchorRefs(cwd, loopId), key);
}

function writeAnchorFile(
  cwd: string,
  loopId: string,
  next: AnchorValues,
  previous: AnchorValues,
  key: Buffer | null,
): void {
  const body = {
    ralphkit: 1 as const,
    loop: loopId,
    pins: next.pins,
    plan: next.plan,
    previous: { pins: previous.pins, plan: previous.plan },
  };
  const file = anchorsPath(cwd, loopId);
  mkdirSync(path.dirname(file), { recursive: true });
  atomicWriteFileSync(file, `${JSON.stringify({ ...body, mac: key ? seal(body, key) : null }, null, 2)}\n`);
}

function seal(body: Omit<AnchorFile, 'mac'>, key: Buffer): string {
  const canonical = JSON.stringify([
    'ralphkit-anchors',
    body.ralphkit,
    body.loop,
    body.pins,
    body.plan,
    body.previous.pins,
    body.previous.plan,
  ]);
  return createHmac('sha256', key).update(canonical).digest('hex');
}

/**
 * A resumed loop's refs held against its seal. No seal and no refs: nothing was recorded (a loop stopped before its
 * pins were taken). A seal that does not check out, or a ref naming neither the sealed value nor the one before it, is
 * a problem; refs at the sealed `previous` (a kill between the runner's two writes) are not.
 */
export async function checkAnchors(cwd: string, loopId: string, key: Buffer | null): Promise<AnchorCheck> {
  const refs = await readAnchorRefs(cwd, loopId);
  const file = readAnchorFile(cwd, loopId);
  const shown = path.relative(cwd, anchorsPath(cwd, loopId)).split(path.sep).join('/');
  if (file === null) {
    if (refs.pins === null && refs.plan === null) return { problems: [], sealed: null };
    return {
      problems: [
        `it has no seal of its refs (${shown} is missing or not readable: a loop started by an older ralphkit, or the file was removed)`,
      ],
      sealed: null,
    };
  }
  const { mac, ...body } = file;
  if (key && !sameMac(mac, seal(body, key))) {
    return {
      problems: [
        `the seal of its refs in ${shown} does not check out (the file was changed, or the key in the ralphkit config folder was replaced)`,
      ],
      sealed: null,
    };
  }
  const warning = key
    ? undefined
    : `the seal of loop ${loopId}'s refs could not be checked (no key to check it with); its refs are compared with ${shown} as written`;
  const problems: string[] = [];
  // A ref that is gone is moved too: `previous` is null only at a loop's first write, and a kill there is that rare.
  const moved = (now: string | null, sealed: string | null, before: string | null) =>
    now !== sealed && (now === null || now !== before);
  if (moved(refs.pins, file.pins, file.previous.pins))
    problems.push(renderMoved(pinsRef(loopId), refs.pins, file.pins, 'its plan commit: the tests checks run with'));
  if (moved(refs.plan, file.plan, file.previous.plan))
    problems.push(renderMoved(baselineRef(loopId), refs.plan, file.plan, "the runner's record of the plan"));
  return { problems, sealed: { pins: file.pins, plan: file.plan }, ...(warning ? { warning } : {}) };
}

function renderMoved(ref: string, now: string | null, sealed: string | null, what: string): string {
  return `${ref} (${what}) ${now ? `points at ${now.slice(0, 12)}` : 'is gone'}, but the loop recorded ${sealed ? sealed.slice(0, 12) : 'none'}`;
}

/** Moves each ref that names the sealed `previous` (a kill between the runner's writes) on to the sealed value. */
export async function restoreAnchoredRefs(cwd: string, loopId: string, sealed: AnchorValues): Promise<string[]> {
  const refs = await readAnchorRefs(cwd, loopId);
  const moved: string[] = [];
  for (const [ref, now, want] of [
    [pinsRef(loopId), refs.pins, sealed.pins],
    [baselineRef(loopId), refs.plan, sealed.plan],
  ] as const) {
    if (!want || now === want) continue;
    const r = await runGit(cwd, ['update-ref', ref, want]);
    if (r.code !== 0)
      throw new Error(
        `could not point ${ref} back at ${want.slice(0, 12)} (the object may be gone): ${r.stderr.trim()}`,
      );
    moved.push(ref);
  }
  return moved;
}

function readAnchorFile(cwd: string, loopId: string): AnchorFile | null {
  const text = readTextOrNull(anchorsPath(cwd, loopId));
  if (text === null) return null;
  try {
    const doc = JSON.parse(text) as Partial<AnchorFile>;
    const sha = (v: unknown) => v === null || isObjectId(v);
    const prev = doc?.previous;
    if (
      doc?.ralphkit !== 1 ||
      doc.loop !== loopId ||
      !sha(doc.pins) ||
      !sha(doc.plan) ||
      !prev ||
      !sha(prev.pins) ||
      !sha(prev.plan)
    )
      return null;
    if (doc.mac !== null && typeof doc.mac !== 'string') return null;
    return {
      ralphkit: 1,
      loop: loopId,
      pins: doc.pins!,
      plan: doc.plan!,
      previous: { pins: prev.pins, plan: prev.plan },
      mac: doc.mac,
    };
  } catch {
    return null;
  }
}

/** A hex MAC as read from a file (anything) against the one computed, in constant time. */
export function sameMac(got: unknown, want: string): boolean {
  if (typeof got !== 'string') return false;
  const a = Buffer.from(got, 'hex');
  const b = Buffer.from(want, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
