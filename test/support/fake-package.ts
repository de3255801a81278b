// A small stand-in for the ralphkit package (templates/, skills/, dist/ralph.mjs, package.json) so
// installer tests can ship "new versions" of files without touching the real templates.
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { testdir, writeFiles } from './repo.js';

export const FAKE_FILES: Record<string, string> = {
  'package.json': '{ "name": "ralphkit", "version": "9.9.9" }\n',
  'templates/ralph/ralph.sh': '#!/bin/sh\nexec node "$(dirname "$0")/ralph.mjs" run "$@"\n',
  'templates/ralph/_gitignore': '.runs/\n',
  'templates/ralph/prompt.md': '# Prompt v1\n',
  'templates/ralph/prd.json': '{ "branchName": "ralph/example", "userStories": [] }\n',
  'templates/ralph/progress.txt': '## Codebase Patterns\n',
  'dist/ralph.mjs': '// engine v1\n',
  'skills/prd.md': '---\nname: prd\ndescription: Write a PRD for a feature.\n---\n# PRD\n',
  'skills/ralph.md': '# Turn a PRD into ralph/prd.json\n\nSteps.\n',
};

/** A fake package folder; `overrides` replace or add files (use it to ship a "new version"). */
export function fakePackage(overrides: Record<string, string> = {}): string {
  const root = testdir('ralphkit-pkg-');
  writeFiles(root, { ...FAKE_FILES, ...overrides });
  chmodSync(path.join(root, 'templates/ralph/ralph.sh'), 0o755);
  return root;
}

/** Every file, symlink and folder under `dir` with its mode and a hash of its bytes: compare before and after. */
export function snapshotTree(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const relPath = rel ? `${rel}/${name}` : name;
    const abs = path.join(dir, relPath);
    const stat = lstatSync(abs);
    if (stat.isSymbolicLink()) out[relPath] = `link → ${readlinkSync(abs)}`;
    else if (stat.isDirectory())
      Object.assign(out, { [`${relPath}/`]: `dir ${(stat.mode & 0o777).toString(8)}` }, snapshotTree(dir, relPath));
    else
      out[relPath] =
        `${(stat.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`;
  }
  return out;
}

export function read(dir: string, rel: string): string {
  return readFileSync(path.join(dir, rel), 'utf8');
}

/**
 * A folder that counts as a git repository for the installer (it holds `.git/`), without running
 * git: integration tests never need history, and spawning git four times per test is slow on two cores.
 */
export function fakeRepo(files: Record<string, string> = {}): string {
  const dir = testdir('ralphkit-repo-');
  mkdirSync(path.join(dir, '.git'));
  writeFiles(dir, { 'README.md': '# test repo\n', ...files });
  return dir;
}

/** Make an install look like an older ralphkit's: each file on disk matches an older hash in the manifest. */
export function ageInstall(repo: string, files: Record<string, string>): void {
  const manifestPath = path.join(repo, 'ralph/.ralphkit.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  for (const [rel, old] of Object.entries(files)) {
    writeFileSync(path.join(repo, rel), old);
    manifest.files[rel].sha256 = createHash('sha256').update(old).digest('hex');
  }
  manifest.ralphkit = '0.0.1';
  writeFileSync(manifestPath, JSON.stringify(manifest));
}
