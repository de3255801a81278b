// `refs/replace/<id>` has git show another object wherever <id> is named (git-replace(1)). The runner reads none
// (GIT_NO_REPLACE_OBJECTS, git/harden.ts), so what it verifies is the commit itself; your git does read them. An
// adversarial pass replaced the verified commit with a look-alike whose tree held an engine of its own, and your
// merge of the branch brought that engine into your tree, where the next ./ralph/ralph.sh ran it outside the sandbox.
// So the replace refs the loop did not start with are deleted when the loop ends; under --sandbox refs/replace is
// read-only to the agent as well (run/sandbox.ts), which leaves packed-refs, checked here too.
import { gitOk } from '../git/git.js';

/** Deletes the replace refs of `top` that `held` (the loop's start) lacks; returns them. */
export async function dropAddedReplaceRefs(top: string, held: readonly string[]): Promise<string[]> {
  const now = (await gitOk(top, ['for-each-ref', '--format=%(refname)', 'refs/replace/'])).split('\n');
  const added = now.map((r) => r.trim()).filter((r) => r && !held.includes(r));
  if (added.length) await gitOk(top, ['update-ref', '--stdin'], added.map((r) => `delete ${r}\n`).join(''));
  return added;
}
