// install trusts a shipped skill without parsing its YAML only when its bytes are the ones the build
// checked (src/install/sources.ts, CheckedSkills); what it installs is the same either way.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkShippedSkills, readInstallSources } from '../../../src/install/sources.js';
import { fakePackage } from '../../support/fake-package.js';
import { ROOT } from '../../support/repo.js';

describe('the skill check recorded at build time', () => {
  it("records both of ralphkit's own skills, by name and hash", async () => {
    const checked = await checkShippedSkills(path.join(ROOT, 'skills'));
    expect(Object.keys(checked).sort()).toEqual(['prd.md', 'ralph.md']);
    expect(checked['prd.md']).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), name: 'prd' });
    expect(checked['ralph.md'].name).toBe('ralph');
  });

  it.each([[['claude'] as const], [['agents'] as const], [['agents', 'claude'] as const]])(
    'installs the same files as the full check (--agent %j)',
    async (agents) => {
      const checkedSkills = await checkShippedSkills(path.join(ROOT, 'skills'));
      const trusted = await readInstallSources({ root: ROOT, agents, skills: true, checkedSkills });
      const checkedNow = await readInstallSources({ root: ROOT, agents, skills: true, checkedSkills: {} });
      expect(trusted).toEqual(checkedNow);
      expect(trusted.filter((f) => f.path.endsWith('SKILL.md')).length).toBe(2 * agents.length);
    },
  );

  it('leaves out a skill that needs filling in, so install fills it every time', async () => {
    // The fake package's ralph.md has no frontmatter: install fills in its name and description.
    const pkg = fakePackage();
    expect(Object.keys(await checkShippedSkills(path.join(pkg, 'skills')))).toEqual(['prd.md']);
    const files = await readInstallSources({
      root: pkg,
      agents: ['claude'],
      skills: true,
      checkedSkills: await checkShippedSkills(path.join(pkg, 'skills')),
    });
    expect(files.find((f) => f.path === '.claude/skills/ralph/SKILL.md')?.content.toString()).toMatch(
      /^---\nname: ralph\ndescription: Turn a PRD into ralph\/prd.json\n---\n/,
    );
  });

  it('checks a skill whose bytes differ from the recorded ones, and refuses it when it breaks the rules', async () => {
    const recorded = await checkShippedSkills(path.join(fakePackage(), 'skills'));
    const edited = fakePackage({
      'skills/prd.md': '---\nname: Not A Valid Name\ndescription: Write a PRD for a feature.\n---\n# PRD\n',
    });
    await expect(
      readInstallSources({ root: edited, agents: ['claude'], skills: true, checkedSkills: recorded }),
    ).rejects.toThrow(/own skill .*prd\.md breaks the Agent Skills rules/);
  });
});
