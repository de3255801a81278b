import { describe, expect, it } from 'vitest';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { runInstall, type InstallOptions } from '../../../src/install/run.js';
import { hashContent } from '../../../src/util/hash.js';
import { testdir, writeFiles } from '../../support/repo.js';
import { fakePackage, fakeRepo, read, snapshotTree, FAKE_FILES } from '../../support/fake-package.js';
import { fileCommandOptions } from '../../../src/commands/install.js';

const NOW = new Date('2026-01-02T03:04:05.678Z');
const BACKUP = 'ralph/.backup/2026-01-02T03-04-05-678Z';

function install(cwd: string, sourceRoot: string, extra: Partial<InstallOptions> = {}) {
  return runInstall({ cwd, sourceRoot, now: NOW, ...extra });
}

function actions(result: Awaited<ReturnType<typeof runInstall>>): Record<string, string> {
  return Object.fromEntries(result.plan.items.map((i) => [i.path, i.action]));
}

const INSTALLED = [
  '.claude/skills/prd/SKILL.md',
  '.claude/skills/ralph/SKILL.md',
  'ralph/.gitignore',
  'ralph/.ralphkit.json',
  'ralph/prd.json',
  'ralph/progress.txt',
  'ralph/prompt.md',
  'ralph/ralph.mjs',
  'ralph/ralph.sh',
];

describe('runInstall into an empty repository', () => {
  it('creates every file, the runner executable, and a manifest with the hash of each managed file', async () => {
    const repo = fakeRepo();
    const result = await install(repo, fakePackage());
    expect(result.status).toBe('written');
    expect(result.warnings).toEqual([]);
    const tree = Object.keys(snapshotTree(repo)).filter(
      (p) => !p.startsWith('.git/') && p !== '.git/' && !p.endsWith('/'),
    );
    expect(tree).toEqual(['README.md', ...INSTALLED].sort());
    expect(statSync(path.join(repo, 'ralph/ralph.sh')).mode & 0o777).toBe(0o755);
    expect(read(repo, 'ralph/.gitignore')).toBe(FAKE_FILES['templates/ralph/_gitignore']);
    expect(read(repo, 'ralph/ralph.mjs')).toBe(FAKE_FILES['dist/ralph.mjs']);
    const manifest = JSON.parse(read(repo, 'ralph/.ralphkit.json'));
    expect(manifest.ralphkit).toBe('9.9.9');
    expect(Object.keys(manifest.files).sort()).toEqual([
      '.claude/skills/prd/SKILL.md',
      '.claude/skills/ralph/SKILL.md',
      'ralph/.gitignore',
      'ralph/ralph.mjs',
      'ralph/ralph.sh',
    ]);
    for (const [file, entry] of Object.entries(manifest.files as Record<string, { sha256: string }>)) {
      expect(entry.sha256).toBe(hashContent(readFileSync(path.join(repo, file))));
    }
  });

  it('fills the frontmatter of a shipped skill that has none, like skill add', async () => {
    const repo = fakeRepo();
    await install(repo, fakePackage());
    expect(read(repo, '.claude/skills/ralph/SKILL.md')).toBe(
      '---\nname: ralph\ndescription: Turn a PRD into ralph/prd.json\n---\n# Turn a PRD into ralph/prd.json\n\nSteps.\n',
    );
  });

  it('says there is nothing to do the second time, and writes nothing', async () => {
    const repo = fakeRepo();
    const pkg = fakePackage();
    await install(repo, pkg);
    const before = snapshotTree(repo);
    const again = await install(repo, pkg);
    expect(again.status).toBe('nothing-to-do');
    expect(again.exitCode).toBe(0);
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('installs skills into each --agent folder, or none with skills: false', async () => {
    const both = fakeRepo();
    await install(both, fakePackage(), { agents: ['claude', 'agents'] });
    expect(existsSync(path.join(both, '.agents/skills/prd/SKILL.md'))).toBe(true);
    expect(existsSync(path.join(both, '.claude/skills/ralph/SKILL.md'))).toBe(true);
    const none = fakeRepo();
    await install(none, fakePackage(), { skills: false });
    expect(existsSync(path.join(none, '.claude'))).toBe(false);
    expect(existsSync(path.join(none, 'ralph/ralph.sh'))).toBe(true);
  });

  it('installs outside a git repository, with a warning that the loop needs git', async () => {
    const dir = testdir();
    const result = await install(dir, fakePackage());
    expect(result.status).toBe('written');
    expect(result.warnings.join('\n')).toMatch(/not inside a git repository; the loop needs git/);
  });

  it('warns when --cwd is a subfolder of the repository, since the loop looks for ralph/ at the root', async () => {
    const repo = fakeRepo();
    mkdirSync(path.join(repo, 'packages/app'), { recursive: true });
    const result = await install(path.join(repo, 'packages/app'), fakePackage());
    expect(result.status).toBe('written');
    expect(result.warnings).toEqual([
      expect.stringContaining(
        `is a subfolder of the repository ${repo}; the loop looks for ralph/ at the repository root`,
      ),
    ]);
  });

  it('refuses a package without the built engine and says to build it', async () => {
    const pkg = fakePackage();
    const repo = fakeRepo();
    const { rmSync } = await import('node:fs');
    rmSync(path.join(pkg, 'dist'), { recursive: true });
    await expect(install(repo, pkg)).rejects.toMatchObject({
      exitCode: 1,
      hint: expect.stringContaining('npm run build'),
    });
    expect(existsSync(path.join(repo, 'ralph'))).toBe(false);
  });
});

describe('runInstall over an earlier install: every row of the decision table', () => {
  async function installed() {
    const repo = fakeRepo();
    await install(repo, fakePackage());
    return repo;
  }
  const v2 = {
    'templates/ralph/ralph.sh': '#!/bin/sh\n# v2\nexec node "$(dirname "$0")/ralph.mjs" run "$@"\n',
    'dist/ralph.mjs': '// engine v2\n',
  };

  it('missing → create (a deleted managed file comes back)', async () => {
    const repo = await installed();
    const { rmSync } = await import('node:fs');
    rmSync(path.join(repo, 'ralph/ralph.mjs'));
    const result = await install(repo, fakePackage());
    expect(actions(result)['ralph/ralph.mjs']).toBe('create');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('// engine v1\n');
  });

  it('D = N → identical, also when the checkout turned LF into CRLF', async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/.gitignore'), '.runs/\r\n');
    const result = await install(repo, fakePackage());
    expect(actions(result)['ralph/.gitignore']).toBe('identical');
    expect(result.status).toBe('nothing-to-do');
    expect(read(repo, 'ralph/.gitignore')).toBe('.runs/\r\n');
  });

  it('D = B, N ≠ B → upgrade, with or without --force; the manifest records the new hash', async () => {
    for (const force of [false, true]) {
      const repo = await installed();
      const result = await install(repo, fakePackage(v2), { force });
      expect(actions(result)).toMatchObject({ 'ralph/ralph.sh': 'upgrade', 'ralph/ralph.mjs': 'upgrade' });
      expect(result.backups).toEqual([]);
      expect(read(repo, 'ralph/ralph.mjs')).toBe('// engine v2\n');
      expect(statSync(path.join(repo, 'ralph/ralph.sh')).mode & 0o777).toBe(0o755);
      const manifest = JSON.parse(read(repo, 'ralph/.ralphkit.json'));
      expect(manifest.files['ralph/ralph.mjs'].sha256).toBe(hashContent('// engine v2\n'));
    }
  });

  it("D ≠ B, N = B → keep the user's file and say so", async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/ralph.mjs'), '// my engine\n');
    const result = await install(repo, fakePackage());
    expect(actions(result)['ralph/ralph.mjs']).toBe('keep');
    expect(result.plan.items.find((i) => i.path === 'ralph/ralph.mjs')!.reason).toMatch(/your file stays/);
    expect(result.status).toBe('nothing-to-do');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('// my engine\n');
  });

  it("D ≠ B, N = B with --force → back up the user's file, then overwrite", async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/ralph.mjs'), '// my engine\n');
    const result = await install(repo, fakePackage(), { force: true });
    expect(actions(result)['ralph/ralph.mjs']).toBe('overwrite');
    expect(result.backups).toEqual([{ path: 'ralph/ralph.mjs', backup: `${BACKUP}/ralph/ralph.mjs` }]);
    expect(read(repo, `${BACKUP}/ralph/ralph.mjs`)).toBe('// my engine\n');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('// engine v1\n');
  });

  it('D ≠ B, N ≠ B, D ≠ N → conflict: nothing at all is written, byte for byte, exit 2', async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\necho mine\n');
    const before = snapshotTree(repo);
    const result = await install(repo, fakePackage(v2));
    expect(result.status).toBe('conflicts');
    expect(result.exitCode).toBe(2);
    expect(actions(result)).toMatchObject({ 'ralph/ralph.sh': 'conflict', 'ralph/ralph.mjs': 'upgrade' });
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('no manifest entry and D ≠ N → conflict (every conflict is listed), and nothing is written', async () => {
    const repo = fakeRepo({ 'ralph/ralph.sh': 'my own runner\n', '.claude/skills/prd/SKILL.md': 'my own skill\n' });
    const before = snapshotTree(repo);
    const result = await install(repo, fakePackage());
    expect(result.plan.items.filter((i) => i.action === 'conflict').map((i) => i.path)).toEqual([
      'ralph/ralph.sh',
      '.claude/skills/prd/SKILL.md',
    ]);
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('a conflict with --force: backup, overwrite; state files are never touched, even when the package ships new ones', async () => {
    const repo = await installed();
    const mine = {
      'ralph/ralph.sh': '#!/bin/sh\necho mine\n',
      'ralph/prd.json': '{"mine":1}\n',
      'ralph/progress.txt': 'my notes\n',
      'ralph/prompt.md': 'my prompt\n',
    };
    writeFiles(repo, mine);
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o700);
    const statesBefore = Object.fromEntries(
      ['ralph/prd.json', 'ralph/progress.txt', 'ralph/prompt.md'].map((p) => [p, snapshotTree(repo)[p]]),
    );
    const pkg = fakePackage({
      ...v2,
      'templates/ralph/prompt.md': '# Prompt v2\n',
      'templates/ralph/prd.json': '{}\n',
      'templates/ralph/progress.txt': 'v2\n',
    });
    const result = await install(repo, pkg, { force: true });
    expect(actions(result)).toMatchObject({
      'ralph/ralph.sh': 'overwrite',
      'ralph/prd.json': 'skip-state',
      'ralph/progress.txt': 'skip-state',
      'ralph/prompt.md': 'skip-state',
    });
    for (const [p, snap] of Object.entries(statesBefore)) expect(snapshotTree(repo)[p]).toBe(snap);
    expect(read(repo, `${BACKUP}/ralph/ralph.sh`)).toBe(mine['ralph/ralph.sh']);
    expect(statSync(path.join(repo, `${BACKUP}/ralph/ralph.sh`)).mode & 0o777).toBe(0o700);
    expect(read(repo, 'ralph/ralph.sh')).toContain('# v2');
    expect(statSync(path.join(repo, 'ralph/ralph.sh')).mode & 0o777).toBe(0o755);
  });

  it('state files missing → created; present → skip-state', async () => {
    const repo = fakeRepo({ 'ralph/prd.json': 'mine\n' });
    const result = await install(repo, fakePackage());
    expect(actions(result)).toMatchObject({
      'ralph/prd.json': 'skip-state',
      'ralph/prompt.md': 'create',
      'ralph/progress.txt': 'create',
    });
    expect(read(repo, 'ralph/prd.json')).toBe('mine\n');
  });

  it('dry run: plans with diffs, writes nothing', async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\necho mine\n');
    const before = snapshotTree(repo);
    const result = await install(repo, fakePackage(v2), { dryRun: true, diff: true, force: true });
    expect(result.status).toBe('dry-run');
    expect(result.diffs['ralph/ralph.sh']).toContain('-echo mine');
    expect(result.diffs['ralph/ralph.mjs']).toBe(
      '--- a/ralph/ralph.mjs\n+++ b/ralph/ralph.mjs\n@@ -1 +1 @@\n-// engine v1\n+// engine v2\n',
    );
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('an unreadable manifest is ignored with a warning, so edited files conflict rather than being overwritten', async () => {
    const repo = await installed();
    writeFileSync(path.join(repo, 'ralph/.ralphkit.json'), 'garbage');
    const result = await install(repo, fakePackage(v2));
    expect(result.warnings.join()).toMatch(/not a ralphkit manifest/);
    expect(actions(result)['ralph/ralph.mjs']).toBe('conflict');
  });
});

describe('runInstall: prompts', () => {
  async function conflicted() {
    const repo = fakeRepo();
    await install(repo, fakePackage());
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), 'mine\n');
    return repo;
  }
  const v2 = { 'templates/ralph/ralph.sh': 'v2\n' };

  it('asks about each conflict with its diff; "overwrite" backs up and writes', async () => {
    const repo = await conflicted();
    const asked: string[] = [];
    const result = await install(repo, fakePackage(v2), {
      ask: async (item, diff) => (asked.push(`${item.path}\n${diff}`), 'overwrite'),
    });
    expect(asked).toEqual(['ralph/ralph.sh\n--- a/ralph/ralph.sh\n+++ b/ralph/ralph.sh\n@@ -1 +1 @@\n-mine\n+v2\n']);
    expect(result.status).toBe('written');
    expect(read(repo, 'ralph/ralph.sh')).toBe('v2\n');
    expect(read(repo, `${BACKUP}/ralph/ralph.sh`)).toBe('mine\n');
  });

  it('"keep" leaves the file and installs the rest', async () => {
    const repo = await conflicted();
    const result = await install(repo, fakePackage({ ...v2, 'dist/ralph.mjs': 'v2\n' }), { ask: async () => 'keep' });
    expect(result.status).toBe('written');
    expect(read(repo, 'ralph/ralph.sh')).toBe('mine\n');
    expect(read(repo, 'ralph/ralph.mjs')).toBe('v2\n');
  });

  it('"abort" writes nothing and ends with exit 2', async () => {
    const repo = await conflicted();
    const before = snapshotTree(repo);
    const result = await install(repo, fakePackage(v2), { ask: async () => 'abort' });
    expect(result).toMatchObject({ status: 'aborted', exitCode: 2 });
    expect(snapshotTree(repo)).toEqual(before);
  });
});

describe('runInstall: no write leaves the repository', () => {
  it.each([
    ['ralph/', 'ralph'],
    ['.claude/', '.claude'],
    ['.claude/skills/', '.claude/skills'],
  ])('refuses a symlinked %s pointing outside (exit 2), writing nothing inside or outside', async (_name, link) => {
    const repo = fakeRepo();
    const outside = testdir('ralphkit-outside-');
    mkdirSync(path.dirname(path.join(repo, link)), { recursive: true });
    symlinkSync(outside, path.join(repo, link));
    const before = snapshotTree(repo);
    await expect(install(repo, fakePackage())).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/symlink to .*outside the repository/),
    });
    expect(snapshotTree(repo)).toEqual(before);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a managed file that is a symlink to a file outside', async () => {
    const repo = fakeRepo();
    const outside = testdir('ralphkit-outside-');
    writeFileSync(path.join(outside, 'target'), 'secret\n');
    mkdirSync(path.join(repo, 'ralph'));
    symlinkSync(path.join(outside, 'target'), path.join(repo, 'ralph/ralph.mjs'));
    await expect(install(repo, fakePackage(), { force: true })).rejects.toMatchObject({ exitCode: 2 });
    expect(readFileSync(path.join(outside, 'target'), 'utf8')).toBe('secret\n');
  });

  it('refuses a dangling symlink', async () => {
    const repo = fakeRepo();
    symlinkSync(path.join(repo, 'nowhere'), path.join(repo, 'ralph'));
    await expect(install(repo, fakePackage())).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/does not exist/),
    });
  });

  it('follows a symlink that stays inside the repository', async () => {
    const repo = fakeRepo();
    mkdirSync(path.join(repo, 'tools/ralph'), { recursive: true });
    symlinkSync(path.join(repo, 'tools/ralph'), path.join(repo, 'ralph'));
    const result = await install(repo, fakePackage());
    expect(result.status).toBe('written');
    expect(read(repo, 'tools/ralph/ralph.mjs')).toBe('// engine v1\n');
  });

  it('refuses a --cwd that is not a folder (exit 2)', async () => {
    await expect(install(path.join(testdir(), 'missing'), fakePackage())).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('runInstall: interrupted writes', () => {
  it('removes temp files a killed install left beside the files it writes', async () => {
    const repo = fakeRepo();
    const stale = 'ralph/.ralph.mjs.999999.deadbeef.tmp';
    writeFiles(repo, { [stale]: 'half a file' });
    await install(repo, fakePackage());
    expect(existsSync(path.join(repo, stale))).toBe(false);
    expect(readdirSync(path.join(repo, 'ralph')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

// `install` and `skill add` read their shared flags through one function (src/commands/install.ts).
describe('the flags install and skill add share', () => {
  it.each([
    ['defaults', { agent: 'claude' }, { force: undefined, dryRun: undefined, diff: undefined, agents: ['claude'] }],
    ['--diff alone never writes', { agent: 'claude', diff: true }, { dryRun: true, diff: true }],
    ['--dry-run without diffs', { agent: 'claude', dryRun: true }, { dryRun: true, diff: undefined }],
    [
      '--force and two skill folders',
      { agent: 'claude, agents', force: true },
      { force: true, agents: ['claude', 'agents'] },
    ],
  ])('%s', (_name, flags, expected) => {
    expect(fileCommandOptions({ cwd: '/repo', ...flags })).toMatchObject({ cwd: '/repo', ...expected });
  });

  it('prompts only at a terminal and never with --yes or --json (tests run without one)', () => {
    for (const flags of [{ agent: 'claude' }, { agent: 'claude', yes: true }, { agent: 'claude', json: true }])
      expect(fileCommandOptions(flags).ask).toBeUndefined();
  });

  it('an unknown --agent is an error with a hint, thrown where withJsonErrors can report it', () => {
    expect(() => fileCommandOptions({ agent: 'claude,nope' })).toThrow(/nope/);
  });

  it('install --diff writes nothing', async () => {
    const repo = fakeRepo();
    const result = await runInstall({
      ...fileCommandOptions({ cwd: repo, agent: 'claude', diff: true }),
      sourceRoot: fakePackage(),
      now: NOW,
    });
    expect(result.status).toBe('dry-run');
    expect(existsSync(path.join(repo, 'ralph'))).toBe(false);
  });
});
