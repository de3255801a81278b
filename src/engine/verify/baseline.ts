// The runner's own record of a loop, kept in git objects rather than in ralph/.runs/ (SPEC §6: files there are the
// runner's output, never its input). Two refs per loop: the plan as the runner last settled it (a blob, the
// baseline a resumed loop judges claims against) and the plan commit (the pins). The agent could still move a ref
// with git update-ref; what it cannot do is make the final gate pass, which is what exit 0 rests on.
import { gitOk, runGit } from '../git/git.js';
import { storyRefPart } from '../../prd/story-ref.js';

const REF_ROOT = 'refs/ralphkit/loops';

export function baselineRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/plan`;
}

export function pinsRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/pins`;
}

/** The reviewer's SHIPs the loop has accepted, sealed (verify/shipped.ts). */
export function shippedRef(loopId: string): string {
  return `${REF_ROOT}/${loopId}/shipped`;
}

/** Where a --parallel story's failed attempt stays reachable: the story id encoded (prd/story-ref.ts), the head's first 12 hex digits. */
export function attemptRef(loopId: string, storyId: string, head: string): string {
  return `${REF_ROOT}/${loopId}/attempts/${storyRefPart(storyId)}/${head.slice(0, 12)}`;
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

/** The loop's plan commit, or null when none was recorded (or the ref no longer names a commit). */
export async function readPinCommit(top: string, loopId: string): Promise<string | null> {
  const r = await runGit(top, ['rev-parse', '--verify', '--quiet', `${pinsRef(loopId)}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}
