// readPinDrift (what --deliver pr-merge refuses to merge) on real git: every kind of pin a later commit can change.
import { describe, expect, it } from 'vitest';
import { readPinDrift } from '../../../../src/engine/verify/pin-drift.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git, gitdir, writeFiles } from '../../../support/repo.js';
import { story } from '../../../support/plan.js';

const prd = {
  branchName: 'ralph/x',
  checks: ['npm test'],
  userStories: [story('US-1', { title: 't', acceptanceCriteria: ['a'], mayChange: ['test/'] })],
} as unknown as Prd;
const MANIFEST = (test: string, extra = {}) =>
  `${JSON.stringify({ name: 'x', scripts: { test }, dependencies: {}, ...extra }, null, 2)}\n`;

async function pinned(files: Record<string, string>) {
  const dir = gitdir({
    'package.json': MANIFEST('vitest run'),
    'test/a.test.js': 'assert(1)\n',
    'src/a.js': '1\n',
    'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n',
    ...files,
  });
  const commit = git(dir, 'rev-parse', 'HEAD');
  return { dir, pins: await readPins(dir, commit, prd) };
}

function commit(dir: string, files: Record<string, string>): string {
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'later');
  return git(dir, 'rev-parse', 'HEAD');
}

describe('readPinDrift', () => {
  it('is empty for the plan commit itself and for changes that leave every pin alone', async () => {
    const { dir, pins } = await pinned({});
    expect(await readPinDrift(dir, pins, pins.commit)).toEqual([]);
    const later = commit(dir, {
      'src/a.js': '2\n',
      'test/new.test.js': 'assert(2)\n',
      'package.json': MANIFEST('vitest run', { dependencies: { left: '1' } }),
    });
    expect(await readPinDrift(dir, pins, later)).toEqual([]);
  });

  it('names a changed pinned file (mayChange does not exempt it), a script definition, a runner key, a config section and a file pinned as absent', async () => {
    const { dir, pins } = await pinned({});
    const later = commit(dir, {
      'test/a.test.js': 'assert(true) // weakened\n',
      'package.json': MANIFEST('vitest run --passWithNoTests', { jest: { testPathIgnorePatterns: ['a'] } }),
      'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-k nothing"\n',
      'conftest.py': 'import pytest\n',
    });
    expect(await readPinDrift(dir, pins, later)).toEqual([
      'M test/a.test.js',
      'A conftest.py',
      'package.json scripts.test',
      'package.json jest',
      'pyproject.toml [tool.pytest.ini_options]',
    ]);
  });
});

describe('readPinDrift and refs/replace', () => {
  it('a replace ref (the agent can write one) never makes the weakened commit look like the pinned one', async () => {
    const { dir, pins } = await pinned({});
    const later = commit(dir, { 'test/a.test.js': 'assert(true) // weakened\n' });
    // Swap the weakened commit's tree for the plan commit's, as git shows it unless told not to.
    git(dir, 'replace', `${later}^{tree}`, `${pins.commit}^{tree}`);
    expect(git(dir, 'diff', '--name-only', pins.commit, later)).toBe('');
    expect(await readPinDrift(dir, pins, later)).toEqual(['M test/a.test.js']);
  });
});
