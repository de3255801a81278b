// The runner's own record of a loop, kept in git objects rather than in ralph/.runs/ (SPEC §6: files there are the
// runner's output, never its input). Two refs per loop: the plan as the runner last settled it (a blob, the
// baseline a resumed loop judges claims against) and the plan commit (the pins). The agent could still move a ref
// with git update-ref; what it cannot do is make the final gate pass, which is what exit 0 rests on.
import { gitOk, runGit, updateRefs } from '../git/git.js';

const REF_ROOT = 'refs/ralphkit/loops';

export function baselineRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/plan`;
}

export function pinsRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/pins`;
}

/** The reviewer's SHIPs the loop has accepted, sealed (run/shipped.ts). */
export function shippedRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/shipped`;
}

/** Stores `text` as a blob and points the loop's plan ref at it. */
export async function recordBaseline(top: string, loopId: string, text: string): Promise<void> {
  await recordBlob(top, baselineRef(loopId), text);
}

/** The plan text the runner last settled for this loop, or null when it never recorded one. */
export async function readBaseline(top: string, loopId: string): Promise<string | null> {
  return readBlob(top, baselineRef(loopId));
}

export async function recordBlob(top: string, ref: string, text: string): Promise<void> {
  const blob = (await gitOk(top, ['hash-object', '-w', '--stdin'], text)).trim();
  await gitOk(top, ['update-ref', ref, blob]);
}

export async function readBlob(top: string, ref: string): Promise<string | null> {
  const r = await runGit(top, ['cat-file', 'blob', ref]);
  return r.code === 0 ? r.stdout : null;
}

export async function recordPinCommit(top: string, loopId: string, commit: string): Promise<void> {
  await gitOk(top, ['update-ref', pinsRef(loopId), commit]);
}

/**
 * A new loop's two refs in one transaction: the plan commit, and as its plan the plan file committed there (`planBlob`,
 * already in git), which is what a resume reads when no plan was recorded yet. The first settlement replaces it.
 */
export async function recordPinsAndPlan(top: string, loopId: string, commit: string, planBlob: string): Promise<void> {
  await updateRefs(top, [{ ref: pinsRef(loopId), sha: commit }, { ref: baselineRef(loopId), sha: planBlob }]);
}

/** The loop's plan commit, or null when none was recorded (or the ref no longer names a commit). */
export async function readPinCommit(top: string, loopId: string): Promise<string | null> {
  const r = await runGit(top, ['rev-parse', '--verify', '--quiet', `${pinsRef(loopId)}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}
