// Which folders of the repository hold what your git hooks run: the hooks folder itself, and husky's script folder.
import { describe, expect, it } from 'vitest';
import { hookScriptFolders, renderHookScripts } from '../../../../src/engine/verify/hook-scripts.js';

describe('hookScriptFolders', () => {
  const top = '/nonexistent/repo';
  it("a hooks folder inside the repository; husky's `_` adds the folder its stubs run scripts from", () => {
    expect(hookScriptFolders(top, [`${top}/.githooks`])).toEqual(['.githooks']);
    expect(hookScriptFolders(top, [`${top}/.husky/_`])).toEqual(['.husky/_', '.husky']);
    expect(hookScriptFolders(top, [`${top}/tools/hooks/_`, `${top}/tools/hooks`])).toEqual([
      'tools/hooks/_',
      'tools/hooks',
    ]);
  });

  it("git's own hooks folder, one outside the repository, and the repository itself are none of them", () => {
    expect(hookScriptFolders(top, [`${top}/.git/hooks`, '/home/me/hooks', `${top}/../other/_`, top])).toEqual([]);
  });

  it('the warning names the files, the folders and the diff to read', () => {
    expect(renderHookScripts(['.husky/post-merge'], ['.husky/_', '.husky'], 'abcdef0123')).toContain(
      '.husky/post-merge; they run outside any sandbox on your next commit, merge or checkout of this work: read them first (git diff abcdef0 -- .husky/_ .husky)',
    );
  });
});
