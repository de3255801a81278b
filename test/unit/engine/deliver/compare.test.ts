import { describe, expect, it } from 'vitest';
import { ciConfigFiles, readBranchChanges } from '../../../../src/engine/deliver/compare.js';
import type { GitHubClient } from '../../../../src/engine/deliver/github.js';

const repo = { host: 'github.com', owner: 'acme', repo: 'demo' };
const BASE = 'b'.repeat(40);
const answer = (body: unknown, seen: string[] = []): GitHubClient => ({
  async request(_method, path) {
    seen.push(path);
    return { status: 200, body };
  },
});

describe('readBranchChanges', () => {
  it('asks GitHub for base...sha and takes its merge base and both names of a rename', async () => {
    const seen: string[] = [];
    const files = [
      { filename: 'src/a.ts', status: 'modified' },
      { filename: 'test/new.test.ts', previous_filename: 'test/old.test.ts', status: 'renamed' },
    ];
    const changes = await readBranchChanges(
      answer({ merge_base_commit: { sha: BASE }, files }, seen),
      repo,
      'release/1.x',
      'c'.repeat(40),
    );
    expect(seen).toEqual([`/repos/acme/demo/compare/release/1.x...${'c'.repeat(40)}`]);
    expect(changes).toEqual({
      mergeBase: BASE,
      files: ['src/a.ts', 'test/new.test.ts', 'test/old.test.ts'],
      complete: true,
    });
  });

  it("a list of 300 files (GitHub's cap) may be cut short: not complete", async () => {
    const files = Array.from({ length: 300 }, (_, i) => ({ filename: `f${i}`, status: 'added' }));
    expect(
      (await readBranchChanges(answer({ merge_base_commit: { sha: BASE }, files }), repo, 'main', 'c'.repeat(40)))
        .complete,
    ).toBe(false);
  });

  it.each([
    ['no merge base', { files: [] }],
    ['a merge base that is no sha', { merge_base_commit: { sha: 'main' }, files: [] }],
    ['no file list', { merge_base_commit: { sha: BASE } }],
  ])('%s: throws, so the caller cannot tell and does not merge', async (_what, body) => {
    await expect(readBranchChanges(answer(body), repo, 'main', 'c'.repeat(40))).rejects.toThrow(
      /no merge base or no files/,
    );
  });
});

describe('ciConfigFiles', () => {
  it('names the files that configure CI, and nothing else', () => {
    const files = [
      '.github/workflows/ci.yml',
      '.github/actions/setup/action.yml',
      '.gitlab-ci.yml',
      '.circleci/config.yml',
      'azure-pipelines.yml',
      'Jenkinsfile',
      '.buildkite/pipeline.yml',
      '.github/CODEOWNERS',
      'src/Jenkinsfile',
      'docs/.gitlab-ci.yml.md',
    ];
    expect(ciConfigFiles(files)).toEqual(files.slice(0, 7));
  });
});
