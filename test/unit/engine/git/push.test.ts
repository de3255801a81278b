import { describe, expect, it } from 'vitest';
import { renderGitComplaint } from '../../../../src/engine/git/push.js';

describe('renderGitComplaint', () => {
  it.each([
    [
      'a remote hook that refuses',
      "remote: policy: no pushes\nTo /srv/remote.git\n ! [remote rejected] a -> a (pre-receive hook declined)\nerror: failed to push some refs to '/srv/remote.git'\n",
      "remote: policy: no pushes | ! [remote rejected] a -> a (pre-receive hook declined) | error: failed to push some refs to '/srv/remote.git'",
    ],
    [
      'a password in a URL git quotes',
      "fatal: unable to access 'https://bot:ghp_s3cret@github.com/o/r.git/': The requested URL returned error: 403",
      "fatal: unable to access 'https://***@github.com/o/r.git/': The requested URL returned error: 403",
    ],
    [
      'only the last lines',
      Array.from({ length: 10 }, (_, i) => `remote: line ${i}`).join('\n'),
      'remote: line 4 | remote: line 5 | remote: line 6 | remote: line 7 | remote: line 8 | remote: line 9',
    ],
    ['nothing said', '\n\n', ''],
  ])('%s', (_name, stderr, want) => {
    expect(renderGitComplaint(stderr)).toBe(want);
  });
});
