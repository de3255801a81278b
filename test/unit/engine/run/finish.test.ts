// The closing hint of a loop that worked in a worktree of its own (--worktree, --parallel): the user's tree was left
// as it was, so the hint says where the work is and what to type (run/finish.ts withWorkWhere).
import { describe, expect, it } from 'vitest';
import { withWorkWhere } from '../../../../src/engine/run/finish.js';

const inWorktree = { branch: 'ralph/demo', worktree: { path: '/repo.ralph-worktrees/x', branch: 'ralph/demo' } };

describe('withWorkWhere', () => {
  it('done: names the branch and the switch to it', () => {
    expect(withWorkWhere(inWorktree, { code: 0, hint: undefined })).toBe(
      'the work is on ralph/demo, not in your working tree (left as it was): see it with git switch ralph/demo',
    );
  });

  it('stopped: keeps the hint and says how to look without switching (a switch would block --resume)', () => {
    const hint = withWorkWhere(inWorktree, { code: 130, hint: 'continue with: ./ralph/ralph.sh --resume-last' });
    expect(hint).toBe(
      'continue with: ./ralph/ralph.sh --resume-last; the work so far is on ralph/demo, not in your working tree: look at it with git log ralph/demo',
    );
    expect(hint).not.toContain('git switch');
  });

  it("a loop in the user's own tree: the hint as it was", () => {
    expect(withWorkWhere({ branch: 'ralph/demo' }, { code: 0, hint: undefined })).toBeUndefined();
    expect(withWorkWhere({ branch: 'ralph/demo' }, { code: 1, hint: 'raise the limit' })).toBe('raise the limit');
  });

  it('a branch name a shell would expand is quoted', () => {
    expect(withWorkWhere({ ...inWorktree, branch: 'ralph/$(x)' }, { code: 0, hint: undefined })).toContain(
      "git switch 'ralph/$(x)'",
    );
  });
});
