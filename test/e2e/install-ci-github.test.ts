// `ralphkit install --ci github`: the GitHub Actions workflow as a managed file, remembered in the manifest so a plain
// install keeps it current, taken out by --no-ci under the same rules as any managed file (an edit is never lost).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, gitdir, runCli, writeFiles } from '../support/repo.js';
import { ageInstall } from '../support/fake-package.js';

const WORKFLOW = '.github/workflows/ralph.yml';
const TEMPLATE = readFileSync(path.join(ROOT, 'templates/github/ralph.yml'), 'utf8');
const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

function manifest(repo: string): { ci?: string; agents?: string[]; files: Record<string, unknown> } {
  return JSON.parse(readFileSync(path.join(repo, 'ralph/.ralphkit.json'), 'utf8'));
}

function workflow(repo: string): string {
  return readFileSync(path.join(repo, WORKFLOW), 'utf8');
}

async function installedWithCi(): Promise<string> {
  const repo = gitdir();
  const r = await runCli(['install', '--ci', 'github'], { cwd: repo });
  expect(r.code, r.stderr).toBe(0);
  return repo;
}

describe('install --ci github', () => {
  it('ends with the next steps: the secrets to add and the Actions setting that lets it open pull requests', async () => {
    const repo = gitdir();
    const r = await runCli(['install', '--ci', 'github'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    const out = strip(r.stdout);
    const steps = out.slice(out.indexOf('Then, for the loop on GitHub Actions:'));
    expect(steps).toContain('ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN');
    expect(steps).toContain('OPENAI_API_KEY');
    expect(steps).toContain(
      'Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests"',
    );
    expect(steps).toContain('gh workflow run ralph.yml');
    // Added to an existing install: only those steps.
    const later = gitdir();
    await runCli(['install'], { cwd: later });
    const added = strip((await runCli(['install', '--ci', 'github'], { cwd: later })).stdout);
    expect(added).toContain('Next, for the loop on GitHub Actions:');
    expect(added).not.toContain('git add');
  });

  it('adds the workflow as a managed file and records it in the manifest', async () => {
    const repo = await installedWithCi();
    expect(workflow(repo)).toBe(TEMPLATE);
    expect(manifest(repo)).toMatchObject({ ci: 'github', files: { [WORKFLOW]: { source: 'ralphkit' } } });
    const again = await runCli(['install'], { cwd: repo });
    expect(strip(again.stdout)).toMatch(/^Nothing to do: /);
  });

  it('a plain install upgrades a workflow left as an older ralphkit installed it', async () => {
    const repo = await installedWithCi();
    ageInstall(repo, { [WORKFLOW]: 'name: an older ralph workflow\n' });
    const r = await runCli(['install'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(strip(r.stdout)).toMatch(/^ {2}upgrade +\.github\/workflows\/ralph\.yml /m);
    expect(workflow(repo)).toBe(TEMPLATE);
    expect(manifest(repo).ci).toBe('github');
  });

  it('keeps a workflow the user edited: nothing newer is kept, a newer version is a conflict that writes nothing', async () => {
    const repo = await installedWithCi();
    const mine = `${TEMPLATE}# my schedule\n`;
    writeFileSync(path.join(repo, WORKFLOW), mine);
    const kept = await runCli(['install'], { cwd: repo });
    expect(kept.code, kept.stderr).toBe(0);
    expect(strip(kept.stdout)).toContain(`Kept your edited ${WORKFLOW}`);
    expect(workflow(repo)).toBe(mine);

    ageInstall(repo, {});
    const m = JSON.parse(readFileSync(path.join(repo, 'ralph/.ralphkit.json'), 'utf8'));
    m.files[WORKFLOW].sha256 = '0'.repeat(64);
    writeFileSync(path.join(repo, 'ralph/.ralphkit.json'), JSON.stringify(m));
    const conflict = await runCli(['install'], { cwd: repo });
    expect(conflict.code).toBe(2);
    expect(strip(conflict.stderr)).toContain(`${WORKFLOW}: edited since installed, and ralphkit ships a new version`);
    expect(workflow(repo)).toBe(mine);
  });

  it('--no-ci removes a workflow as installed, with the folders it leaves empty, and a plain install leaves it out', async () => {
    const repo = await installedWithCi();
    const r = await runCli(['install', '--no-ci'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(strip(r.stdout)).toMatch(/^ {2}remove +\.github\/workflows\/ralph\.yml /m);
    expect(existsSync(path.join(repo, '.github'))).toBe(false);
    expect(manifest(repo).ci).toBeUndefined();
    expect(manifest(repo).files).not.toHaveProperty([WORKFLOW]);
    const plain = await runCli(['install'], { cwd: repo });
    expect(strip(plain.stdout)).toMatch(/^Nothing to do: /);
    expect(existsSync(path.join(repo, WORKFLOW))).toBe(false);
  });

  it('--no-ci refuses to lose an edited workflow (exit 2, says what to type); --no-ci --force backs it up, then removes it', async () => {
    const repo = await installedWithCi();
    writeFiles(repo, { '.github/workflows/other.yml': 'name: theirs\n' });
    const mine = `${TEMPLATE}# my schedule\n`;
    writeFileSync(path.join(repo, WORKFLOW), mine);
    const refused = await runCli(['install', '--no-ci'], { cwd: repo });
    expect(refused.code).toBe(2);
    expect(strip(refused.stderr)).toContain('--no-ci --force` backs yours up to ralph/.backup/ and removes it');
    expect(workflow(repo)).toBe(mine);
    expect(manifest(repo).ci).toBe('github');

    const forced = await runCli(['install', '--no-ci', '--force'], { cwd: repo });
    expect(forced.code, forced.stderr).toBe(0);
    expect(existsSync(path.join(repo, WORKFLOW))).toBe(false);
    // The user's other workflow keeps its folder.
    expect(readFileSync(path.join(repo, '.github/workflows/other.yml'), 'utf8')).toBe('name: theirs\n');
    const backup = /saved to (ralph\/\.backup\/\S+)/.exec(strip(forced.stdout))?.[1];
    expect(backup && readFileSync(path.join(repo, backup), 'utf8')).toBe(mine);
    expect(manifest(repo).ci).toBeUndefined();
  });

  it('--no-ci leaves a ralph.yml that ralphkit never installed alone', async () => {
    const repo = gitdir({ [WORKFLOW]: 'name: my own ralph\n' });
    const r = await runCli(['install', '--no-ci'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(workflow(repo)).toBe('name: my own ralph\n');
  });

  it('refuses a CI system it does not know, naming the one it does', async () => {
    const r = await runCli(['install', '--ci', 'gitlab'], { cwd: gitdir() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("argument 'gitlab' is invalid. Allowed choices are github");
  });
});

describe('install --agent is remembered like --ci', () => {
  it('a plain install keeps the skill folders the last one used, upgrading them, and adds no others', async () => {
    const repo = gitdir();
    const first = await runCli(['install', '--agent', 'agents'], { cwd: repo });
    expect(first.code, first.stderr).toBe(0);
    expect(manifest(repo)).toMatchObject({ agents: ['agents'] });
    const skill = '.agents/skills/ralph/SKILL.md';
    const current = readFileSync(path.join(repo, skill), 'utf8');
    ageInstall(repo, { [skill]: '---\nname: ralph\ndescription: an older ralph skill\n---\n' });
    const plain = await runCli(['install'], { cwd: repo });
    expect(plain.code, plain.stderr).toBe(0);
    expect(strip(plain.stdout)).toMatch(/^ {2}upgrade +\.agents\/skills\/ralph\/SKILL\.md /m);
    expect(readFileSync(path.join(repo, skill), 'utf8')).toBe(current);
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
    // skill add goes to the same folders by default.
    writeFiles(repo, { 'notes.md': '# Review notes\n\nRead the diff twice.\n' });
    const added = await runCli(['skill', 'add', 'notes.md'], { cwd: repo });
    expect(added.code, added.stderr).toBe(0);
    expect(existsSync(path.join(repo, '.agents/skills/notes/SKILL.md'))).toBe(true);
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });
});
