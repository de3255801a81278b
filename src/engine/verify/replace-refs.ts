// `refs/replace/<id>` has git show another object wherever <id> is named (git-replace(1)). The runner reads none
// (GIT_NO_REPLACE_OBJECTS, git/harden.ts), so what it verifies is the commit itself; your git does read them. An
// adversarial pass replaced the verified commit with a look-alike whose tree held an engine of its own, and your
// merge of the branch brought that engine into your tree, where the next ./ralph/ralph.sh ran it outside the sandbox.
// Tags likewise: git takes a bare name for a tag before a branch, so a tag `ralph/add` the agent makes is what your
// `git merge ralph/add` merges (a pass did, with an engine of its own in it). So the replace refs and tags the loop
// did not start with, or that moved since, are put back when the loop ends, what the agent made kept under the loop's
// refs; under --sandbox refs/replace is read-only to the agent as well (run/sandbox.ts), packed-refs is checked here.
import { gitOk } from '../git/git.js';

/**
 * Puts the replace refs and tags of `top` back as `held` (the loop's start) had them: one added is deleted, one moved
 * is set back; what the agent had made is kept as `refs/ralphkit/loops/<id>/moved/<ref>`. Returns the refs put back.
 */
export async function restoreEndRefs(
  top: string,
  loopId: string,
  held: ReadonlyMap<string, string>,
): Promise<string[]> {
  const out = await gitOk(top, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/replace/', 'refs/tags/']);
  const now = new Map(out.split('\n').flatMap((l) => (l.trim() ? [l.trim().split(' ') as [string, string]] : [])));
  const changed = [...now].filter(([ref, sha]) => held.get(ref) !== sha);
  const gone = [...held].filter(([ref]) => !now.has(ref));
  const lines = [
    ...changed.flatMap(([ref, sha]) => [
      'option no-deref',
      held.has(ref) ? `update ${ref} ${held.get(ref)}` : `delete ${ref}`,
      `update refs/ralphkit/loops/${loopId}/moved/${ref} ${sha}`,
    ]),
    ...gone.map(([ref, sha]) => `create ${ref} ${sha}`),
  ];
  if (lines.length) await gitOk(top, ['update-ref', '--stdin'], `${lines.join('\n')}\n`);
  return [...changed, ...gone].map(([ref]) => ref);
}
