// Branch names with the verdict of `git check-ref-format --branch`, shared by the validator's unit test
// and the test that asks real git. `stricter` marks the one name ralphkit refuses although git allows it.
export interface BranchNameCase {
  name: string;
  valid: boolean;
  /** Part of the reason ralphkit gives, for invalid names. */
  reason?: string;
  stricter?: boolean;
}

export const BRANCH_NAMES: BranchNameCase[] = [
  { name: 'ralph/task-priority', valid: true },
  { name: 'main', valid: true },
  { name: 'feature/a/b/c', valid: true },
  { name: 'fix_123.v2', valid: true },
  { name: 'a@b', valid: true },
  { name: 'x.lockfile', valid: true },
  { name: 'ünïcødé/branch', valid: true },
  { name: 'with#hash', valid: true },
  { name: 'semi;colon', valid: true },
  { name: 'a-', valid: true },
  { name: '', valid: false, reason: 'it is empty' },
  { name: '-rf', valid: false, reason: 'starts with "-"' },
  { name: 'HEAD', valid: false, reason: 'names the current commit' },
  { name: '@', valid: false, reason: 'names the current commit', stricter: true },
  { name: 'my branch', valid: false, reason: 'a space' },
  { name: 'tab\there', valid: false, reason: 'control character U+0009' },
  { name: 'new\nline', valid: false, reason: 'control character U+000A' },
  { name: 'del\x7f', valid: false, reason: 'control character U+007F' },
  { name: 'a~1', valid: false, reason: '"~"' },
  { name: 'a^', valid: false, reason: '"^"' },
  { name: 'a:b', valid: false, reason: '":"' },
  { name: 'what?', valid: false, reason: '"?"' },
  { name: 'star*', valid: false, reason: '"*"' },
  { name: 'open[', valid: false, reason: '"["' },
  { name: 'back\\slash', valid: false, reason: '"\\"' },
  { name: 'a..b', valid: false, reason: '".."' },
  { name: 'a@{1}', valid: false, reason: '"@{"' },
  { name: '/lead', valid: false, reason: 'starts with "/"' },
  { name: 'trail/', valid: false, reason: 'ends with "/"' },
  { name: 'a//b', valid: false, reason: '"//"' },
  { name: 'dot.', valid: false, reason: 'ends with "."' },
  { name: '.hidden', valid: false, reason: '".hidden" starts with "."' },
  { name: 'ralph/.x', valid: false, reason: '".x" starts with "."' },
  { name: 'a/./b', valid: false, reason: '"." starts with "."' },
  { name: 'x.lock', valid: false, reason: '"x.lock" ends with ".lock"' },
  { name: 'x.lock/y', valid: false, reason: '"x.lock" ends with ".lock"' },
  { name: 'ralph/$(touch pwned)', valid: false, reason: 'a space' },
  { name: 'ralph/`id`', valid: true },
  { name: 'a/-b', valid: true },
  { name: 'refs/heads/x', valid: true },
  { name: 'a.lock.b', valid: true },
  { name: 'nbsp\u00a0x', valid: true },
  { name: 'emoji\u{1f600}', valid: true },
  { name: '.', valid: false, reason: 'ends with "."' },
  { name: '..', valid: false, reason: '".."' },
  { name: 'a/..', valid: false, reason: '".."' },
  { name: '@{-1}', valid: false, reason: '"@{"' },
  { name: 'a/.lock', valid: false, reason: '".lock" starts with "."' },
];
