// Branches other than the loop's are the agent's to write too (refs/heads, under --sandbox as well). An adversarial
// pass moved `main` onto a commit whose tree held an engine of its own with a manifest to match: the loop's exit 0 was
// true of its branch, and your `git checkout main` then `./ralph/ralph.sh` ran that engine outside the sandbox. So a
// branch an agent run moved or deleted is put back where the run found it, and what the agent pointed it at is kept
// under the loop's refs (nothing is lost), and the iteration's claims are rejected. A branch checked out in a worktree
// is not moved under it, only named (a commit of yours there, while the agent ran, moves it too). A branch the agent
// created is left: nothing of yours points there.
import path from 'node:path';
import { realpathOrUndefined } from '../../util/read.js';
import { runGit } from '../git/git.js';
import type { Violation } from './types.js';

/**
 * `before` and `after`: each local branch and its commit, read before and after one agent run; `skip`: branches the
 * run may move (the loop's, other loops'); `here`: the branch the loop's own tree has checked out, left like one checked
 * out elsewhere (the runner's resume and end; after an agent run it switches back first). Puts back what moved;
 * returns the violation (undefined: none put back) and what it left, to be named.
 */
export async function restoreMovedBranches(
  top: string,
  loopId: string,
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  skip: (branch: string) => boolean,
  here?: string | null,
): Promise<{ violation?: Violation; left?: string }> {
  const moved = [...before].filter(([b, sha]) => !skip(b) && after.get(b) !== sha);
  if (!moved.length) return {};
  // The loop's own tree is not one of them: a HEAD the agent switched there is switched back after this.
  const checkedOut = await branchesCheckedOut(top);
  const lines: string[] = [];
  const said: string[] = [];
  const left: string[] = [];
  for (const [b, was] of moved) {
    const now = after.get(b);
    const to = now ? `to ${now.slice(0, 7)}` : 'deleted';
    if (b === here) {
      left.push(
        `${b} (${to}; checked out here, so left as it is; it was at ${was.slice(0, 7)}: a resume once you switched off it puts it back)`,
      );
      continue;
    }
    // Unknown: nothing is moved under a worktree that may have it checked out.
    if (!checkedOut || checkedOut.has(b)) {
      left.push(`${b} (${to}; checked out in a worktree, so left as it is; it was at ${was.slice(0, 7)})`);
      continue;
    }
    // no-deref: a branch the agent made a symbolic ref (to a branch of its own) is written itself, not through it.
    lines.push('option no-deref', now ? `update refs/heads/${b} ${was}` : `create refs/heads/${b} ${was}`);
    if (now) lines.push(`update refs/ralphkit/loops/${loopId}/moved/${b} ${now}`);
    said.push(
      `${b} (${to}; put back at ${was.slice(0, 7)}${now ? `, kept as refs/ralphkit/loops/${loopId}/moved/${b}` : ''})`,
    );
  }
  const failed = lines.length ? await putBack(top, lines) : '';
  return {
    ...(said.length
      ? {
          violation: {
            reason: `the agent moved branches other than the loop's: ${said.join(', ')}${failed}; a branch of yours it points elsewhere is what your next checkout of it gives you`,
            files: [],
          },
        }
      : {}),
    ...(left.length ? { left: `a branch other than the loop's moved while the agent ran: ${left.join(', ')}` } : {}),
  };
}

async function putBack(top: string, lines: string[]): Promise<string> {
  const r = await runGit(top, ['update-ref', '--stdin'], { input: `${lines.join('\n')}\n` });
  return r.code === 0 ? '' : ` (putting them back failed: ${r.stderr.trim()})`;
}

/** The branches checked out in any worktree of the repository (`git worktree list --porcelain`); null: unknown. */
async function branchesCheckedOut(top: string): Promise<Set<string> | null> {
  const r = await runGit(top, ['worktree', 'list', '--porcelain']);
  if (r.code !== 0) return null;
  const out = new Set<string>();
  for (const entry of r.stdout.split('\n\n')) {
    const at = /^worktree (.*)$/m.exec(entry)?.[1];
    const branch = /^branch refs\/heads\/(.*)$/m.exec(entry)?.[1];
    if (branch && at && real(at) !== real(top)) out.add(branch);
  }
  return out;
}

function real(p: string): string {
  return realpathOrUndefined(p) ?? path.resolve(p);
}
