import { describe, expect, it } from 'vitest';
import { explainGitRefusal } from '../../../../src/engine/git/git.js';

describe('explainGitRefusal: what git said about --cwd, for the user', () => {
  it.each([
    ['fatal: not a git repository (or any of the parent directories): .git\n', 'not a git repository: /r', /git init/],
    ['', 'not a git repository: /r', /git init/],
    [
      "fatal: detected dubious ownership in repository at '/r'\nTo add an exception for this directory, call:\n\n\tgit config --global --add safe.directory /r\n",
      "git refuses /r: detected dubious ownership in repository at '/r'",
      /^To add an exception for this directory, call: git config --global --add safe\.directory \/r$/,
    ],
    ['fatal: invalid gitfile format: /r/.git\n', 'git refuses /r: invalid gitfile format: /r/.git', undefined],
  ])('%j', (stderr, message, hint) => {
    const refusal = explainGitRefusal('/r', stderr);
    expect(refusal.message).toBe(message);
    if (hint) expect(refusal.hint).toMatch(hint);
    else expect(refusal.hint).toBeUndefined();
  });
});
