import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runSkillAdd, type SkillAddOptions } from '../../../src/install/skill-add.js';
import { runInstall } from '../../../src/install/run.js';
import { planSkillFile } from '../../../src/skills/fill.js';
import { hashContent } from '../../../src/util/hash.js';
import { readVersion } from '../../../src/version.js';
import { testdir, writeFiles, FIXTURES, ROOT } from '../../support/repo.js';
import { fakePackage, fakeRepo, read, snapshotTree } from '../../support/fake-package.js';
import { fileCommandOptions } from '../../../src/commands/install.js';

const NOW = new Date('2026-01-02T03:04:05.678Z');

function add(cwd: string, files: string[], extra: Partial<SkillAddOptions> = {}) {
  return runSkillAdd({ cwd, files, now: NOW, ...extra });
}

function sources(files: Record<string, string>): (name: string) => string {
  const dir = testdir('ralphkit-src-');
  writeFiles(dir, files);
  return (name) => path.join(dir, name);
}

describe('runSkillAdd', () => {
  it("fills name and description, installs SKILL.md, and records it in the manifest as the user's", async () => {
    const repo = fakeRepo();
    const src = sources({ 'My Review Notes.md': '# Review checklist\n\n- look twice\n' });
    const result = await add(repo, [src('My Review Notes.md')]);
    expect(result.status).toBe('written');
    expect(result.skills).toEqual([
      { file: src('My Review Notes.md'), name: 'my-review-notes', filled: ['name', 'description'] },
    ]);
    const installed = read(repo, '.claude/skills/my-review-notes/SKILL.md');
    expect(installed).toBe(
      '---\nname: my-review-notes\ndescription: Review checklist\n---\n# Review checklist\n\n- look twice\n',
    );
    const manifest = JSON.parse(read(repo, 'ralph/.ralphkit.json'));
    expect(manifest.files['.claude/skills/my-review-notes/SKILL.md']).toEqual({
      sha256: hashContent(installed),
      source: 'user',
    });
  });

  it('keeps existing frontmatter and installs into every --agent folder', async () => {
    const repo = fakeRepo();
    const text = '---\nname: deploy\ndescription: "Deploy: staging first"\nlicense: MIT\n---\nSteps.\n';
    const src = sources({ 'whatever.md': text });
    await add(repo, [src('whatever.md')], { agents: ['claude', 'agents'] });
    expect(read(repo, '.claude/skills/deploy/SKILL.md')).toBe(text);
    expect(read(repo, '.agents/skills/deploy/SKILL.md')).toBe(text);
  });

  it.each([
    [
      'a name that cannot be made valid',
      '日本語.md',
      '# Fine\n',
      /日本語\.md: the file name "日本語\.md" has no letters a-z or digits to make a skill name of/,
    ],
    [
      'a non-ASCII name in the frontmatter',
      'notes.md',
      '---\nname: Résumé\n---\n# T\n',
      /notes\.md: name "Résumé" may hold only lowercase letters a-z, digits and hyphens\n  .*notes\.md: write it as `name: resume`/,
    ],
    [
      'a description that cannot be made valid',
      'notes.md',
      '# Use <b>\n',
      /notes\.md: description must not contain "<" or ">"/,
    ],
    ['no description at all', 'notes.md', 'just text\n', /notes\.md: no description/],
    [
      'keys neither Agent Skills nor Claude Code define',
      'notes.md',
      '---\ntags: [x]\n---\n# T\n',
      /keys neither Agent Skills nor Claude Code define: tags/,
    ],
  ])(
    'refuses %s with the reason (exit 2), writing nothing, not even for the valid files beside it',
    async (_case, file, text, reason) => {
      const repo = fakeRepo();
      const src = sources({ [file]: text, 'good.md': '# Good\n' });
      const before = snapshotTree(repo);
      const err = await add(repo, [src('good.md'), src(file)]).catch((e) => e);
      expect(err).toMatchObject({ exitCode: 2 });
      expect(err.message).toMatch(reason);
      expect(err.hint).toMatch(/name: my-skill/);
      expect(snapshotTree(repo)).toEqual(before);
    },
  );

  it.each(['plan-feature', 'review-diff'])(
    'installs a Claude Code skill (%s, test/fixtures/skills) as it is, with the keys Claude Code reads',
    async (name) => {
      const repo = fakeRepo();
      const file = path.join(FIXTURES, 'skills', name, 'SKILL.md');
      const result = await add(repo, [file]);
      expect(result).toMatchObject({ status: 'written', skills: [{ file, name, filled: [] }] });
      expect(read(repo, `.claude/skills/${name}/SKILL.md`)).toBe(readFileSync(file, 'utf8'));
    },
  );

  it('refuses Claude Code keys for .agents/skills/, naming the flag that keeps them, and writes nothing', async () => {
    const repo = fakeRepo();
    const before = snapshotTree(repo);
    const file = path.join(FIXTURES, 'skills/plan-feature/SKILL.md');
    const err = await add(repo, [file], { agents: ['claude', 'agents'] }).catch((e) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    expect(err.message).toContain(
      `${file}: frontmatter keys not allowed by Agent Skills: user-invocable (allowed: name, description, license, allowed-tools, metadata, compatibility); user-invocable is a Claude Code key, kept only in .claude/skills/ (--agent claude)`,
    );
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('refuses a missing file and two files with the same skill name (exit 2)', async () => {
    const repo = fakeRepo();
    await expect(add(repo, [path.join(repo, 'nope.md')])).rejects.toMatchObject({
      exitCode: 2,
      message: `no such file: ${path.join(repo, 'nope.md')}`,
    });
    const src = sources({ 'a/notes.md': '# A\n', 'b/notes.md': '# B\n' });
    await expect(add(repo, [src('a/notes.md'), src('b/notes.md')])).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/both be installed as .claude\/skills\/notes\/SKILL.md/),
    });
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });

  it('adding again: identical → nothing to do; changed source → upgrade; edited install → conflict; --force → backup', async () => {
    const repo = fakeRepo();
    const src = sources({ 'notes.md': '# Notes v1\n' });
    await add(repo, [src('notes.md')]);
    expect((await add(repo, [src('notes.md')])).status).toBe('nothing-to-do');

    writeFileSync(src('notes.md'), '# Notes v2\n');
    const upgraded = await add(repo, [src('notes.md')]);
    expect(upgraded.plan.items[0].action).toBe('upgrade');

    const installed = path.join(repo, '.claude/skills/notes/SKILL.md');
    writeFileSync(installed, 'edited in place\n');
    writeFileSync(src('notes.md'), '# Notes v3\n');
    const before = snapshotTree(repo);
    const conflict = await add(repo, [src('notes.md')]);
    expect(conflict).toMatchObject({ status: 'conflicts', exitCode: 2 });
    expect(snapshotTree(repo)).toEqual(before);

    const forced = await add(repo, [src('notes.md')], { force: true });
    expect(forced.backups).toEqual([
      {
        path: '.claude/skills/notes/SKILL.md',
        backup: 'ralph/.backup/2026-01-02T03-04-05-678Z/.claude/skills/notes/SKILL.md',
      },
    ]);
    expect(readFileSync(installed, 'utf8')).toContain('description: Notes v3');
  });

  it('install keeps the manifest entries of added skills, and a user skill named like a shipped one conflicts', async () => {
    const repo = fakeRepo();
    const src = sources({ 'review.md': '# Review\n', 'prd.md': '# My own PRD skill\n' });
    await add(repo, [src('review.md')]);
    await runInstall({ cwd: repo, sourceRoot: fakePackage(), now: NOW });
    const manifest = JSON.parse(read(repo, 'ralph/.ralphkit.json'));
    expect(manifest.files['.claude/skills/review/SKILL.md'].source).toBe('user');
    expect(manifest.files['.claude/skills/prd/SKILL.md'].source).toBe('ralphkit');

    const clash = await add(repo, [src('prd.md')]);
    expect(clash.plan.items[0]).toMatchObject({ path: '.claude/skills/prd/SKILL.md', action: 'conflict' });
  });

  it('keeps the ralphkit version install recorded: only install says which release the core files come from', async () => {
    const repo = fakeRepo();
    await runInstall({ cwd: repo, sourceRoot: fakePackage(), now: NOW });
    const src = sources({ 'review.md': '# Review\n' });
    const added = await add(repo, [src('review.md')]);
    expect(added.status).toBe('written');
    const manifest = JSON.parse(read(repo, 'ralph/.ralphkit.json'));
    expect(manifest.ralphkit).toBe('9.9.9');
    expect(manifest.files['.claude/skills/review/SKILL.md'].source).toBe('user');
  });

  it('a first manifest written by skill add records the running version', async () => {
    const repo = fakeRepo();
    await add(repo, [sources({ 'review.md': '# Review\n' })('review.md')]);
    expect(JSON.parse(read(repo, 'ralph/.ralphkit.json')).ralphkit).toBe(readVersion());
  });

  it('dry run writes nothing', async () => {
    const repo = fakeRepo();
    const src = sources({ 'notes.md': '# Notes\n' });
    const result = await add(repo, [src('notes.md')], { dryRun: true });
    expect(result.status).toBe('dry-run');
    expect(readdirSync(repo).sort()).toEqual(['.git', 'README.md']);
  });
});

describe("ralphkit's shipped skills", () => {
  const dir = path.join(ROOT, 'skills');
  it('include prd and ralph', () => {
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.md'))
        .sort(),
    ).toEqual(expect.arrayContaining(['prd.md', 'ralph.md']));
  });

  it.each(readdirSync(dir).filter((f) => f.endsWith('.md')))(
    '%s passes the Agent Skills rules, named after its file',
    (file) => {
      const result = planSkillFile(file, readFileSync(path.join(dir, file), 'utf8'));
      expect(result).toMatchObject({ ok: true, name: file.replace(/\.md$/, '') });
    },
  );
});

describe('skill add through the flags it shares with install', () => {
  it('--diff writes nothing, as with install', async () => {
    const repo = fakeRepo();
    const src = sources({ 'tip.md': '# A tip\n' });
    const result = await runSkillAdd({
      ...fileCommandOptions({ cwd: repo, agent: 'claude,agents', diff: true }),
      files: [src('tip.md')],
      now: NOW,
    });
    expect(result.status).toBe('dry-run');
    expect(result.plan.items.map((i) => i.path)).toEqual(
      expect.arrayContaining(['.agents/skills/tip/SKILL.md', '.claude/skills/tip/SKILL.md']),
    );
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });
});
