// Spawns the built CLI (run `npm run build` first; `npm test` does) in temp git repositories.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, cliAsTyped, gitdir, runCli, testdir, writeFiles } from '../support/repo.js';
import { snapshotTree } from '../support/fake-package.js';

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('ralphkit skill add (built CLI)', () => {
  it("installs a file as a skill with filled frontmatter, relative paths from the shell's folder", async () => {
    const repo = gitdir();
    const notes = testdir('ralphkit-notes-');
    writeFiles(notes, { 'My Review Notes.md': '# Review what changed\n\nRead the diff twice.\n' });
    const result = await runCli(['skill', 'add', 'My Review Notes.md', '--cwd', repo, '--agent', 'claude,agents'], {
      cwd: notes,
    });
    expect(result.code).toBe(0);
    expect(strip(result.stdout)).toContain('create      .claude/skills/my-review-notes/SKILL.md');
    for (const dir of ['.claude/skills', '.agents/skills']) {
      expect(readFileSync(path.join(repo, dir, 'my-review-notes/SKILL.md'), 'utf8')).toBe(
        '---\nname: my-review-notes\ndescription: Review what changed\n---\n# Review what changed\n\nRead the diff twice.\n',
      );
    }
  });

  it('transliterates the file name: "Résumé helper.md" becomes resume-helper, "Straße 日本語.md" strasse', async () => {
    const repo = gitdir();
    writeFiles(repo, {
      'notes/Résumé helper.md': '# Notes with accents\n',
      'notes/Straße 日本語.md': '# Mixed scripts\n',
    });
    const result = await runCli(['skill', 'add', 'notes/Résumé helper.md', 'notes/Straße 日本語.md'], { cwd: repo });
    expect(result.code).toBe(0);
    expect(strip(result.stdout)).toContain('create      .claude/skills/resume-helper/SKILL.md');
    expect(readFileSync(path.join(repo, '.claude/skills/resume-helper/SKILL.md'), 'utf8')).toBe(
      '---\nname: resume-helper\ndescription: Notes with accents\n---\n# Notes with accents\n',
    );
    expect(readFileSync(path.join(repo, '.claude/skills/strasse/SKILL.md'), 'utf8')).toContain('name: strasse\n');
  });

  it('installs a skill written for Claude Code (user-invocable, hooks, a list of allowed-tools) byte for byte', async () => {
    const repo = gitdir();
    const files = ['plan-feature', 'review-diff'].map((name) => path.join(FIXTURES, 'skills', name, 'SKILL.md'));
    const result = await runCli(['skill', 'add', ...files], { cwd: repo });
    expect(strip(result.stderr)).toBe('');
    expect(result.code).toBe(0);
    for (const [i, name] of ['plan-feature', 'review-diff'].entries()) {
      expect(readFileSync(path.join(repo, '.claude/skills', name, 'SKILL.md'), 'utf8')).toBe(
        readFileSync(files[i], 'utf8'),
      );
    }
  });

  it('refuses a file whose name cannot be made valid, and a non-ASCII name: with the name to write (exit 2, nothing written)', async () => {
    const repo = gitdir();
    writeFiles(repo, { 'notes/日本語.md': '# Fine heading\n', 'notes/cv.md': '---\nname: Résumé\n---\n# CV\n' });
    const before = snapshotTree(repo);
    const result = await runCli(['skill', 'add', 'notes/日本語.md', 'notes/cv.md'], { cwd: repo });
    expect(result.code).toBe(2);
    const stderr = strip(result.stderr);
    expect(stderr).toContain(
      'notes/日本語.md: the file name "日本語.md" has no letters a-z or digits to make a skill name of: add `name: your-skill-name` to its frontmatter, or rename the file',
    );
    expect(stderr).toContain(
      'notes/cv.md: name "Résumé" may hold only lowercase letters a-z, digits and hyphens\n  notes/cv.md: write it as `name: resume`',
    );
    expect(stderr).toMatch(/hint: .*name: my-skill/);
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('a missing file is "no such file" (exit 2), not an error code', async () => {
    const repo = gitdir();
    const result = await runCli(['skill', 'add', 'docs/missing.md'], { cwd: repo });
    expect(result.code).toBe(2);
    expect(strip(result.stderr)).toMatch(/^error: no such file: docs\/missing\.md\n/);
    expect(result.stderr).not.toContain('ENOENT');
  });

  it('keeps the ralphkit version recorded by install, even while core files are older (only install changes it)', async () => {
    const repo = gitdir({ 'review.md': '# Review\n' });
    expect((await runCli(['install'], { cwd: repo })).code).toBe(0);
    const manifestPath = path.join(repo, 'ralph/.ralphkit.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, ralphkit: '0.0.1' }));
    const result = await runCli(['skill', 'add', 'review.md'], { cwd: repo });
    expect(result.code).toBe(0);
    const after = JSON.parse(readFileSync(manifestPath, 'utf8'));
    expect(after.ralphkit).toBe('0.0.1');
    expect(after.files['.claude/skills/review/SKILL.md']).toMatchObject({ source: 'user' });
  });

  it('refuses a description with < or > and reports it in --json too', async () => {
    const repo = gitdir({ 'tip.md': '---\ndescription: use <details> tags\n---\nBody\n' });
    const result = await runCli(['skill', 'add', 'tip.md', '--json'], { cwd: repo });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'skill add',
      status: 'refused',
      exitCode: 2,
      error: expect.stringContaining('must not contain "<" or ">"'),
    });
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });

  it('skill add --help explains the filling and the rules', async () => {
    const result = await runCli(['skill', 'add', '--help']);
    expect(result.code).toBe(0);
    // Examples name ralphkit as it was started (node <bin> here), shown as `ralphkit`.
    expect(strip(result.stdout).replaceAll(cliAsTyped(), 'ralphkit')).toMatchInlineSnapshot(`
      "Usage: ralphkit skill add [options] <files...>

      Install markdown files as agent skills: <skills folder>/<name>/SKILL.md for each
      --agent.

      Arguments:
        files           markdown files to install

      Options:
        --cwd <dir>     repository to install into (default: the current folder)
        --force         back up installed skills you edited and replace them
        --dry-run       print the plan, write nothing
        --diff          print the plan with unified diffs of files that would change;
                        writes nothing
        --json          print one JSON document on stdout (logs go to stderr)
        -y, --yes       never prompt: conflicts end with exit 2 unless --force
        --agent <list>  skill folders, comma-separated: claude (.claude/skills),
                        agents (.agents/skills) (default: the folders the last install
                        used, else claude)
        -h, --help      display help for command

      Missing frontmatter is filled in: name from the file name in kebab-case, accents
      dropped ("My Review Notes.md" → my-review-notes, "Résumé helper.md" → resume-helper),
      description from the first "# " heading.
      Fields already there are kept. The result must pass the Agent Skills rules, or the
      file is refused with the reason (exit 2):
        name         1-64 of a-z 0-9 -, no leading, trailing or double hyphen
        description  1-1024 characters, no < or >
        other keys   license, allowed-tools, metadata, compatibility; in .claude/skills/
                     also Claude Code's own (user-invocable, disable-model-invocation,
                     argument-hint, model, effort, context, agent, hooks, paths, ...)

      An added skill is tracked in ralph/.ralphkit.json like ralphkit's own files: add it
      again after editing the source and an untouched installed copy is upgraded, while
      an installed copy you edited is a conflict (--force backs it up and replaces it).

      Examples:
        $ ralphkit skill add docs/review.md               → .claude/skills/review/SKILL.md
        $ ralphkit skill add a.md b.md --agent agents     → .agents/skills/a/ and b/
        $ ralphkit skill add "My Review Notes.md" --dry-run
      "
    `);
  });
});
