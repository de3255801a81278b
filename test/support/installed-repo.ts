// The one "repository with ralphkit installed" for tests. The real CLI (`ralphkit install --yes`) runs once per
// test file and per skills choice, into a template repository; each call copies the template (.git and modes
// included) and commits the given plan and files on top, so a test gets the same repository as an install of its
// own for the cost of a copy.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, git, gitEnv, testdir, writeFiles } from './repo.js';

export interface InstalledRepoOptions {
  /** ralph/prd.json: the text, or a plan object (written as pretty JSON). Omitted: the installed example stays. */
  plan?: string | object;
  /** More files, written and committed with the plan. */
  files?: Record<string, string>;
  /** False: `install --no-skills` (no .claude/skills, no .agents/skills). */
  skills?: boolean;
  message?: string;
}

const templates = new Map<string, string>();
process.once('exit', () => {
  for (const dir of templates.values()) rmSync(dir, { recursive: true, force: true });
});

function template(skills: boolean): string {
  const key = skills ? 'skills' : 'no-skills';
  const cached = templates.get(key);
  if (cached) return cached;
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `ralphkit-installed-${key}-`)));
  git(dir, 'init', '-q', '-b', 'main');
  for (const [k, v] of [
    ['user.name', 'Test'],
    ['user.email', 'test@example.com'],
    ['commit.gpgsign', 'false'],
  ])
    git(dir, 'config', k, v);
  writeFiles(dir, { 'README.md': '# test repo\n' });
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  execFileSync(process.execPath, [BIN, 'install', '--yes', ...(skills ? [] : ['--no-skills']), '--cwd', dir], {
    env: { ...gitEnv(), FORCE_COLOR: '0' },
    stdio: 'pipe',
  });
  templates.set(key, dir);
  return dir;
}

/** A fresh copy of an installed repository (removed when the test ends), with `plan` and `files` committed. */
export function installedRepo(opts: InstalledRepoOptions = {}): string {
  const dir = testdir('ralphkit-repo-');
  execFileSync('cp', ['-a', `${template(opts.skills !== false)}/.`, dir]);
  const files: Record<string, string> = { ...opts.files };
  if (opts.plan !== undefined)
    files['ralph/prd.json'] = typeof opts.plan === 'string' ? opts.plan : `${JSON.stringify(opts.plan, null, 2)}\n`;
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', opts.message ?? 'install ralph');
  return dir;
}
