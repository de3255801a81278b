import { describe, expect, it } from 'vitest';
import { explainGitRefusal } from '../../../../src/engine/git/git.js';
import { hardenedGitEnv, holdRunnerPath } from '../../../../src/engine/git/harden.js';

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

describe('hardenedGitEnv', () => {
  it("puts git's own folder first on its PATH (a filter's program or sh found there before a folder the agent can write), and the rest of PATH after it", () => {
    const env = hardenedGitEnv({ PATH: '/home/u/.local/bin:/usr/bin', HOME: '/home/u' }, '/usr/bin/git');
    expect(env.PATH).toBe('/usr/bin:/home/u/.local/bin:/usr/bin');
    expect(env.GIT_NO_REPLACE_OBJECTS).toBe('1');
    expect(env.GIT_ATTR_NOSYSTEM).toBe('1');
    // A git found by the system's own lookup (no absolute path): PATH as it was.
    expect(hardenedGitEnv({ PATH: '/a:/b' }, 'git').PATH).toBe('/a:/b');
  });

  it("once the loop holds PATH, git looks there, not on the live PATH (where npx put the repository's node_modules/.bin)", () => {
    holdRunnerPath(['/home/u/.local/bin', '/usr/bin']);
    try {
      const live = { PATH: '/repo/node_modules/.bin:/home/u/.local/bin:/usr/bin' };
      expect(hardenedGitEnv(live, '/usr/bin/git').PATH).toBe('/usr/bin:/home/u/.local/bin:/usr/bin');
      expect(hardenedGitEnv(live, 'git').PATH).toBe('/home/u/.local/bin:/usr/bin');
    } finally {
      holdRunnerPath(null);
    }
  });

  it('once the loop holds its environment, git goes without the variables that named the repository (a library folder the agent fills)', () => {
    holdRunnerPath(['/usr/bin'], ['LD_LIBRARY_PATH', 'GIT_TEMPLATE_DIR']);
    try {
      const live = { PATH: '/usr/bin', LD_LIBRARY_PATH: '/repo/build/lib', GIT_TEMPLATE_DIR: '/repo/t', LANG: 'C' };
      const env = hardenedGitEnv(live, '/usr/bin/git');
      expect(env.LD_LIBRARY_PATH).toBeUndefined();
      expect(env.GIT_TEMPLATE_DIR).toBeUndefined();
      expect(env.LANG).toBe('C');
    } finally {
      holdRunnerPath(null);
    }
  });
});
