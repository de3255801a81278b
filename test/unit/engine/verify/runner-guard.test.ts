// Which .git/config changes matter (verify/guard-config.ts): git's own upstream records are kept, a hooks path is
// put back without rejecting the work, anything else (a filter, an include, fsmonitor) rejects the iteration.
import { describe, expect, it } from 'vitest';
import { planConfigChange, readConfigEntries } from '../../../../src/engine/verify/guard-config.js';

const cfg = (text: string) => Buffer.from(text);

describe('readConfigEntries', () => {
  it.each([
    ['[core]\n\tbare = false\n', { 'core.bare': ['false'] }],
    [
      '[branch "ralph/x"]\n\tremote = origin\n\tmerge = refs/heads/ralph/x\n',
      { 'branch.ralph/x.remote': ['origin'], 'branch.ralph/x.merge': ['refs/heads/ralph/x'] },
    ],
    ['[Filter "lfs"]\n  Clean = git-lfs clean -- %f\n', { 'filter.lfs.clean': ['git-lfs clean -- %f'] }],
    ['[include]\n path = a\n path = b\n', { 'include.path': ['a', 'b'] }],
    [
      '# comment\n[core] hooksPath = .husky\n; more\n[alias]\n\tst\n',
      { 'core.hookspath': ['.husky'], 'alias.st': ['true'] },
    ],
  ])('%j', (text, entries) => {
    expect(Object.fromEntries(readConfigEntries(text))).toEqual(entries);
  });
});

describe('planConfigChange', () => {
  const base = '[core]\n\tbare = false\n';
  it.each([
    ['nothing', base, []],
    [
      'git push -u',
      `${base}[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n`,
      ['branch.main.merge', 'branch.main.remote'],
    ],
    ['a filter', `${base}[filter "x"]\n\tsmudge = sh evil.sh\n`, ['filter.x.smudge']],
    ['a changed value', '[core]\n\tbare = true\n', ['core.bare']],
    ['a removed file', null, ['core.bare']],
  ])('%s', (_, after, keys) => {
    expect(planConfigChange(cfg(base), after === null ? null : cfg(after))).toEqual(keys);
  });
});
